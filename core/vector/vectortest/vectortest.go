// Package vectortest is the conformance kit for driver.VectorIndex
// implementations. An index's whole conformance test is one call:
//
//	func TestConformance(t *testing.T) {
//		vectortest.Run(t, func(dim int) driver.VectorIndex { return myindex.New(dim) }, false)
//	}
//
// Run checks the contract every index must keep: Add replaces by ID and
// copies vectors, Remove ignores unknown IDs, filters follow
// driver.VectorFilter.Match (a nil list places no restriction, an empty list
// matches nothing), results are sorted by score and then by ascending ID,
// a vector or query of another dimension is an error wrapping
// driver.ErrDimensionMismatch that names both dimensions (and a failed Add adds
// nothing), a cancelled context is honoured, k ≤ 0 gives no hits, and the
// index is safe for concurrent use (run with -race).
//
// Scores must be cosine similarities. The fixtures are unit vectors, as the
// engine passes, except in two cases: CosineScores adds vectors of other
// lengths and expects them ranked by angle, and InvalidVectors expects zero
// and non-finite vectors (entries or queries) to be ErrInvalid errors and a
// failed Add to add nothing.
//
// An exact index (exact=true) must return the same results as a float64
// brute-force reference, up to float32 rounding. An approximate index must
// reach RecallThreshold against that reference, also under filters, and
// must still return complete results for a filter that few entries match.
// Small fixtures (a few dozen vectors) must be searched exactly by every
// index.
package vectortest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// RecallThreshold is the mean recall@k an approximate index must reach
// against the exact reference on the kit's random data sets.
const RecallThreshold = 0.90

// scoreEps is the tolerance between an index's float32 scores and the
// float64 reference.
const scoreEps = 1e-4

// Run runs every conformance case against indexes made by newIndex, which
// must return a new, empty index for vectors of dim dimensions on each call.
// exact says whether the index claims exact results.
func Run(t *testing.T, newIndex func(dim int) driver.VectorIndex, exact bool) {
	t.Helper()
	run(t, &kit{newIndex: newIndex, exact: exact, eps: scoreEps})
}

// RunReduced runs the kit against an index that stores vectors at reduced
// precision (such as vector.Int8): its scores may differ from the cosine
// similarity by up to eps, hits whose reference scores are within eps may
// trade places, and it is held to RecallThreshold like an approximate index.
func RunReduced(t *testing.T, newIndex func(dim int) driver.VectorIndex, eps float64) {
	t.Helper()
	run(t, &kit{newIndex: newIndex, eps: eps})
}

func run(t *testing.T, k *kit) {
	t.Helper()
	for _, c := range k.cases() {
		t.Run(c.name, c.fn)
	}
}

type namedCase struct {
	name string
	fn   func(t *testing.T)
}

func (k *kit) cases() []namedCase {
	return []namedCase{
		{"AddSearchLen", k.addSearchLen},
		{"Replace", k.replace},
		{"Remove", k.remove},
		{"AddCopiesVector", k.addCopies},
		{"CosineScores", k.cosineScores},
		{"InvalidVectors", k.invalidVectors},
		{"Filters", k.filters},
		{"KLargerThanLen", k.kLargerThanLen},
		{"NonPositiveK", k.nonPositiveK},
		{"EmptyIndex", k.emptyIndex},
		{"TiesByID", k.tiesByID},
		{"DimensionMismatch", k.dimensionMismatch},
		{"CancelledContext", k.cancelledContext},
		{"Concurrent", k.concurrent},
		{"AgainstReference", k.againstReference},
		{"SelectiveFilter", k.selectiveFilter},
		{"Holds", k.holds},
	}
}

// covers maps each driver.VectorIndex method to the cases that exercise it; a
// test of this package fails when the interface grows a method without a case.
var covers = map[string][]string{
	"Add":    {"AddSearchLen", "Replace", "AddCopiesVector", "InvalidVectors", "DimensionMismatch"},
	"Remove": {"Remove", "Filters", "AgainstReference"},
	"Search": {"Filters", "KLargerThanLen", "NonPositiveK", "TiesByID", "AgainstReference", "SelectiveFilter"},
	"Len":    {"AddSearchLen", "Remove", "EmptyIndex", "Concurrent"},
}

type kit struct {
	newIndex func(dim int) driver.VectorIndex
	exact    bool
	eps      float64 // tolerance of scores against the reference
}

var bg = context.Background()

// fixture is a set of entries with their float64 reference for searching.
type fixture struct {
	dim     int
	entries map[int64]driver.VectorEntry
	eps     float64 // the kit's score tolerance
}

func (k *kit) newFixture(dim int) *fixture {
	return &fixture{dim: dim, entries: make(map[int64]driver.VectorEntry), eps: k.eps}
}

func (fx *fixture) put(es ...driver.VectorEntry) {
	for _, e := range es {
		e.Vector = slices.Clone(e.Vector)
		fx.entries[e.ID] = e
	}
}

func (fx *fixture) del(ids ...int64) {
	for _, id := range ids {
		delete(fx.entries, id)
	}
}

// cosine is the float64 cosine similarity of a and b.
func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// search is the brute-force reference: every entry that f matches, by cosine
// similarity in float64, ties by ascending ID, at most k.
func (fx *fixture) search(q []float32, k int, f driver.VectorFilter) []driver.Hit {
	var hits []driver.Hit
	for id, e := range fx.entries {
		if f.Match(&e) {
			hits = append(hits, driver.Hit{ID: id, Score: cosine(q, e.Vector)})
		}
	}
	sortHits(hits)
	if len(hits) > k {
		hits = hits[:max(k, 0)]
	}
	return hits
}

func sortHits(hits []driver.Hit) {
	slices.SortFunc(hits, func(a, b driver.Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return int(min(max(a.ID-b.ID, -1), 1))
	})
}

// randVec returns a random unit vector, from components uniform in [-1, 1).
func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = 2*r.Float32() - 1
	}
	return norm(v)
}

// norm scales v to unit length in place and returns it. Fixtures are unit
// vectors, as the engine gives an index, except in the cases that check
// what an index does with others.
func norm(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return v
}

// unit returns the dim-dimensional basis vector i, scaled by s.
func unit(dim, i int, s float32) []float32 {
	v := make([]float32, dim)
	v[i] = s
	return v
}

func (k *kit) add(t *testing.T, idx driver.VectorIndex, fx *fixture, es ...driver.VectorEntry) {
	t.Helper()
	if err := idx.Add(bg, es...); err != nil {
		t.Fatalf("Add(%d entries): %v", len(es), err)
	}
	if fx != nil {
		fx.put(es...)
	}
}

func (k *kit) search(t *testing.T, idx driver.VectorIndex, q []float32, n int, f driver.VectorFilter) []driver.Hit {
	t.Helper()
	hits, err := idx.Search(bg, q, n, f)
	if err != nil {
		t.Fatalf("Search(k=%d, filter=%+v): %v", n, f, err)
	}
	return hits
}

// checkWellFormed checks what every result must satisfy: at most k hits,
// distinct IDs that exist in fx and match f, scores equal to the reference
// cosine, sorted by score then ascending ID.
func checkWellFormed(t *testing.T, fx *fixture, q []float32, k int, f driver.VectorFilter, got []driver.Hit) {
	t.Helper()
	if len(got) > max(k, 0) {
		t.Fatalf("Search(k=%d) returned %d hits", k, len(got))
	}
	seen := make(map[int64]bool, len(got))
	for i, h := range got {
		e, ok := fx.entries[h.ID]
		if !ok {
			t.Fatalf("hit %d: id %d is not in the index (removed or never added); hits %v", i, h.ID, got)
		}
		if seen[h.ID] {
			t.Fatalf("hit %d: id %d returned twice; hits %v", i, h.ID, got)
		}
		seen[h.ID] = true
		if !f.Match(&e) {
			t.Fatalf("hit %d: id %d (namespace %q, pool %q) does not match filter %+v", i, h.ID, e.Namespace, e.Pool, f)
		}
		if want := cosine(q, e.Vector); !(math.Abs(h.Score-want) <= fx.eps) { // also catches NaN
			t.Fatalf("hit %d: id %d has score %v, want cosine similarity %v", i, h.ID, h.Score, want)
		}
		if i > 0 {
			p := got[i-1]
			if h.Score > p.Score || (h.Score == p.Score && h.ID < p.ID) {
				t.Fatalf("hits not sorted by score, then ascending id, at %d: %v before %v", i, p, h)
			}
		}
	}
}

// checkExact checks that got is the reference result, allowing neighbours
// whose reference scores are within the kit's tolerance to trade places.
func checkExact(t *testing.T, fx *fixture, q []float32, k int, f driver.VectorFilter, got []driver.Hit) {
	t.Helper()
	checkExactWant(t, fx, q, k, f, got, fx.search(q, k, f))
}

// checkExactWant is checkExact with the reference result given.
func checkExactWant(t *testing.T, fx *fixture, q []float32, k int, f driver.VectorFilter, got, want []driver.Hit) {
	t.Helper()
	checkWellFormed(t, fx, q, k, f, got)
	if len(got) != len(want) {
		t.Fatalf("Search(k=%d, filter=%+v) returned %d hits, want %d\n got  %v\n want %v", k, f, len(got), len(want), got, want)
	}
	for i := range want {
		if got[i].ID != want[i].ID && !(math.Abs(got[i].Score-want[i].Score) <= fx.eps) {
			t.Fatalf("hit %d is id %d (score %v), want id %d (score %v)\n got  %v\n want %v",
				i, got[i].ID, got[i].Score, want[i].ID, want[i].Score, got, want)
		}
	}
}

func ids(hits []driver.Hit) []int64 {
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func entry(id int64, ns string, pool driver.Pool, v []float32) driver.VectorEntry {
	return driver.VectorEntry{ID: id, Namespace: ns, Pool: pool, Vector: v}
}

// randomEntries returns n entries with ids first..first+n-1 spread over the
// given namespaces and pools.
func randomEntries(r *rand.Rand, first int64, n, dim int, nss []string, pools []driver.Pool) []driver.VectorEntry {
	es := make([]driver.VectorEntry, n)
	for i := range es {
		es[i] = entry(first+int64(i), nss[r.IntN(len(nss))], pools[r.IntN(len(pools))], randVec(r, dim))
	}
	return es
}

func (k *kit) addSearchLen(t *testing.T) {
	const dim = 8
	idx := k.newIndex(dim)
	if n := idx.Len(); n != 0 {
		t.Fatalf("new index: Len() = %d, want 0", n)
	}
	fx := k.newFixture(dim)
	r := rand.New(rand.NewPCG(1, 1))
	es := randomEntries(r, 1, 40, dim, []string{driver.DefaultNamespace}, []driver.Pool{driver.PoolMemory})
	k.add(t, idx, fx, es[:10]...)
	k.add(t, idx, fx, es[10:]...)
	if n := idx.Len(); n != 40 {
		t.Fatalf("after adding 40 entries: Len() = %d", n)
	}
	for _, e := range es[:10] {
		got := k.search(t, idx, e.Vector, 5, driver.VectorFilter{})
		checkExact(t, fx, e.Vector, 5, driver.VectorFilter{}, got)
		if got[0].ID != e.ID {
			t.Fatalf("searching for entry %d's own vector: first hit %d, want %d", e.ID, got[0].ID, e.ID)
		}
	}
	// Adding nothing is allowed and changes nothing.
	k.add(t, idx, fx)
	if n := idx.Len(); n != 40 {
		t.Fatalf("after an empty Add: Len() = %d, want 40", n)
	}
}

func (k *kit) replace(t *testing.T) {
	const dim = 4
	idx := k.newIndex(dim)
	fx := k.newFixture(dim)
	k.add(t, idx, fx,
		entry(1, "default", driver.PoolMemory, unit(dim, 0, 1)),
		entry(2, "default", driver.PoolMemory, unit(dim, 1, 1)),
		entry(3, "default", driver.PoolMemory, norm([]float32{1, 1, 0, 0})),
	)
	// Replace 1: new vector, namespace and pool.
	k.add(t, idx, fx, entry(1, "user:bob", driver.PoolRaw, unit(dim, 2, 1)))
	if n := idx.Len(); n != 3 {
		t.Fatalf("after replacing id 1: Len() = %d, want 3", n)
	}
	q := unit(dim, 2, 1)
	got := k.search(t, idx, q, 1, driver.VectorFilter{})
	checkExact(t, fx, q, 1, driver.VectorFilter{}, got)
	if got[0].ID != 1 || !(math.Abs(got[0].Score-1) <= k.eps) {
		t.Fatalf("after replacing id 1 with e3: top hit %v, want id 1 with score 1", got[0])
	}
	q = unit(dim, 0, 1)
	got = k.search(t, idx, q, 3, driver.VectorFilter{})
	checkExact(t, fx, q, 3, driver.VectorFilter{}, got)
	if slices.Contains(ids(got[:1]), 1) {
		t.Fatalf("id 1's old vector still found: %v", got)
	}
	f := driver.VectorFilter{Namespaces: []string{"default"}}
	got = k.search(t, idx, q, 3, f)
	checkExact(t, fx, q, 3, f, got)
	if slices.Contains(ids(got), 1) {
		t.Fatalf("id 1 still found in its old namespace: %v", got)
	}
	// Within one Add call, the later entry for an id wins.
	k.add(t, idx, fx,
		entry(4, "default", driver.PoolMemory, unit(dim, 3, 1)),
		entry(4, "default", driver.PoolMemory, unit(dim, 0, -1)),
	)
	if n := idx.Len(); n != 4 {
		t.Fatalf("after adding id 4 twice in one call: Len() = %d, want 4", n)
	}
	q = unit(dim, 0, -1)
	got = k.search(t, idx, q, 1, driver.VectorFilter{})
	if len(got) != 1 || got[0].ID != 4 {
		t.Fatalf("id 4 should hold the later of two vectors given in one Add: top hit %v", got)
	}
}

func (k *kit) remove(t *testing.T) {
	const dim = 8
	idx := k.newIndex(dim)
	fx := k.newFixture(dim)
	r := rand.New(rand.NewPCG(2, 2))
	es := randomEntries(r, 1, 30, dim, []string{"default", "user:a"}, driver.Pools)
	k.add(t, idx, fx, es...)
	gone := []int64{1, 7, 30, 15, 16}
	if err := idx.Remove(bg, gone...); err != nil {
		t.Fatalf("Remove(%v): %v", gone, err)
	}
	fx.del(gone...)
	if n := idx.Len(); n != 25 {
		t.Fatalf("after removing 5 of 30: Len() = %d, want 25", n)
	}
	// Unknown and already removed ids are ignored; so is an empty call.
	if err := idx.Remove(bg, 1, 999, -5); err != nil {
		t.Fatalf("Remove of unknown ids: %v (want them ignored)", err)
	}
	if err := idx.Remove(bg); err != nil {
		t.Fatalf("Remove(): %v", err)
	}
	if n := idx.Len(); n != 25 {
		t.Fatalf("after removing unknown ids: Len() = %d, want 25", n)
	}
	for _, e := range es {
		got := k.search(t, idx, e.Vector, 30, driver.VectorFilter{})
		checkExact(t, fx, e.Vector, 30, driver.VectorFilter{}, got)
	}
	// A removed id can be added again.
	k.add(t, idx, fx, es[0])
	got := k.search(t, idx, es[0].Vector, 1, driver.VectorFilter{})
	if len(got) != 1 || got[0].ID != es[0].ID {
		t.Fatalf("re-added id %d not found first: %v", es[0].ID, got)
	}
	// Remove everything.
	all := make([]int64, 0, len(es))
	for _, e := range es {
		all = append(all, e.ID)
	}
	if err := idx.Remove(bg, all...); err != nil {
		t.Fatalf("Remove(all): %v", err)
	}
	if n := idx.Len(); n != 0 {
		t.Fatalf("after removing every id: Len() = %d, want 0", n)
	}
	if got := k.search(t, idx, es[0].Vector, 5, driver.VectorFilter{}); len(got) != 0 {
		t.Fatalf("search after removing every id: %v, want no hits", got)
	}
}

func (k *kit) addCopies(t *testing.T) {
	const dim = 4
	idx := k.newIndex(dim)
	v := []float32{1, 0, 0, 0}
	k.add(t, idx, nil, entry(1, "default", driver.PoolMemory, v), entry(2, "default", driver.PoolMemory, []float32{0, 1, 0, 0}))
	v[0], v[1] = 0, 1 // the index must have kept its own copy
	got := k.search(t, idx, []float32{1, 0, 0, 0}, 1, driver.VectorFilter{})
	if len(got) != 1 || got[0].ID != 1 || !(math.Abs(got[0].Score-1) <= k.eps) {
		t.Fatalf("after the caller changed its slice, search for e0 = %v, want id 1 with score 1 (Add must copy vectors)", got)
	}
	q := []float32{0, 0, 1, 0}
	qc := slices.Clone(q)
	k.search(t, idx, q, 1, driver.VectorFilter{})
	if !slices.Equal(q, qc) {
		t.Fatalf("Search modified the caller's query: %v, was %v", q, qc)
	}
}

func (k *kit) cosineScores(t *testing.T) {
	// Vectors of different lengths rank by angle, not by dot product, and
	// scores are cosine similarities. The engine only passes unit vectors,
	// but the contract is cosine similarity; normalising copies on Add and
	// Search is the cheap way to keep it.
	const dim = 4
	idx := k.newIndex(dim)
	fx := k.newFixture(dim)
	k.add(t, idx, fx,
		entry(1, "default", driver.PoolMemory, []float32{10, 10, 0, 0}), // long, 45° off
		entry(2, "default", driver.PoolMemory, []float32{0.1, 0.01, 0, 0}),
		entry(3, "default", driver.PoolMemory, []float32{0, 0, 3, 0}),
	)
	q := []float32{5, 0, 0, 0}
	got := k.search(t, idx, q, 3, driver.VectorFilter{})
	checkExact(t, fx, q, 3, driver.VectorFilter{}, got)
	if !slices.Equal(ids(got), []int64{2, 1, 3}) {
		t.Fatalf("hits %v, want ids [2 1 3] ranked by cosine similarity", got)
	}
}

func (k *kit) invalidVectors(t *testing.T) {
	const dim = 3
	idx := k.newIndex(dim)
	k.add(t, idx, nil, entry(1, "default", driver.PoolMemory, []float32{1, 0, 0}))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, v := range [][]float32{{0, 0, 0}, {nan, 1, 0}, {1, inf, 0}} {
		err := idx.Add(bg, entry(2, "default", driver.PoolMemory, []float32{0, 1, 0}), entry(3, "default", driver.PoolMemory, v))
		if !errors.Is(err, driver.ErrInvalid) {
			t.Fatalf("Add of vector %v: error %v, want one wrapping driver.ErrInvalid", v, err)
		}
		if n := idx.Len(); n != 1 {
			t.Fatalf("a failed Add must add nothing: Len() = %d, want 1", n)
		}
		if _, err := idx.Search(bg, v, 1, driver.VectorFilter{}); !errors.Is(err, driver.ErrInvalid) {
			t.Fatalf("Search with query %v: error %v, want one wrapping driver.ErrInvalid", v, err)
		}
	}
}

func (k *kit) filters(t *testing.T) {
	const dim = 8
	idx := k.newIndex(dim)
	fx := k.newFixture(dim)
	r := rand.New(rand.NewPCG(3, 3))
	nss := []string{"default", "user:alice", "user:bob", "project:x"}
	k.add(t, idx, fx, randomEntries(r, 1, 80, dim, nss, driver.Pools)...)
	filters := []driver.VectorFilter{
		{},
		{Namespaces: []string{"user:alice"}},
		{Namespaces: []string{"user:alice", "default"}},
		{Pools: []driver.Pool{driver.PoolRaw}},
		{Pools: []driver.Pool{driver.PoolMemory, driver.PoolKnowledge}},
		{Namespaces: []string{"user:bob"}, Pools: []driver.Pool{driver.PoolKnowledge}},
		{Namespaces: []string{"user:nobody"}},             // unknown namespace: no hits
		{Namespaces: []string{"user:nobody", "user:bob"}}, // unknown names are ignored
		{Namespaces: []string{}},                          // empty, not nil: matches nothing
		{Pools: []driver.Pool{}},
		{Namespaces: []string{"default"}, Pools: []driver.Pool{}},
	}
	for i := 0; i < 10; i++ {
		q := randVec(r, dim)
		for _, f := range filters {
			for _, n := range []int{1, 5, 100} {
				checkExact(t, fx, q, n, f, k.search(t, idx, q, n, f))
			}
		}
	}
	// Filters keep working after namespaces empty out and come back.
	var bob []int64
	for id, e := range fx.entries {
		if e.Namespace == "user:bob" {
			bob = append(bob, id)
		}
	}
	if err := idx.Remove(bg, bob...); err != nil {
		t.Fatal(err)
	}
	fx.del(bob...)
	f := driver.VectorFilter{Namespaces: []string{"user:bob"}}
	q := randVec(r, dim)
	if got := k.search(t, idx, q, 10, f); len(got) != 0 {
		t.Fatalf("after removing every user:bob entry, a user:bob search returned %v", got)
	}
	k.add(t, idx, fx, entry(500, "user:bob", driver.PoolRaw, randVec(r, dim)), entry(501, "user:carol", driver.PoolRaw, randVec(r, dim)))
	for _, f := range append(filters, driver.VectorFilter{Namespaces: []string{"user:carol"}}) {
		checkExact(t, fx, q, 100, f, k.search(t, idx, q, 100, f))
	}
}

func (k *kit) kLargerThanLen(t *testing.T) {
	const dim = 6
	idx := k.newIndex(dim)
	fx := k.newFixture(dim)
	r := rand.New(rand.NewPCG(4, 4))
	k.add(t, idx, fx, randomEntries(r, 10, 12, dim, []string{"default", "user:a"}, driver.Pools)...)
	q := randVec(r, dim)
	got := k.search(t, idx, q, 1000, driver.VectorFilter{})
	checkExact(t, fx, q, 1000, driver.VectorFilter{}, got)
	if len(got) != 12 {
		t.Fatalf("Search(k=1000) over 12 entries returned %d hits, want all 12", len(got))
	}
	f := driver.VectorFilter{Namespaces: []string{"user:a"}}
	checkExact(t, fx, q, 1000, f, k.search(t, idx, q, 1000, f))
}

func (k *kit) nonPositiveK(t *testing.T) {
	const dim = 4
	idx := k.newIndex(dim)
	k.add(t, idx, nil, entry(1, "default", driver.PoolMemory, norm([]float32{1, 2, 3, 4})))
	for _, n := range []int{0, -1} {
		got, err := idx.Search(bg, []float32{1, 0, 0, 0}, n, driver.VectorFilter{})
		if err != nil || len(got) != 0 {
			t.Fatalf("Search(k=%d) = %v, %v; want no hits and no error", n, got, err)
		}
	}
}

func (k *kit) emptyIndex(t *testing.T) {
	const dim = 5
	idx := k.newIndex(dim)
	for _, f := range []driver.VectorFilter{{}, {Namespaces: []string{"default"}}, {Pools: []driver.Pool{driver.PoolRaw}}} {
		got, err := idx.Search(bg, []float32{1, 0, 0, 0, 0}, 10, f)
		if err != nil || len(got) != 0 {
			t.Fatalf("Search on an empty index = %v, %v; want no hits and no error", got, err)
		}
	}
	if err := idx.Remove(bg, 1, 2); err != nil {
		t.Fatalf("Remove on an empty index: %v", err)
	}
	if n := idx.Len(); n != 0 {
		t.Fatalf("empty index: Len() = %d", n)
	}
}

func (k *kit) tiesByID(t *testing.T) {
	const dim = 4
	idx := k.newIndex(dim)
	fx := k.newFixture(dim)
	same := []float32{0.5, 0.5, 0.5, 0.5}
	// Identical vectors under ids added out of order, plus others around them.
	for _, id := range []int64{42, 7, 19, 3, 100} {
		k.add(t, idx, fx, entry(id, "default", driver.PoolMemory, same))
	}
	k.add(t, idx, fx,
		entry(1, "default", driver.PoolMemory, []float32{1, 0, 0, 0}),
		entry(2, "default", driver.PoolMemory, []float32{-0.5, -0.5, -0.5, -0.5}),
		entry(50, "default", driver.PoolMemory, norm([]float32{0.5, 0.5, 0.5, 0.4})),
	)
	q := norm([]float32{1, 1, 1, 1})
	got := k.search(t, idx, q, 4, driver.VectorFilter{})
	checkWellFormed(t, fx, q, 4, driver.VectorFilter{}, got)
	if want := []int64{3, 7, 19, 42}; !slices.Equal(ids(got), want) {
		t.Fatalf("equal scores must be ordered by ascending id: got %v, want ids %v", got, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score != got[0].Score {
			t.Fatalf("identical vectors got different scores: %v", got)
		}
	}
	got = k.search(t, idx, q, 8, driver.VectorFilter{})
	if want := []int64{3, 7, 19, 42, 100, 50, 1, 2}; !slices.Equal(ids(got), want) {
		t.Fatalf("got %v, want ids %v", got, want)
	}
	// Orthogonal vectors tie at 0.
	idx = k.newIndex(dim)
	for _, id := range []int64{9, 4, 6} {
		k.add(t, idx, nil, entry(id, "default", driver.PoolMemory, unit(dim, int(id%3)+1, 1)))
	}
	got = k.search(t, idx, unit(dim, 0, 1), 3, driver.VectorFilter{})
	if want := []int64{4, 6, 9}; !slices.Equal(ids(got), want) {
		t.Fatalf("orthogonal vectors (score 0) must be ordered by id: got %v, want ids %v", got, want)
	}
}

func (k *kit) dimensionMismatch(t *testing.T) {
	const dim = 6
	idx := k.newIndex(dim)
	k.add(t, idx, nil, entry(1, "default", driver.PoolMemory, randVec(rand.New(rand.NewPCG(5, 5)), dim)))
	for _, n := range []int{5, 7, 0} {
		err := idx.Add(bg, entry(2, "default", driver.PoolMemory, []float32{1, 0, 0, 0, 0, 0}), entry(3, "default", driver.PoolMemory, make([]float32, n)))
		if !errors.Is(err, driver.ErrDimensionMismatch) {
			t.Fatalf("Add of a %d-dimensional vector to a %d-dimensional index: error %v, want one wrapping driver.ErrDimensionMismatch", n, dim, err)
		}
		if n > 0 {
			for _, want := range []string{fmt.Sprint(n), fmt.Sprint(dim)} {
				if !containsWord(err.Error(), want) {
					t.Errorf("dimension error %q should name both dimensions (%d and %d)", err, n, dim)
				}
			}
		}
		if got := idx.Len(); got != 1 {
			t.Fatalf("a failed Add must add nothing: Len() = %d, want 1", got)
		}
		q := make([]float32, n)
		if n > 0 {
			q[0] = 1
		}
		if _, err := idx.Search(bg, q, 1, driver.VectorFilter{}); !errors.Is(err, driver.ErrDimensionMismatch) {
			t.Fatalf("Search with a %d-dimensional query on a %d-dimensional index: error %v, want one wrapping driver.ErrDimensionMismatch", n, dim, err)
		}
	}
}

// containsWord reports whether s contains the decimal number w not as part of
// a longer number.
func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] != w {
			continue
		}
		before := i == 0 || s[i-1] < '0' || s[i-1] > '9'
		after := i+len(w) == len(s) || s[i+len(w)] < '0' || s[i+len(w)] > '9'
		if before && after {
			return true
		}
	}
	return false
}

func (k *kit) cancelledContext(t *testing.T) {
	const dim = 4
	idx := k.newIndex(dim)
	k.add(t, idx, nil, entry(1, "default", driver.PoolMemory, []float32{1, 0, 0, 0}))
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := idx.Add(ctx, entry(2, "default", driver.PoolMemory, []float32{0, 1, 0, 0})); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add with a cancelled context: error %v, want one wrapping context.Canceled", err)
	}
	if n := idx.Len(); n != 1 {
		t.Fatalf("Add with a cancelled context must add nothing: Len() = %d, want 1", n)
	}
	if _, err := idx.Search(ctx, []float32{1, 0, 0, 0}, 1, driver.VectorFilter{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Search with a cancelled context: error %v, want one wrapping context.Canceled", err)
	}
	if err := idx.Remove(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Remove with a cancelled context: error %v, want one wrapping context.Canceled", err)
	}
	if n := idx.Len(); n != 1 {
		t.Fatalf("Remove with a cancelled context must remove nothing: Len() = %d, want 1", n)
	}
}

func (k *kit) concurrent(t *testing.T) {
	const (
		dim     = 16
		writers = 4
		perW    = 150
	)
	idx := k.newIndex(dim)
	r := rand.New(rand.NewPCG(6, 6))
	vecs := make([][]float32, writers*perW)
	for i := range vecs {
		vecs[i] = randVec(r, dim)
	}
	var wg sync.WaitGroup
	errc := make(chan error, 2*writers)
	for w := range writers {
		wg.Add(2)
		go func() { // writer: adds its ids, replaces some, removes every third
			defer wg.Done()
			for i := range perW {
				id := int64(w*perW + i)
				ns := fmt.Sprintf("user:w%d", w)
				if err := idx.Add(bg, entry(id+1, ns, driver.PoolMemory, vecs[id])); err != nil {
					errc <- err
					return
				}
				if i%3 == 2 {
					if err := idx.Remove(bg, id+1); err != nil {
						errc <- err
						return
					}
				}
				if i%5 == 0 {
					_ = idx.Len()
				}
			}
		}()
		go func() { // reader: searches while the writers write
			defer wg.Done()
			f := driver.VectorFilter{Namespaces: []string{fmt.Sprintf("user:w%d", w), "default"}}
			for i := range perW {
				hits, err := idx.Search(bg, vecs[(w*perW+i*7)%len(vecs)], 5, f)
				if err != nil {
					errc <- err
					return
				}
				if len(hits) > 5 {
					errc <- fmt.Errorf("Search(k=5) returned %d hits", len(hits))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatalf("concurrent use: %v", err)
	}
	want := writers * (perW - perW/3)
	if n := idx.Len(); n != want {
		t.Fatalf("after concurrent adds and removes: Len() = %d, want %d", n, want)
	}
	// Every surviving entry is there, every removed one gone.
	fx := k.newFixture(dim)
	for id := range vecs {
		if id%perW%3 != 2 {
			fx.put(entry(int64(id+1), fmt.Sprintf("user:w%d", id/perW), driver.PoolMemory, vecs[id]))
		}
	}
	q := randVec(r, dim)
	got := k.search(t, idx, q, len(vecs), driver.VectorFilter{})
	checkWellFormed(t, fx, q, len(vecs), driver.VectorFilter{}, got)
	if k.exact && len(got) != want {
		t.Fatalf("searching with k ≥ Len returned %d hits, want %d", len(got), want)
	}
}

// clustered returns n vectors around c random centres, the way embeddings of
// real text cluster by topic; uniform random data would be harder for an
// approximate index than anything it meets in use.
func clustered(r *rand.Rand, n, dim, c int) [][]float32 {
	centres := make([][]float32, c)
	for i := range centres {
		centres[i] = randVec(r, dim)
	}
	out := make([][]float32, n)
	for i := range out {
		ctr := centres[r.IntN(c)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = ctr[j] + float32(r.NormFloat64()*0.35)
		}
		out[i] = norm(v)
	}
	return out
}

func (k *kit) againstReference(t *testing.T) {
	const (
		dim     = 32
		n       = 1500
		queries = 30
	)
	idx := k.newIndex(dim)
	fx := k.newFixture(dim)
	r := rand.New(rand.NewPCG(7, 7))
	vecs := clustered(r, n+queries, dim, 30)
	nss := []string{"default", "user:a", "user:b", "project:p"}
	es := make([]driver.VectorEntry, n)
	for i := range es {
		es[i] = entry(int64(i+1), nss[r.IntN(len(nss))], driver.Pools[r.IntN(len(driver.Pools))], vecs[i])
	}
	for i := 0; i < n; i += 300 {
		k.add(t, idx, fx, es[i:i+300]...)
	}
	// Replace and remove some, so the index is not just freshly built.
	for i := 0; i < n; i += 10 {
		e := es[i]
		e.Vector = randVec(r, dim)
		k.add(t, idx, fx, e)
	}
	var gone []int64
	for i := 5; i < n; i += 17 {
		gone = append(gone, int64(i+1))
	}
	if err := idx.Remove(bg, gone...); err != nil {
		t.Fatal(err)
	}
	fx.del(gone...)
	if got := idx.Len(); got != len(fx.entries) {
		t.Fatalf("Len() = %d, want %d", got, len(fx.entries))
	}

	filters := []driver.VectorFilter{
		{},
		{Namespaces: []string{"user:a", "default"}},
		{Pools: []driver.Pool{driver.PoolMemory}},
		{Namespaces: []string{"user:b"}, Pools: []driver.Pool{driver.PoolRaw, driver.PoolKnowledge}},
	}
	ks := []int{1, 10, 50}
	for _, f := range filters {
		found, total := make([]int, len(ks)), make([]int, len(ks))
		for qi := range queries {
			q := vecs[n+qi]
			ref := fx.search(q, ks[len(ks)-1], f)
			for i, kk := range ks {
				got := k.search(t, idx, q, kk, f)
				want := ref[:min(kk, len(ref))]
				if k.exact {
					checkExactWant(t, fx, q, kk, f, got, want)
					continue
				}
				checkWellFormed(t, fx, q, kk, f, got)
				found[i] += overlap(got, want)
				total[i] += len(want)
			}
		}
		for i, kk := range ks {
			if k.exact || total[i] == 0 {
				continue
			}
			if rec := float64(found[i]) / float64(total[i]); rec < RecallThreshold {
				t.Errorf("recall@%d with filter %+v = %.3f, want ≥ %.2f", kk, f, rec, RecallThreshold)
			}
		}
	}
}

// overlap counts the hits of want that got also holds.
func overlap(got, want []driver.Hit) int {
	in := make(map[int64]bool, len(got))
	for _, h := range got {
		in[h.ID] = true
	}
	n := 0
	for _, h := range want {
		if in[h.ID] {
			n++
		}
	}
	return n
}

func (k *kit) selectiveFilter(t *testing.T) {
	// A small namespace inside a large index: the search must still find
	// k of its entries (an approximate index that filters after the graph
	// walk finds none of them).
	const (
		dim   = 32
		n     = 1000
		every = 60 // one entry in every is in the rare namespace
	)
	idx := k.newIndex(dim)
	fx := k.newFixture(dim)
	r := rand.New(rand.NewPCG(8, 8))
	vecs := clustered(r, n, dim, 20)
	es := make([]driver.VectorEntry, n)
	for i := range es {
		ns := "default"
		if i%every == 3 {
			ns = "user:rare"
		}
		es[i] = entry(int64(i+1), ns, driver.PoolMemory, vecs[i])
	}
	k.add(t, idx, fx, es...)
	f := driver.VectorFilter{Namespaces: []string{"user:rare"}}
	var found, total int
	for qi := range 20 {
		q := randVec(r, dim)
		got := k.search(t, idx, q, 10, f)
		if k.exact {
			checkExact(t, fx, q, 10, f, got)
			continue
		}
		checkWellFormed(t, fx, q, 10, f, got)
		if len(got) != 10 {
			t.Fatalf("query %d: Search(k=10) in a namespace of %d entries returned %d hits, want 10", qi, n/every, len(got))
		}
		want := fx.search(q, 10, f)
		found += overlap(got, want)
		total += len(want)
	}
	if !k.exact {
		if rec := float64(found) / float64(total); rec < RecallThreshold {
			t.Errorf("recall@10 in a namespace of %d entries among %d = %.3f, want ≥ %.2f", n/every, n, rec, RecallThreshold)
		}
	}
}

// holds checks driver.VectorHolder, for an index that implements it: an
// entry is held as added (its vector at any length), and not with another
// vector, namespace or pool, after it is removed or replaced, or when the
// query has the wrong dimension or is zero.
func (k *kit) holds(t *testing.T) {
	const dim = 16
	idx := k.newIndex(dim)
	h, ok := idx.(driver.VectorHolder)
	if !ok {
		t.Skip("the index does not implement driver.VectorHolder")
	}
	r := rand.New(rand.NewPCG(9, 9))
	es := randomEntries(r, 1, 40, dim, []string{"default", "user:a"}, driver.Pools)
	k.add(t, idx, nil, es...)
	for _, e := range es {
		if !h.Holds(e) {
			t.Fatalf("Holds(entry %d as added) = false", e.ID)
		}
	}
	e := es[3]
	scaled := entry(e.ID, e.Namespace, e.Pool, slices.Clone(e.Vector))
	for i := range scaled.Vector {
		scaled.Vector[i] *= 3
	}
	otherNS := "user:b"
	otherPool := driver.PoolKnowledge
	if e.Pool == otherPool {
		otherPool = driver.PoolRaw
	}
	for _, c := range []struct {
		name string
		e    driver.VectorEntry
		want bool
	}{
		{"the vector at another length", scaled, true},
		{"another vector", entry(e.ID, e.Namespace, e.Pool, es[4].Vector), false},
		{"another namespace", entry(e.ID, otherNS, e.Pool, e.Vector), false},
		{"another pool", entry(e.ID, e.Namespace, otherPool, e.Vector), false},
		{"an unknown id", entry(999, e.Namespace, e.Pool, e.Vector), false},
		{"the wrong dimension", entry(e.ID, e.Namespace, e.Pool, e.Vector[:dim-1]), false},
		{"a zero vector", entry(e.ID, e.Namespace, e.Pool, make([]float32, dim)), false},
	} {
		if got := h.Holds(c.e); got != c.want {
			t.Errorf("Holds(entry %d with %s) = %v, want %v", e.ID, c.name, got, c.want)
		}
	}
	if err := idx.Remove(bg, e.ID); err != nil {
		t.Fatal(err)
	}
	if h.Holds(e) {
		t.Errorf("Holds(entry %d) after Remove = true", e.ID)
	}
	moved := entry(es[5].ID, es[5].Namespace, es[5].Pool, es[6].Vector)
	k.add(t, idx, nil, moved)
	if h.Holds(es[5]) || !h.Holds(moved) {
		t.Errorf("after replacing entry %d: Holds(old) = %v, Holds(new) = %v; want false, true", moved.ID, h.Holds(es[5]), h.Holds(moved))
	}
}
