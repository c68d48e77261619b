package hnsw

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
)

// randomUnit returns n unit vectors with independent Gaussian components.
func randomUnit(rng *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		vector.Normalize(v)
		out[i] = v
	}
	return out
}

// clustered returns n data and nq query unit vectors drawn around the same k
// Gaussian centres: each point is a centre plus noise of a third of the
// centres' spread, so the clusters are tight and far apart, as embeddings of
// unrelated topics are.
func clustered(rng *rand.Rand, n, nq, dim, k int) (data, queries [][]float32) {
	centres := make([][]float32, k)
	for i := range centres {
		c := make([]float32, dim)
		for j := range c {
			c[j] = float32(rng.NormFloat64())
		}
		centres[i] = c
	}
	out := make([][]float32, n+nq)
	for i := range out {
		c := centres[rng.IntN(k)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(rng.NormFloat64()/3)
		}
		vector.Normalize(v)
		out[i] = v
	}
	return out[:n], out[n:]
}

// entries wraps vectors as entries with IDs 1..n spread over namespaces and
// pools: entry i is in namespace "ns<i%nss>" and pool driver.Pools[i%3].
func entries(vecs [][]float32, nss int) []driver.VectorEntry {
	es := make([]driver.VectorEntry, len(vecs))
	for i, v := range vecs {
		es[i] = driver.VectorEntry{
			ID:        int64(i + 1),
			Namespace: nsName(i % nss),
			Pool:      driver.Pools[i%len(driver.Pools)],
			Vector:    v,
		}
	}
	return es
}

func nsName(i int) string { return "ns" + string(rune('a'+i%26)) + string(rune('a'+i/26)) }

// bruteForce is the oracle for small tests: the k entries matching f nearest
// q, best first, ties by ascending ID, with vectors and query normalised as
// the index normalises them, so that scores agree to the bit.
func bruteForce(es []driver.VectorEntry, q []float32, k int, f driver.VectorFilter) []driver.Hit {
	var hits []driver.Hit
	qn, _ := unitCopy(q)
	for i := range es {
		if f.Match(&es[i]) {
			v, _ := unitCopy(es[i].Vector)
			hits = append(hits, driver.Hit{ID: es[i].ID, Score: float64(vector.Dot(qn, v))})
		}
	}
	slices.SortFunc(hits, func(a, b driver.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return hits[:min(k, len(hits))]
}

// recall is the fraction of want's IDs that got contains.
func recall(got, want []driver.Hit) float64 {
	if len(want) == 0 {
		return 1
	}
	in := make(map[int64]bool, len(want))
	for _, h := range want {
		in[h.ID] = true
	}
	n := 0
	for _, h := range got {
		if in[h.ID] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / math.Max(1, float64(len(xs)))
}
