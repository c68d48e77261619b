package vector_test

import (
	"math/rand/v2"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/core/vector/hnsw"
)

// TestMemoryBytes checks that each index's estimate covers at least its
// vectors and stays within a sane factor of them.
func TestMemoryBytes(t *testing.T) {
	const n, dim = 2000, 64
	rng := rand.New(rand.NewPCG(1, 2))
	es := make([]driver.VectorEntry, n)
	for i := range es {
		v := make([]float32, dim)
		var s float32
		for j := range v {
			v[j] = float32(rng.NormFloat64())
			s += v[j] * v[j]
		}
		for j := range v {
			v[j] /= sqrt(s)
		}
		es[i] = driver.VectorEntry{ID: int64(i + 1), Namespace: "default", Pool: driver.PoolMemory, Vector: v}
	}
	h, err := hnsw.New(dim, hnsw.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for name, ix := range map[string]driver.VectorIndex{"exact": vector.NewExact(dim), "hnsw": h} {
		sz, ok := ix.(driver.VectorIndexSizer)
		if !ok {
			t.Fatalf("%s does not estimate its memory", name)
		}
		empty := sz.MemoryBytes()
		if err := ix.Add(t.Context(), es...); err != nil {
			t.Fatal(err)
		}
		got, vecs := sz.MemoryBytes(), int64(n*dim*4)
		if got < vecs || got > 4*vecs || got <= empty {
			t.Errorf("%s: %d bytes for %d vectors of %d bytes (empty: %d)", name, got, n, dim*4, empty)
		}
		t.Logf("%s: %.0f bytes per entry (vector %d)", name, float64(got)/n, dim*4)
	}
}

func sqrt(x float32) float32 {
	z := x
	for range 30 {
		z = (z + x/z) / 2
	}
	return z
}
