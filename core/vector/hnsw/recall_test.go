package hnsw

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/longtest"
	"github.com/memos-go/memos/core/vector"
)

// recallSize is the number of vectors the recall tests index: 20k with the
// long tests (MEMOS_TEST_LONG) and without the race detector, 2k otherwise,
// since building 20k × 128 twice takes minutes. .ci/run runs the 20k tests
// in a plain `go test` after the one with -race.
func recallSize() (n, queries int) {
	if raceEnabled || testing.Short() || !longtest.Enabled() {
		return 2000, 40
	}
	return 20000, 200
}

const recallDim = 128

// TestRecallRandom: recall@10 against the exact index at the default
// parameters on random unit vectors, the hardest case for a graph index
// (no structure to navigate by, distances concentrated).
func TestRecallRandom(t *testing.T) {
	n, nq := recallSize()
	rng := rand.New(rand.NewPCG(2024, 1))
	testRecall(t, randomUnit(rng, n, recallDim), randomUnit(rng, nq, recallDim))
}

// TestRecallClustered: the same on 50 Gaussian clusters, which is how text
// embeddings are distributed; also checks filtered searches through the
// graph walk.
func TestRecallClustered(t *testing.T) {
	n, nq := recallSize()
	rng := rand.New(rand.NewPCG(2024, 2))
	data, queries := clustered(rng, n, nq, recallDim, 50)
	ix, exact := testRecall(t, data, queries)

	// Filtered searches walking the graph, not scanning: a third of the
	// entries (a pool) and a tenth (a namespace).
	ix.mu.Lock()
	ix.cfg.ExactBelow = -1
	ix.mu.Unlock()
	for _, f := range []driver.VectorFilter{
		{Pools: []driver.Pool{driver.PoolMemory}},
		{Namespaces: []string{nsName(3)}},
	} {
		r := meanRecall(t, ix, exact, queries, f)
		t.Logf("filter %+v: recall@10 %.4f", f, r)
		if r < 0.95 {
			t.Errorf("filter %+v: recall@10 %.4f, want ≥ 0.95", f, r)
		}
	}
}

// testRecall indexes data in an HNSW index at the default parameters and in
// the exact index, and checks mean recall@10 over the queries.
func testRecall(t *testing.T, data, queries [][]float32) (*Index, *vector.Exact) {
	t.Helper()
	ctx := context.Background()
	es := entries(data, 10)
	ix := newIndex(t, recallDim, Config{})
	exact := vector.NewExact(recallDim)
	mustAdd(t, ix, es...)
	if err := exact.Add(ctx, es...); err != nil {
		t.Fatal(err)
	}
	r := meanRecall(t, ix, exact, queries, driver.VectorFilter{})
	t.Logf("n=%d dim=%d ef=%d: recall@10 %.4f", len(data), recallDim, DefaultEfSearch, r)
	if r < 0.95 {
		t.Errorf("recall@10 %.4f at the default parameters, want ≥ 0.95", r)
	}
	return ix, exact
}

func meanRecall(t *testing.T, ix *Index, exact *vector.Exact, queries [][]float32, f driver.VectorFilter) float64 {
	t.Helper()
	var rs []float64
	for _, q := range queries {
		want, err := exact.Search(context.Background(), q, 10, f)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, recall(mustSearch(t, ix, q, 10, f), want))
	}
	return mean(rs)
}

// TestRecallDuplicates: a store of conversation turns holds many identical
// texts ("ok", "thanks!", a pasted snippet), which embed to identical
// vectors. Here a third of the entries are exact copies of a few vectors, in
// groups of up to 200, shuffled among the others. A graph whose nodes link
// only to their copies (all as near as can be, so the neighbour heuristic
// kept them all) walls the copies off from the rest: a search that reaches
// them, or starts at one, cannot get out. Recall counts a hit whose score
// ties the k-th exact one as found, since which of equal copies is returned
// is arbitrary.
func TestRecallDuplicates(t *testing.T) {
	n, nq := recallSize()
	rng := rand.New(rand.NewPCG(2024, 3))
	data, queries := clustered(rng, n, nq, recallDim, 50)
	groups := n / 100
	for i := 0; i < n/3; i++ {
		data[i] = data[n-1-i%groups] // groups of n/300 copies
	}
	rng.Shuffle(len(data), func(i, j int) { data[i], data[j] = data[j], data[i] })
	// Half the queries sit on a duplicated vector, half anywhere.
	for i := 0; i < nq/2; i++ {
		queries[i] = data[rng.IntN(n)]
	}
	ctx := context.Background()
	es := entries(data, 1)
	exact := vector.NewExact(recallDim)
	if err := exact.Add(ctx, es...); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		ix := newIndex(t, recallDim, Config{Workers: workers})
		mustAdd(t, ix, es...)
		var rs []float64
		for _, q := range queries {
			want, err := exact.Search(ctx, q, 10, driver.VectorFilter{})
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, tieRecall(mustSearch(t, ix, q, 10, driver.VectorFilter{}), want))
		}
		r := mean(rs)
		t.Logf("workers %d: n=%d, %d duplicated: recall@10 %.4f", workers, n, n/3, r)
		if r < 0.95 {
			t.Errorf("workers %d: recall@10 %.4f with many duplicates, want ≥ 0.95", workers, r)
		}
	}
}

// tieRecall is recall@k that counts a hit scoring at least the k-th exact
// hit as found (a copy of a vector in want, or an exact tie).
func tieRecall(got, want []driver.Hit) float64 {
	if len(want) == 0 {
		return 1
	}
	floor := want[len(want)-1].Score - 1e-6
	in := make(map[int64]bool, len(want))
	for _, h := range want {
		in[h.ID] = true
	}
	n := 0
	for _, h := range got {
		if in[h.ID] || h.Score >= floor {
			n++
		}
	}
	return float64(min(n, len(want))) / float64(len(want))
}
