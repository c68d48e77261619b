package vecsync

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
)

// checkRecall compares the approximate index's top 10 with the exact
// one's: an index that holds only half the vectors finds about half.
func TestCheckRecall(t *testing.T) {
	ctx := context.Background()
	const n, dim = 400, 16
	rng := rand.New(rand.NewPCG(3, 4))
	full, half := vector.NewExact(dim), vector.NewExact(dim)
	var es []driver.VectorEntry
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		e := driver.VectorEntry{ID: int64(i + 1), Namespace: driver.DefaultNamespace, Pool: driver.PoolMemory, Vector: v}
		es = append(es, e)
		if err := full.Add(ctx, e); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := half.Add(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := &sampler{VectorIndex: vector.NewExact(dim), keep: 50}
	if err := s.Add(ctx, es...); err != nil {
		t.Fatal(err)
	}
	if len(s.vecs) != 50 || s.seen != n {
		t.Fatalf("sampler kept %d of %d, want 50 of %d", len(s.vecs), s.seen, n)
	}
	same, err := checkRecall(ctx, full, full, s.vecs)
	if err != nil || same.Recall != 1 || same.Queries != 50 {
		t.Fatalf("an index against itself: %+v, %v; want recall 1 over 50 queries", same, err)
	}
	got, err := checkRecall(ctx, full, half, s.vecs)
	if err != nil {
		t.Fatal(err)
	}
	if got.Recall < 0.3 || got.Recall > 0.7 {
		t.Fatalf("half the vectors: recall %.3f, want about 0.5", got.Recall)
	}
	if none, err := checkRecall(ctx, full, half, nil); err != nil || none.Recall != 1 {
		t.Fatalf("no samples: %+v, %v; want recall 1", none, err)
	}
}
