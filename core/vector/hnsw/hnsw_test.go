package hnsw

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

func newIndex(t testing.TB, dim int, cfg Config) *Index {
	t.Helper()
	ix, err := New(dim, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func mustAdd(t testing.TB, ix *Index, es ...driver.VectorEntry) {
	t.Helper()
	if err := ix.Add(context.Background(), es...); err != nil {
		t.Fatal(err)
	}
}

func mustSearch(t testing.TB, ix *Index, q []float32, k int, f driver.VectorFilter) []driver.Hit {
	t.Helper()
	hits, err := ix.Search(context.Background(), q, k, f)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func ids(hits []driver.Hit) []int64 {
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestConfig(t *testing.T) {
	ix := newIndex(t, 3, Config{})
	want := Config{M: DefaultM, EfConstruction: DefaultEfConstruction, EfSearch: DefaultEfSearch,
		RepairFraction: DefaultRepairFraction}
	if got := ix.Config(); got != want {
		t.Fatalf("zero Config became %+v, want %+v", got, want)
	}
	for _, c := range []Config{
		{M: 1}, {M: -3}, {M: maxM + 1}, {EfConstruction: -1}, {EfSearch: maxEf + 1},
		{RepairFraction: -0.1}, {RepairFraction: 1.5}, {RepairFraction: math.NaN()}, {ExactBelow: 1 << 40},
	} {
		if _, err := New(3, c); !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("New(3, %+v) = %v, want ErrInvalid", c, err)
		}
	}
	for _, dim := range []int{0, -1, maxDim + 1} {
		if _, err := New(dim, Config{}); !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("New(%d, Config{}) = %v, want ErrInvalid", dim, err)
		}
	}
}

// TestSmallIsExact: with fewer entries than ef the search sees every node,
// so it must agree exactly with brute force, order and ties included.
func TestSmallIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	vecs := randomUnit(rng, 60, 16)
	vecs = append(vecs, vecs[3], vecs[3]) // duplicates: ties broken by ID
	es := entries(vecs, 3)
	ix := newIndex(t, 16, Config{})
	mustAdd(t, ix, es...)
	checkInvariants(t, ix)
	if ix.Len() != len(es) {
		t.Fatalf("Len = %d, want %d", ix.Len(), len(es))
	}
	for _, q := range append(randomUnit(rng, 10, 16), vecs[3]) {
		for _, k := range []int{1, 5, 10, 100} {
			got := mustSearch(t, ix, q, k, driver.VectorFilter{})
			want := bruteForce(es, q, k, driver.VectorFilter{})
			if !slices.Equal(got, want) {
				t.Fatalf("k=%d: got %v, want %v", k, got, want)
			}
		}
	}
	got := mustSearch(t, ix, vecs[3], 3, driver.VectorFilter{})
	if want := []int64{4, 61, 62}; !slices.Equal(ids(got), want) {
		t.Fatalf("duplicates: got %v, want ids %v", got, want)
	}
	if got[0].Score < 0.9999 {
		t.Fatalf("self score %v, want 1", got[0].Score)
	}
}

func TestEmptyAndEdgeCases(t *testing.T) {
	ctx := context.Background()
	ix := newIndex(t, 2, Config{})
	if hits, err := ix.Search(ctx, []float32{1, 0}, 10, driver.VectorFilter{}); err != nil || hits == nil || len(hits) != 0 {
		t.Fatalf("search on empty index = %#v, %v; want an empty slice", hits, err)
	}
	if err := ix.Remove(ctx, 1, 2); err != nil {
		t.Fatalf("removing unknown ids: %v", err)
	}
	if err := ix.Add(ctx); err != nil {
		t.Fatalf("empty Add: %v", err)
	}
	mustAdd(t, ix, driver.VectorEntry{ID: 1, Vector: []float32{3, 4}}) // not unit: normalised
	hits := mustSearch(t, ix, []float32{6, 8}, 1, driver.VectorFilter{})
	if len(hits) != 1 || hits[0].ID != 1 || math.Abs(hits[0].Score-1) > 1e-6 {
		t.Fatalf("got %v, want id 1 with cosine 1", hits)
	}
	for _, k := range []int{0, -1} {
		if hits := mustSearch(t, ix, []float32{0.6, 0.8}, k, driver.VectorFilter{}); len(hits) != 0 {
			t.Fatalf("k=%d returned %v", k, hits)
		}
	}
	for _, q := range [][]float32{{1, 0, 0}, {1}, nil} {
		if _, err := ix.Search(ctx, q, 1, driver.VectorFilter{}); !errors.Is(err, driver.ErrDimensionMismatch) {
			t.Fatalf("query %v: %v, want ErrDimensionMismatch", q, err)
		}
	}
	for _, q := range [][]float32{{float32(math.NaN()), 0}, {0, 0}, {float32(math.Inf(-1)), 1}} {
		if _, err := ix.Search(ctx, q, 1, driver.VectorFilter{}); !errors.Is(err, driver.ErrInvalid) {
			t.Fatalf("query %v: %v, want ErrInvalid", q, err)
		}
	}
	// A bad entry anywhere in a batch rejects the whole batch.
	good := driver.VectorEntry{ID: 2, Vector: []float32{1, 0}}
	for _, v := range [][]float32{{1, 0, 0}, {1}, {}} {
		err := ix.Add(ctx, good, driver.VectorEntry{ID: 3, Vector: v})
		if !errors.Is(err, driver.ErrDimensionMismatch) {
			t.Fatalf("Add with vector %v = %v, want ErrDimensionMismatch", v, err)
		}
	}
	for _, v := range [][]float32{{0, 0}, {float32(math.Inf(1)), 0}, {float32(math.NaN()), 1}} {
		if err := ix.Add(ctx, good, driver.VectorEntry{ID: 3, Vector: v}); !errors.Is(err, driver.ErrInvalid) {
			t.Fatalf("Add with vector %v = %v, want ErrInvalid", v, err)
		}
	}
	if ix.Len() != 1 {
		t.Fatalf("rejected batches changed Len to %d", ix.Len())
	}
	// The caller's vectors are copied, the query is not modified.
	v := []float32{1, 0}
	mustAdd(t, ix, driver.VectorEntry{ID: 4, Vector: v})
	v[0], v[1] = 0, 1
	q := []float32{2, 0}
	if hits := mustSearch(t, ix, q, 1, driver.VectorFilter{}); hits[0].ID != 4 || hits[0].Score != 1 {
		t.Fatalf("index did not copy the vector: %v", hits)
	}
	if q[0] != 2 {
		t.Fatalf("Search modified the query: %v", q)
	}
	checkInvariants(t, ix)
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ix := newIndex(t, 2, Config{})
	e := driver.VectorEntry{ID: 1, Vector: []float32{1, 0}}
	if err := ix.Add(ctx, e); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add: %v", err)
	}
	mustAdd(t, ix, e)
	if _, err := ix.Search(ctx, []float32{1, 0}, 1, driver.VectorFilter{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Search: %v", err)
	}
	if err := ix.Remove(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Remove: %v", err)
	}
	if ix.Len() != 1 {
		t.Fatalf("cancelled calls changed the index")
	}
}

func TestReplace(t *testing.T) {
	ix := newIndex(t, 3, Config{RepairFraction: 1})
	a, b := []float32{1, 0, 0}, []float32{0, 1, 0}
	mustAdd(t, ix, driver.VectorEntry{ID: 1, Namespace: "x", Pool: driver.PoolRaw, Vector: a},
		driver.VectorEntry{ID: 2, Namespace: "x", Pool: driver.PoolRaw, Vector: []float32{0, 0, 1}})

	// Same vector, new attributes: no tombstone, the filter follows.
	mustAdd(t, ix, driver.VectorEntry{ID: 1, Namespace: "y", Pool: driver.PoolMemory, Vector: a})
	if st := ix.Stats(); st.Live != 2 || st.Tombstones != 0 {
		t.Fatalf("attribute change: %+v", st)
	}
	if hits := mustSearch(t, ix, a, 5, driver.VectorFilter{Namespaces: []string{"x"}}); !slices.Equal(ids(hits), []int64{2}) {
		t.Fatalf("namespace x after move: %v", hits)
	}
	if hits := mustSearch(t, ix, a, 5, driver.VectorFilter{Pools: []driver.Pool{driver.PoolMemory}}); !slices.Equal(ids(hits), []int64{1}) {
		t.Fatalf("pool memory after move: %v", hits)
	}

	// New vector: the old node becomes a tombstone and is never returned.
	mustAdd(t, ix, driver.VectorEntry{ID: 1, Namespace: "y", Pool: driver.PoolMemory, Vector: b})
	if st := ix.Stats(); st.Live != 2 || st.Tombstones != 1 {
		t.Fatalf("vector change: %+v", st)
	}
	hits := mustSearch(t, ix, a, 5, driver.VectorFilter{})
	if len(hits) != 2 || hits[0].Score > 0.5 {
		t.Fatalf("old vector still found: %v", hits)
	}
	if hits := mustSearch(t, ix, b, 1, driver.VectorFilter{}); hits[0].ID != 1 || hits[0].Score != 1 {
		t.Fatalf("new vector not found: %v", hits)
	}
	checkInvariants(t, ix)
}

func TestRemoveAndRepair(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	const n, dim = 1200, 16
	data, queries := clustered(rng, n, 30, dim, 20)
	es := entries(data, 4)
	ix := newIndex(t, dim, Config{EfConstruction: 100, RepairFraction: 0.2})
	mustAdd(t, ix, es...)
	checkInvariants(t, ix)

	removed := map[int64]bool{}
	order := rng.Perm(n)
	for step := 0; step < 5; step++ {
		// Remove 10% of the original entries per step: the first step stays
		// under the threshold, later ones cross it and repair.
		var batch []int64
		for _, i := range order[step*n/10 : (step+1)*n/10] {
			batch = append(batch, es[i].ID)
			removed[es[i].ID] = true
		}
		if err := ix.Remove(ctx, batch...); err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, ix)
		st := ix.Stats()
		if st.Live != n-len(removed) {
			t.Fatalf("step %d: Len %d, want %d", step, st.Live, n-len(removed))
		}
		if float64(st.Tombstones) > 0.2*float64(st.Live+st.Tombstones) {
			t.Fatalf("step %d: %d tombstones for %d live: repair did not run", step, st.Tombstones, st.Live)
		}
		if step == 0 && st.Tombstones != n/10 {
			t.Fatalf("step 0: %d tombstones, want %d (below the repair threshold)", st.Tombstones, n/10)
		}
		var live []driver.VectorEntry
		for _, e := range es {
			if !removed[e.ID] {
				live = append(live, e)
			}
		}
		var rs []float64
		for _, q := range queries {
			got := mustSearch(t, ix, q, 10, driver.VectorFilter{})
			for _, h := range got {
				if removed[h.ID] {
					t.Fatalf("step %d: removed id %d returned", step, h.ID)
				}
			}
			rs = append(rs, recall(got, bruteForce(live, q, 10, driver.VectorFilter{})))
		}
		if r := mean(rs); r < 0.95 {
			t.Fatalf("step %d: recall@10 %.3f after removing %d of %d", step, r, len(removed), n)
		}
	}
	if st := ix.Stats(); st.Free == 0 {
		t.Fatalf("repair freed no slots: %+v", st)
	}

	// Freed slots are reused, and the re-added entries are found again.
	slots := len(ix.nodes)
	var back []driver.VectorEntry
	for _, e := range es {
		if removed[e.ID] {
			back = append(back, e)
		}
	}
	mustAdd(t, ix, back[:ix.Stats().Free]...)
	checkInvariants(t, ix)
	if len(ix.nodes) != slots || ix.Stats().Free != 0 {
		t.Fatalf("re-adding into free slots grew the arrays from %d to %d (free %d)", slots, len(ix.nodes), ix.Stats().Free)
	}
	for _, e := range back[:10] {
		if hits := mustSearch(t, ix, e.Vector, 1, driver.VectorFilter{}); hits[0].ID != e.ID {
			t.Fatalf("re-added %d not found first: %v", e.ID, hits)
		}
	}

	// Removing everything empties the graph; it can be rebuilt.
	all := make([]int64, 0, n)
	for _, e := range es {
		all = append(all, e.ID)
	}
	if err := ix.Remove(ctx, all...); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, ix)
	if st := ix.Stats(); st.Live != 0 || st.Tombstones != 0 || st.Levels != 0 {
		t.Fatalf("after removing all: %+v", st)
	}
	mustAdd(t, ix, es[:100]...)
	checkInvariants(t, ix)
	if hits := mustSearch(t, ix, es[5].Vector, 1, driver.VectorFilter{}); hits[0].ID != es[5].ID {
		t.Fatalf("rebuilt index: %v", hits)
	}
}

// TestRepairExplicit: Repair removes every tombstone at once, whatever their
// number, and leaves no link to a removed node.
func TestRepairExplicit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	es := entries(randomUnit(rng, 800, 16), 1)
	ix := newIndex(t, 16, Config{M: 6, RepairFraction: 1})
	mustAdd(t, ix, es...)
	var gone []int64
	for i := 0; i < len(es); i += 3 {
		gone = append(gone, es[i].ID)
	}
	if err := ix.Remove(context.Background(), gone...); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Tombstones != len(gone) {
		t.Fatalf("RepairFraction 1 repaired early: %+v", st)
	}
	ix.Repair()
	checkInvariants(t, ix)
	if st := ix.Stats(); st.Tombstones != 0 || st.Free != len(gone) {
		t.Fatalf("after Repair: %+v", st)
	}
}

func TestFilteredSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, dim = 1500, 16
	// 20 namespaces over 3 pools: a namespace is 5%, a pool a third, one
	// namespace in one pool 1.7%.
	data, qs := clustered(rng, n, 25, dim, 30)
	es := entries(data, 20)
	filters := []driver.VectorFilter{
		{},
		{Pools: []driver.Pool{driver.PoolMemory}},
		{Namespaces: []string{nsName(0), nsName(1), nsName(2), nsName(3)}},
		{Namespaces: []string{nsName(7)}},
		{Namespaces: []string{nsName(7)}, Pools: []driver.Pool{driver.PoolRaw}},
		{Namespaces: []string{nsName(1), "nope"}, Pools: []driver.Pool{driver.PoolKnowledge, "nope"}},
	}
	// ExactBelow 0 scans the selective filters, -1 walks the graph for all.
	for _, exactBelow := range []int{0, -1} {
		ix := newIndex(t, dim, Config{EfConstruction: 100, ExactBelow: exactBelow})
		mustAdd(t, ix, es...)
		for fi, f := range filters {
			var rs []float64
			for _, q := range qs {
				got := mustSearch(t, ix, q, 10, f)
				want := bruteForce(es, q, 10, f)
				if len(got) != len(want) {
					t.Fatalf("ExactBelow %d, filter %d: %d hits, want %d", exactBelow, fi, len(got), len(want))
				}
				for _, h := range got {
					if !f.Match(&es[h.ID-1]) {
						t.Fatalf("filter %d returned non-matching id %d", fi, h.ID)
					}
				}
				if exactBelow == 0 && fi >= 3 && !slices.Equal(got, want) {
					// A filter matching few entries is answered by an exact scan.
					t.Fatalf("filter %d (scanned): got %v, want %v", fi, got, want)
				}
				rs = append(rs, recall(got, want))
			}
			if r := mean(rs); r < 0.95 {
				t.Errorf("ExactBelow %d, filter %d: recall@10 %.3f", exactBelow, fi, r)
			}
		}
		// Filters that match nothing.
		for _, f := range []driver.VectorFilter{
			{Namespaces: []string{}}, {Pools: []driver.Pool{}}, {Namespaces: []string{"nope"}},
		} {
			if hits := mustSearch(t, ix, qs[0], 10, f); len(hits) != 0 {
				t.Fatalf("filter %+v matched %v", f, hits)
			}
		}
	}
}

// TestFilterFewMatches: a filter matching fewer entries than k returns all of
// them, by scan or by walking the whole graph.
func TestFilterFewMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	es := entries(randomUnit(rng, 600, 16), 1)
	for i := 0; i < len(es); i += 120 {
		es[i].Namespace = "rare"
	}
	f := driver.VectorFilter{Namespaces: []string{"rare"}}
	for _, exactBelow := range []int{0, -1} {
		ix := newIndex(t, 16, Config{EfConstruction: 100, ExactBelow: exactBelow})
		mustAdd(t, ix, es...)
		q := randomUnit(rng, 1, 16)[0]
		if got, want := mustSearch(t, ix, q, 10, f), bruteForce(es, q, 10, f); !slices.Equal(got, want) {
			t.Fatalf("ExactBelow %d: got %v, want %v", exactBelow, got, want)
		}
	}
}

func TestDeterministicBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	es := entries(randomUnit(rng, 900, 24), 5)
	build := func(seed uint64) []byte {
		ix := newIndex(t, 24, Config{Seed: seed, M: 8, EfConstruction: 64, RepairFraction: 0.004, Workers: 1})
		mustAdd(t, ix, es[:600]...)
		if err := ix.Remove(context.Background(), 5, 50, 500); err != nil {
			t.Fatal(err)
		}
		mustAdd(t, ix, es[600:]...)
		return saveBytes(t, ix)
	}
	a, b, c := build(1), build(1), build(2)
	if !slices.Equal(a, b) {
		t.Fatal("two builds with the same seed and inputs differ")
	}
	if slices.Equal(a, c) {
		t.Fatal("builds with different seeds are identical; the seed is not used")
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	const dim = 16
	data, qs := clustered(rng, 1200, 20, dim, 10)
	es := entries(data, 3)
	ix := newIndex(t, dim, Config{M: 8, EfConstruction: 50, RepairFraction: 0.05})
	mustAdd(t, ix, es[:400]...)

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				f := driver.VectorFilter{}
				if i%2 == 0 {
					f.Namespaces = []string{nsName(w % 3)}
				}
				hits, err := ix.Search(ctx, qs[(w+i)%len(qs)], 5, f)
				if err != nil {
					errs <- err
					return
				}
				for _, h := range hits {
					if h.ID < 1 || h.ID > int64(len(es)) || !f.Match(&es[h.ID-1]) {
						errs <- errors.New("search returned an id it should not have")
						return
					}
				}
			}
		})
	}
	wg.Go(func() {
		for i := 400; i < len(es); i += 50 {
			if err := ix.Add(ctx, es[i:i+50]...); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Go(func() {
		for i := int64(1); i <= 300; i += 3 {
			if err := ix.Remove(ctx, i); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Between repairs, in-link counting keeps nodes reachable in nearly every
	// interleaving of inserts and deletes, but not all (about 1 run in 15 left
	// one of 1100 nodes cut off): reachability is guaranteed after a repair,
	// which Save also runs. Check the structure as Save would leave it.
	ix.Repair()
	checkInvariants(t, ix)
	if want := len(es) - 100; ix.Len() != want {
		t.Fatalf("Len %d, want %d", ix.Len(), want)
	}
}

// TestParallelBuild: a batch inserted by several goroutines at once gives a
// well-formed graph (every node reachable, in-link counts right, no
// duplicate or self links) whose recall matches a sequential build's.
func TestParallelBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const dim = 24
	data, qs := clustered(rng, 3000, 200, dim, 12)
	es := entries(data, 3)
	recallOf := func(ix *Index) float64 {
		var rs []float64
		for _, q := range qs {
			rs = append(rs, recall(mustSearch(t, ix, q, 10, driver.VectorFilter{}), bruteForce(es, q, 10, driver.VectorFilter{})))
		}
		return mean(rs)
	}
	seq := newIndex(t, dim, Config{M: 8, EfConstruction: 64, EfSearch: 32, Workers: 1})
	mustAdd(t, seq, es...)
	par := newIndex(t, dim, Config{M: 8, EfConstruction: 64, EfSearch: 32, Workers: 4})
	mustAdd(t, par, es...)
	checkInvariants(t, par)
	if par.Len() != len(es) {
		t.Fatalf("Len %d, want %d", par.Len(), len(es))
	}
	rs, rp := recallOf(seq), recallOf(par)
	t.Logf("recall@10 at ef 32: sequential %.4f, 4 workers %.4f", rs, rp)
	if rp < rs-0.05 { // the parallel graph varies from run to run
		t.Fatalf("parallel build recall %.4f, sequential %.4f", rp, rs)
	}
}
