package hnsw

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
)

// recallSize is the number of vectors the recall tests index: 20k as the
// issue asks, but 2k under the race detector (a race-enabled build,
// race_on_test.go) or -short, where building 20k × 128 twice takes minutes.
// CI runs `go test -race`, so the 20k tests run in the plain `go test`.
func recallSize() (n, queries int) {
	if raceEnabled || testing.Short() {
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
