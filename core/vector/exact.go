package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/memos-go/memos/core/driver"
)

// Exact is a brute-force vector index: a search compares the query with every
// stored vector, so its results are exact. It is the right index up to a few
// hundred thousand vectors (a search over 100k × 384 is one pass over 150 MB)
// and the reference the approximate indexes are checked against.
//
// Vectors live in one contiguous []float32, one row per entry, so a search is
// a linear pass with a SIMD dot product per row, keeping the best k in a
// bounded heap. A large index is scanned in parts on several cores and the
// parts' heaps merged: one core does not saturate memory bandwidth (100k ×
// 256 on 2 cores: 11.5 ms in one pass, 5.5 ms in two). Removing an entry
// moves the last row into its slot.
// Namespaces and pools are interned to small integers so that filtering a row
// costs two slice lookups, and rows the filter rejects cost no dot product.
//
// Exact is safe for concurrent use: searches share a read lock, writes take
// the write lock.
type Exact struct {
	dim int

	mu    sync.RWMutex
	rows  Rows            // row s is slot s's vector, unit length
	ids   []int64         // slot → id
	nsOf  []uint32        // slot → interned namespace
	pool  []uint32        // slot → interned pool
	slots map[int64]int32 // id → slot; nil until a write needs it in a loaded index (see slotMap)
	ns    interner
	pools interner
	// release frees the snapshot the vectors are read from in place (see
	// LoadExactBytes) once own has copied them; nil when there is none.
	release *releaser
}

var (
	_ driver.VectorIndex  = (*Exact)(nil)
	_ driver.VectorHolder = (*Exact)(nil)
)

// NewExact returns an empty exact index for vectors of dim dimensions,
// stored as float32. Every vector added and every query must have exactly
// dim components. It panics if dim < 1.
func NewExact(dim int) *Exact { return NewExactPrecision(dim, Float32) }

// NewExactPrecision is NewExact storing the vectors at precision p (see
// Rows). It panics if dim < 1 or p is not a known precision.
func NewExactPrecision(dim int, p Precision) *Exact {
	if dim < 1 || !p.Valid() {
		panic(fmt.Sprintf("vector: NewExactPrecision(%d, %v): dimension must be at least 1 and the precision known", dim, p))
	}
	return &Exact{dim: dim, rows: NewRows(dim, p), slots: make(map[int64]int32)}
}

// Precision returns the precision the index stores its vectors at.
func (x *Exact) Precision() Precision { return x.rows.Precision() }

// Dim returns the dimension fixed at construction.
func (x *Exact) Dim() int { return x.dim }

// ctxCheckRows is how many rows a long scan or batch processes between two
// checks of its context.
const ctxCheckRows = 4096

// Add inserts entries, replacing any entry with the same ID (a later entry of
// the same call wins). It copies and normalises each vector. Add is atomic:
// when one entry is invalid — wrong dimension (ErrDimensionMismatch), zero or
// non-finite vector (ErrInvalid) — nothing is added.
//
// Each vector is copied once, into the storage after the last row, and
// normalised there; the new rows are then moved into their slots (a new
// entry's is where it already is unless an earlier one of the call
// replaced an entry) and kept only when every vector was valid. Filling an
// index of 100k × 256 in one call so copies 100 MB once, where a buffer
// for the whole call copied it twice.
func (x *Exact) Add(ctx context.Context, entries ...driver.VectorEntry) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("vector add: %w", err)
	}
	for _, e := range entries {
		if len(e.Vector) != x.dim {
			return fmt.Errorf("vector add id %d: %w: vector has %d dimensions, the index has %d (re-embed with the store's model or rebuild the index)",
				e.ID, driver.ErrDimensionMismatch, len(e.Vector), x.dim)
		}
	}

	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.ids)+len(entries) > math.MaxInt32 {
		return fmt.Errorf("vector add: %w: the exact index holds at most %d entries", driver.ErrInvalid, math.MaxInt32)
	}
	if len(entries) > 0 {
		x.own()
	}
	slots := x.slotMap()
	base := x.rows.Len()
	x.rows.Reserve(len(entries))
	var buf []float32 // Int8: the vector normalised, before it is quantised
	if x.rows.Precision() != Float32 {
		buf = make([]float32, x.dim)
	}
	for i, e := range entries {
		if !x.rows.appendUnit(e.Vector, buf) {
			x.rows.Truncate(base)
			return fmt.Errorf("vector add id %d: %w: vector is zero, too short to normalise, or has non-finite components", e.ID, driver.ErrInvalid)
		}
		if i%ctxCheckRows == ctxCheckRows-1 {
			if err := ctx.Err(); err != nil {
				x.rows.Truncate(base)
				return fmt.Errorf("vector add: %w", err)
			}
		}
	}
	// Row base+i holds entry i. Every move below writes a row before
	// base+i when it reads row base+i, so no row is overwritten before it
	// is read.
	for i, e := range entries {
		staged := base + i
		ns, pool := x.ns.acquire(e.Namespace), x.pools.acquire(string(e.Pool))
		if s, ok := slots[e.ID]; ok {
			x.ns.release(x.nsOf[s])
			x.pools.release(x.pool[s])
			x.rows.Move(int(s), staged)
			x.nsOf[s], x.pool[s] = ns, pool
			continue
		}
		s := len(x.ids)
		slots[e.ID] = int32(s)
		x.ids = append(x.ids, e.ID)
		x.nsOf = append(x.nsOf, ns)
		x.pool = append(x.pool, pool)
		if s != staged {
			x.rows.Move(s, staged)
		}
	}
	x.rows.Truncate(len(x.ids))
	return nil
}

// Close releases the snapshot that an index loaded by LoadExactBytes
// reads in place, and leaves that index empty; searches running meanwhile
// finish first. A mapped snapshot keeps its file busy (its file system
// cannot be unmounted, a deleted file keeps its space) until then, or
// until the garbage collector finds the index. An index that owns its
// vectors keeps them: Close does nothing to it.
func (x *Exact) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.release == nil {
		return nil
	}
	x.rows = NewRows(x.dim, x.rows.prec)
	x.ids, x.nsOf, x.pool, x.slots = nil, nil, nil, nil
	x.release.do()
	x.release = nil
	return nil
}

// normalized scales v to unit length with Normalize and reports whether the
// result is a finite unit vector. Normalize cannot scale a zero or non-finite
// vector, and a vector whose length is below float32's range (about 1e-38)
// would come out infinite; both are rejected.
func normalized(v []float32) bool {
	if !Normalize(v) {
		return false
	}
	n := Dot(v, v)
	return n > 0.99 && n < 1.01 // false for NaN and ±Inf
}

// Remove deletes ids; unknown ids are ignored.
func (x *Exact) Remove(ctx context.Context, ids ...int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("vector remove: %w", err)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	slots := x.slotMap()
	for _, id := range ids {
		s, ok := slots[id]
		if !ok {
			continue
		}
		x.own()
		delete(slots, id)
		x.ns.release(x.nsOf[s])
		x.pools.release(x.pool[s])
		last := int32(len(x.ids) - 1)
		if s != last {
			x.ids[s] = x.ids[last]
			x.nsOf[s] = x.nsOf[last]
			x.pool[s] = x.pool[last]
			x.rows.Move(int(s), int(last))
			slots[x.ids[s]] = s
		}
		x.ids = x.ids[:last]
		x.nsOf = x.nsOf[:last]
		x.pool = x.pool[:last]
		x.rows.Truncate(int(last))
	}
	x.shrink()
	return nil
}

// shrink gives memory back after many removals: when a quarter or less of
// the row storage is in use, it is reallocated to twice the live size.
func (x *Exact) shrink() {
	n := len(x.ids)
	if cap(x.ids) < 1024 || n > cap(x.ids)/4 {
		return
	}
	x.ids = slices.Grow(slices.Clone(x.ids[:n:n]), n)
	x.nsOf = slices.Grow(slices.Clone(x.nsOf[:n:n]), n)
	x.pool = slices.Grow(slices.Clone(x.pool[:n:n]), n)
	x.rows.Compact()
}

// slotMap returns the id map, building it in an index loaded from a
// snapshot, which does without it until a write: an open that only
// searches (a CLI command) does not pay for it. x.mu is held for writing.
func (x *Exact) slotMap() map[int64]int32 {
	if x.slots == nil {
		x.slots = make(map[int64]int32, len(x.ids))
		for s, id := range x.ids {
			x.slots[id] = int32(s)
		}
	}
	return x.slots
}

// slot returns id's slot: from the id map, or by a scan of the ids while
// there is none (Holds, a few calls at open). x.mu is held for reading.
func (x *Exact) slot(id int64) (int32, bool) {
	if x.slots != nil {
		s, ok := x.slots[id]
		return s, ok
	}
	if s := slices.Index(x.ids, id); s >= 0 {
		return int32(s), true
	}
	return 0, false
}

// Len returns the number of entries.
func (x *Exact) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids)
}

// Holds reports whether the index holds e as given: entry e.ID in
// e.Namespace and e.Pool whose vector has cosine similarity at least
// driver.HoldsSimilarity with e.Vector (see driver.VectorHolder).
func (x *Exact) Holds(e driver.VectorEntry) bool {
	if len(e.Vector) != x.dim {
		return false
	}
	v := slices.Clone(e.Vector)
	if !Normalize(v) {
		return false
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	s, ok := x.slot(e.ID)
	if !ok {
		return false
	}
	return x.ns.names[x.nsOf[s]] == e.Namespace && x.pools.names[x.pool[s]] == string(e.Pool) &&
		x.rows.Dot(v, int(s)) >= driver.HoldsSimilarity
}

// Search returns up to k entries matching f, most similar to q first, ties
// broken by ascending ID. The score of a hit is the cosine similarity of q and
// the entry (q is normalised on a copy; the caller's slice is not modified).
// k ≤ 0 returns no hits. A query of the wrong dimension is an
// ErrDimensionMismatch error, a zero or non-finite one an ErrInvalid error.
func (x *Exact) Search(ctx context.Context, q []float32, k int, f driver.VectorFilter) ([]driver.Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	if len(q) != x.dim {
		return nil, fmt.Errorf("vector search: %w: query has %d dimensions, the index has %d (embed the query with the store's model)",
			driver.ErrDimensionMismatch, len(q), x.dim)
	}
	qn := slices.Clone(q)
	if !normalized(qn) {
		return nil, fmt.Errorf("vector search: %w: query vector is zero, too short to normalise, or has non-finite components", driver.ErrInvalid)
	}
	if k <= 0 {
		return []driver.Hit{}, nil
	}

	x.mu.RLock()
	defer x.mu.RUnlock()
	n := len(x.ids)
	nsOK, nsAny := x.ns.allowed(f.Namespaces)
	poolOK, poolAny := x.pools.allowed(poolStrings(f.Pools))
	if n == 0 || (!nsAny && !slices.Contains(nsOK, true)) || (!poolAny && !slices.Contains(poolOK, true)) {
		return []driver.Hit{}, nil
	}

	scan := func(lo, hi int) (*topK, error) {
		top := newTopK(min(k, n))
		for start := lo; start < hi; start += ctxCheckRows {
			if start > lo {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("vector search: %w", err)
				}
			}
			for s := start; s < min(start+ctxCheckRows, hi); s++ {
				if (!nsAny && !nsOK[x.nsOf[s]]) || (!poolAny && !poolOK[x.pool[s]]) {
					continue
				}
				top.push(x.rows.Dot(qn, s), x.ids[s])
			}
		}
		return top, nil
	}
	parts := 1
	if n*x.dim >= parallelScanFloats {
		parts = max(1, min(runtime.GOMAXPROCS(0), maxScanParts))
	}
	tops := make([]*topK, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tops[p], errs[p] = scan(n*p/parts, n*(p+1)/parts)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	top := tops[0]
	for _, t := range tops[1:] {
		for i := range t.ids {
			top.push(t.s[i], t.ids[i])
		}
	}
	return top.sorted(), nil
}

// A scan over at least parallelScanFloats components is split between up to
// maxScanParts goroutines: one core does not saturate memory bandwidth.
const (
	parallelScanFloats = 1 << 21
	maxScanParts       = 4
)

func poolStrings(ps []driver.Pool) []string {
	if ps == nil {
		return nil
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return s
}

// interner maps strings (namespaces, pools) to small integers with reference
// counts, so that rows store and compare integers and the names of removed
// entries are forgotten. The zero value is ready to use.
type interner struct {
	idx   map[string]uint32
	names []string
	refs  []int
	free  []uint32
}

func (in *interner) acquire(s string) uint32 {
	if i, ok := in.idx[s]; ok {
		in.refs[i]++
		return i
	}
	if in.idx == nil {
		in.idx = make(map[string]uint32)
	}
	var i uint32
	if n := len(in.free); n > 0 {
		i, in.free = in.free[n-1], in.free[:n-1]
		in.names[i], in.refs[i] = s, 1
	} else {
		i = uint32(len(in.names))
		in.names = append(in.names, s)
		in.refs = append(in.refs, 1)
	}
	in.idx[s] = i
	return i
}

func (in *interner) release(i uint32) {
	if in.refs[i]--; in.refs[i] == 0 {
		delete(in.idx, in.names[i])
		in.names[i] = ""
		in.free = append(in.free, i)
	}
}

// allowed turns a filter list into a lookup table indexed by interned id.
// any reports that the list is nil (no restriction); names the index does not
// hold are ignored.
func (in *interner) allowed(list []string) (ok []bool, any bool) {
	if list == nil {
		return nil, true
	}
	ok = make([]bool, len(in.names))
	for _, s := range list {
		if i, found := in.idx[s]; found {
			ok[i] = true
		}
	}
	return ok, false
}

// topK keeps the k best (score, id) pairs seen so far in a min-heap whose
// root is the worst kept pair, so a row that cannot enter costs one compare.
type topK struct {
	k   int
	ids []int64
	s   []float32
}

func newTopK(k int) *topK {
	return &topK{k: k, ids: make([]int64, 0, k), s: make([]float32, 0, k)}
}

// worse reports whether (sa, ida) ranks below (sb, idb): a lower score, or the
// same score and a higher id.
func worse(sa float32, ida int64, sb float32, idb int64) bool {
	return sa < sb || (sa == sb && ida > idb)
}

func (t *topK) push(score float32, id int64) {
	if len(t.ids) < t.k {
		t.ids = append(t.ids, id)
		t.s = append(t.s, score)
		t.up(len(t.ids) - 1)
		return
	}
	if !worse(t.s[0], t.ids[0], score, id) {
		return
	}
	t.ids[0], t.s[0] = id, score
	t.down(0)
}

func (t *topK) less(i, j int) bool { return worse(t.s[i], t.ids[i], t.s[j], t.ids[j]) }

func (t *topK) swap(i, j int) {
	t.ids[i], t.ids[j] = t.ids[j], t.ids[i]
	t.s[i], t.s[j] = t.s[j], t.s[i]
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(i, p) {
			return
		}
		t.swap(i, p)
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.ids)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.less(r, l) {
			m = r
		}
		if !t.less(m, i) {
			return
		}
		t.swap(i, m)
		i = m
	}
}

// sorted empties the heap into a slice, best first.
func (t *topK) sorted() []driver.Hit {
	out := make([]driver.Hit, len(t.ids))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = driver.Hit{ID: t.ids[0], Score: float64(t.s[0])}
		last := len(t.ids) - 1
		t.swap(0, last)
		t.ids, t.s = t.ids[:last], t.s[:last]
		t.down(0)
	}
	return out
}
