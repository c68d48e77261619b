package vector_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/core/vector/vectortest"
)

func TestExactConformance(t *testing.T) {
	vectortest.Run(t, func(dim int) driver.VectorIndex { return vector.NewExact(dim) }, true)
}

// TestExactConformanceInt8: at Int8 the exact index's scores are within a few
// thousandths of the cosine similarity (the kit's vectors have 8 to 64
// dimensions, where rounding to 8 bits costs more than at 256).
func TestExactConformanceInt8(t *testing.T) {
	vectortest.RunReduced(t, func(dim int) driver.VectorIndex { return vector.NewExactPrecision(dim, vector.Int8) }, int8Eps)
}

// int8Eps bounds how far an Int8 score may be from the cosine similarity
// in the tests.
const int8Eps = 0.02

func TestNewExactRejectsBadDim(t *testing.T) {
	for _, dim := range []int{0, -3} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewExact(%d) did not panic", dim)
				}
			}()
			vector.NewExact(dim)
		}()
	}
	if d := vector.NewExact(7).Dim(); d != 7 {
		t.Fatalf("Dim() = %d, want 7", d)
	}
}

// TestSelfScoreIsOne checks that stored vectors are normalised: a vector
// searched for itself scores 1 whatever its length.
func TestSelfScoreIsOne(t *testing.T) {
	x := vector.NewExact(3)
	ctx := context.Background()
	vs := [][]float32{{300, 400, 0}, {1e-20, 0, 1e-20}, {-2, 7, 1}}
	for i, v := range vs {
		if err := x.Add(ctx, driver.VectorEntry{ID: int64(i + 1), Namespace: "default", Pool: driver.PoolRaw, Vector: v}); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range vs {
		hits, err := x.Search(ctx, v, 1, driver.VectorFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if hits[0].ID != int64(i+1) || math.Abs(hits[0].Score-1) > 1e-6 {
			t.Fatalf("searching for %v: %v, want id %d with score 1", v, hits, i+1)
		}
	}
}

// TestTinyVectors checks vectors too short to scale in float32: they are
// rejected instead of being stored as infinities.
func TestTinyVectors(t *testing.T) {
	x := vector.NewExact(3)
	ctx := context.Background()
	tiny := []float32{1e-45, 0, 0} // the smallest float32
	if err := x.Add(ctx, driver.VectorEntry{ID: 1, Namespace: "default", Pool: driver.PoolRaw, Vector: tiny}); err == nil {
		hits, err := x.Search(ctx, []float32{1, 0, 0}, 1, driver.VectorFilter{})
		if err != nil || len(hits) != 1 || !(math.Abs(hits[0].Score-1) <= 1e-6) {
			t.Fatalf("tiny vector accepted, but searching for it gives %v, %v", hits, err)
		}
	} else if !errors.Is(err, driver.ErrInvalid) {
		t.Fatalf("Add of a tiny vector: %v, want success or ErrInvalid", err)
	}
	if _, err := x.Search(ctx, tiny, 1, driver.VectorFilter{}); err != nil && !errors.Is(err, driver.ErrInvalid) {
		t.Fatalf("Search with a tiny query: %v, want success or ErrInvalid", err)
	}
}

func TestDimensionErrorMessage(t *testing.T) {
	x := vector.NewExact(384)
	err := x.Add(context.Background(), driver.VectorEntry{ID: 9, Namespace: "default", Pool: driver.PoolRaw, Vector: make([]float32, 256)})
	if !errors.Is(err, driver.ErrDimensionMismatch) {
		t.Fatalf("error %v, want ErrDimensionMismatch", err)
	}
	const want = "vector add id 9: embedding dimension mismatch: vector has 256 dimensions, the index has 384 (re-embed with the store's model or rebuild the index)"
	if err.Error() != want {
		t.Fatalf("error message\n got  %q\n want %q", err, want)
	}
}

// countingCtx is a context whose Err starts to report cancellation after a
// number of calls, to cancel a scan at a deterministic point.
type countingCtx struct {
	context.Context
	calls, after atomic.Int64
}

func (c *countingCtx) Err() error {
	if c.calls.Add(1) > c.after.Load() {
		return context.Canceled
	}
	return nil
}

func TestSearchStopsWhenCancelledMidScan(t *testing.T) {
	const n, dim = 50_000, 8
	x := vector.NewExact(dim)
	r := rand.New(rand.NewPCG(1, 2))
	es := make([]driver.VectorEntry, n)
	for i := range es {
		v := make([]float32, dim)
		for j := range v {
			v[j] = r.Float32() - 0.5
		}
		es[i] = driver.VectorEntry{ID: int64(i + 1), Namespace: "default", Pool: driver.PoolMemory, Vector: v}
	}
	if err := x.Add(context.Background(), es...); err != nil {
		t.Fatal(err)
	}
	ctx := &countingCtx{Context: context.Background()}
	ctx.after.Store(2) // the check on entry and one during the scan pass
	_, err := x.Search(ctx, es[0].Vector, 10, driver.VectorFilter{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Search cancelled during its scan: error %v, want context.Canceled", err)
	}
	if c := ctx.calls.Load(); c != 3 {
		t.Fatalf("Search checked its context %d times before stopping, want 3", c)
	}
}

// TestShrinkAfterRemovals checks that the index stays correct when its
// storage is compacted after most entries are removed.
func TestShrinkAfterRemovals(t *testing.T) {
	const n, dim = 5000, 4
	ctx := context.Background()
	x := vector.NewExact(dim)
	for i := range n {
		v := []float32{float32(i%7) + 1, float32(i%11) - 5, float32(i % 13), 1}
		ns := fmt.Sprintf("run:%d", i%50)
		if err := x.Add(ctx, driver.VectorEntry{ID: int64(i), Namespace: ns, Pool: driver.PoolRaw, Vector: v}); err != nil {
			t.Fatal(err)
		}
	}
	var gone []int64
	for i := range n {
		if i%20 != 0 {
			gone = append(gone, int64(i))
		}
	}
	if err := x.Remove(ctx, gone...); err != nil {
		t.Fatal(err)
	}
	if got := x.Len(); got != n/20 {
		t.Fatalf("Len() = %d, want %d", got, n/20)
	}
	// Every survivor is found by its own vector in its own namespace; ids
	// with the same vector tie, so search all of them.
	for i := 0; i < n; i += 20 {
		v := []float32{float32(i%7) + 1, float32(i%11) - 5, float32(i % 13), 1}
		f := driver.VectorFilter{Namespaces: []string{fmt.Sprintf("run:%d", i%50)}}
		hits, err := x.Search(ctx, v, n, f)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range hits {
			if h.ID%20 != 0 || int(h.ID)%50 != i%50 {
				t.Fatalf("hit %v is a removed id or outside namespace run:%d", h, i%50)
			}
			found = found || h.ID == int64(i)
		}
		if !found || math.Abs(hits[0].Score-1) > 1e-6 {
			t.Fatalf("survivor %d not found in %v", i, hits)
		}
	}
}

func randomEntries(n, dim int, seed uint64) []driver.VectorEntry {
	r := rand.New(rand.NewPCG(seed, seed))
	nss := []string{"default", "user:alice", "project:memos", "agent:a1"}
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(r.NormFloat64())
	}
	es := make([]driver.VectorEntry, n)
	for i := range es {
		es[i] = driver.VectorEntry{ID: int64(i + 1), Namespace: nss[i%len(nss)], Pool: driver.Pools[i%3], Vector: data[i*dim : (i+1)*dim]}
	}
	return es
}

// BenchmarkSearch scans float32 rows (n=…/dim=…/filter) and int8 rows
// (n=…/dim=…/int8/filter).
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	for _, dim := range []int{256, 384} {
		for _, n := range []int{10_000, 100_000} {
			es := randomEntries(n, dim, 1)
			q := randomEntries(1, dim, 2)[0].Vector
			for _, p := range []vector.Precision{vector.Float32, vector.Int8} {
				x := vector.NewExactPrecision(dim, p)
				if err := x.Add(ctx, es...); err != nil {
					b.Fatal(err)
				}
				prec := ""
				if p != vector.Float32 {
					prec = "/" + p.String()
				}
				for _, c := range []struct {
					name string
					f    driver.VectorFilter
				}{
					{"all", driver.VectorFilter{}},
					{"ns+pool", driver.VectorFilter{Namespaces: []string{"user:alice", "default"}, Pools: []driver.Pool{driver.PoolMemory}}},
				} {
					b.Run(fmt.Sprintf("n=%d/dim=%d%s/%s", n, dim, prec, c.name), func(b *testing.B) {
						for b.Loop() {
							if _, err := x.Search(ctx, q, 10, c.f); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		}
	}
}

// BenchmarkAdd loads 10k vectors into a new index per op, one per Add call
// (as the engine does while ingesting) or in batches of 1000 (as it does when
// it rebuilds the index from the store), and reports vectors/s.
func BenchmarkAdd(b *testing.B) {
	ctx := context.Background()
	const n = 10_000
	for _, dim := range []int{256, 384} {
		es := randomEntries(n, dim, 3)
		for _, batch := range []int{1, 1000} {
			b.Run(fmt.Sprintf("dim=%d/batch=%d", dim, batch), func(b *testing.B) {
				for b.Loop() {
					x := vector.NewExact(dim)
					for i := 0; i < n; i += batch {
						if err := x.Add(ctx, es[i:i+batch]...); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "vectors/s")
			})
		}
	}
	// An engine opening a store without a snapshot fills its empty index
	// in one call.
	const fill = 100_000
	es := randomEntries(fill, 256, 5)
	b.Run("dim=256/fill=100000", func(b *testing.B) {
		for b.Loop() {
			if err := vector.NewExact(256).Add(ctx, es...); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(fill*b.N)/b.Elapsed().Seconds(), "vectors/s")
	})
}

// A large index is scanned in parallel parts; the merged top k must equal a
// sequential scan's, ties by id included.
func TestParallelScanMatchesSequential(t *testing.T) {
	ctx := context.Background()
	const n, dim, k = 12_000, 256, 25 // 3M floats: above the parallel threshold
	x := vector.NewExact(dim)
	es := randomEntries(n, dim, 7)
	// Duplicate vectors make exact ties that must be broken by id.
	for i := 0; i < 200; i++ {
		es[n-1-i].Vector = es[i].Vector
	}
	if err := x.Add(ctx, es...); err != nil {
		t.Fatal(err)
	}
	for qi, q := range []([]float32){es[3].Vector, randomEntries(1, dim, 9)[0].Vector} {
		got, err := x.Search(ctx, q, k, driver.VectorFilter{})
		if err != nil {
			t.Fatal(err)
		}
		qn := slices.Clone(q)
		vector.Normalize(qn)
		type hit struct {
			id int64
			s  float32
		}
		var all []hit
		for _, e := range es {
			v := slices.Clone(e.Vector)
			vector.Normalize(v)
			all = append(all, hit{e.ID, vector.Dot(v, qn)})
		}
		slices.SortFunc(all, func(a, b hit) int {
			if a.s != b.s {
				if a.s > b.s {
					return -1
				}
				return 1
			}
			return int(a.id - b.id)
		})
		for i := range k {
			if got[i].ID != all[i].id {
				t.Fatalf("query %d, rank %d: got id %d, sequential scan has %d", qi, i, got[i].ID, all[i].id)
			}
		}
	}
}
