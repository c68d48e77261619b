package hnsw

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
)

var (
	_ driver.VectorIndex  = (*Index)(nil)
	_ driver.VectorHolder = (*Index)(nil)
)

// Defaults for the zero Config. They were chosen by measurement (see the
// package documentation and recall_test.go): at these values recall@10
// against the exact index is at least 0.95 on 20k random and 20k clustered
// vectors of dimension 128, the random set being the hard one.
const (
	DefaultM              = 16
	DefaultEfConstruction = 200
	DefaultEfSearch       = 400
	DefaultRepairFraction = 0.1
)

// Limits on Config values and on what an index holds.
const (
	maxM       = 128     // level-0 lists hold 2*M, so stride0 stays small
	maxEf      = 1 << 16 // efConstruction, efSearch and SearchEf's ef
	maxLevel   = 31      // levels are stored in a byte; 16^-31 never happens
	maxDim     = 1 << 16
	maxSlots   = math.MaxUint32 - 1
	maxWorkers = 1024
)

// Config sets an index's parameters. The zero value means the defaults; a
// value out of range is an error from New.
type Config struct {
	// M is the number of neighbours a node keeps on each level above 0; level
	// 0 keeps up to 2*M. Larger M raises recall and memory use and slows
	// inserts. Default 16; 2..128.
	M int
	// EfConstruction is the size of the candidate list while inserting.
	// Larger values build a better graph, more slowly. Default 200.
	EfConstruction int
	// EfSearch is the size of the candidate list while searching (at least k
	// is always used). Larger values raise recall and latency. Default 400,
	// which random high-dimensional data needs; clustered data such as text
	// embeddings reaches the same recall with far less (see SearchEf).
	EfSearch int
	// Seed seeds the random generator that draws each node's level. The same
	// seed and the same sequence of Add and Remove calls build the same graph.
	Seed uint64
	// RepairFraction: when tombstones (removed or replaced entries still in
	// the graph) exceed this fraction of all nodes, the graph is repaired:
	// live nodes that pointed at tombstones are reconnected and the
	// tombstones' slots are freed for reuse. Default 0.1; at most 1.
	RepairFraction float64
	// Workers is how many goroutines insert a batch of entries at once: 0
	// means one per CPU (runtime.GOMAXPROCS), 1 inserts one entry after the
	// other. With more than one the graph depends on how the goroutines
	// interleave, so only Workers 1 builds the same graph from the same seed
	// and calls. It is not saved with the index.
	Workers int
	// ExactBelow: a filtered search whose filter matches at most this many
	// entries compares the query with each of them instead of walking the
	// graph. 0 chooses by cost: scan when the matching entries are fewer than
	// 2*M times the search's ef, an estimate of the similarity computations a
	// graph walk costs. Negative never scans.
	ExactBelow int
	// Precision is how the vectors are stored (see vector.Rows): Float32,
	// the zero value, or Int8, a quarter of the vectors' memory for scores
	// off by about 0.001. It is saved with the index.
	Precision vector.Precision
}

func (c Config) withDefaults() (Config, error) {
	def := func(v *int, d, lo, hi int, name string) error {
		switch {
		case *v == 0:
			*v = d
		case *v < lo || *v > hi:
			return driver.Invalidf("hnsw: %s is %d; use %d..%d, or 0 for the default %d", name, *v, lo, hi, d)
		}
		return nil
	}
	if err := def(&c.M, DefaultM, 2, maxM, "M"); err != nil {
		return c, err
	}
	if err := def(&c.EfConstruction, DefaultEfConstruction, 1, maxEf, "EfConstruction"); err != nil {
		return c, err
	}
	if err := def(&c.EfSearch, DefaultEfSearch, 1, maxEf, "EfSearch"); err != nil {
		return c, err
	}
	if !c.Precision.Valid() {
		return c, driver.Invalidf("hnsw: unknown Precision %v", c.Precision)
	}
	if c.Workers < 0 || c.Workers > maxWorkers {
		return c, driver.Invalidf("hnsw: Workers is %d; use 1..%d, or 0 for one per CPU", c.Workers, maxWorkers)
	}
	if c.ExactBelow < math.MinInt32 || c.ExactBelow > math.MaxInt32 {
		return c, driver.Invalidf("hnsw: ExactBelow is %d; it must fit in 32 bits", c.ExactBelow)
	}
	switch {
	case c.RepairFraction == 0:
		c.RepairFraction = DefaultRepairFraction
	case !(c.RepairFraction > 0 && c.RepairFraction <= 1):
		return c, driver.Invalidf("hnsw: RepairFraction is %v; use a value in (0, 1], or 0 for the default %v",
			c.RepairFraction, DefaultRepairFraction)
	}
	return c, nil
}

// Node states.
const (
	stateLive uint8 = iota // reachable and returned by searches
	stateTomb              // removed or replaced; still routes searches until repair
	stateFree              // unlinked; the slot waits for reuse
)

// node is what the index knows about one slot besides its vector and links.
type node struct {
	id    int64
	ns    uint32 // index into Index.nsNames
	pool  uint32 // index into Index.poolNames
	level uint8
	state uint8
}

// attrKey counts live entries per (namespace, pool) so that a filtered
// search knows how many entries its filter matches without a scan.
type attrKey struct{ ns, pool uint32 }

// Index is an HNSW approximate nearest-neighbour index over unit vectors,
// scored by dot product (cosine similarity). It implements driver.VectorIndex.
//
// An Index is safe for concurrent use: searches share a read lock and run in
// parallel; Add and Remove take the write lock in short slices so that
// searches interleave with a large Add. A search that runs during an Add may
// see some of its entries and not others.
type Index struct {
	mu  sync.RWMutex
	cfg Config
	mL  float64 // level multiplier, 1/ln(M)
	rng *rand.PCG

	dim     int
	stride0 int         // level-0 link block: count + 2*M ids
	vecs    vector.Rows // row slot is slot's vector
	links0  []uint32    // slot*stride0: count, then neighbour slots
	indeg   []uint32    // level-0 in-links per slot, so that no link drop orphans a node
	upper   [][]uint32  // per slot: levels 1..level, blocks of count + M ids
	nodes   []node
	byID    map[int64]uint32 // live entries only
	free    []uint32         // stack of free slots
	entry   uint32
	top     int // level of the entry point; -1 when the graph is empty
	live    int
	tombs   int
	// unwalked counts nodes inserted in parallel since the last
	// reachability walk (maybeReconnect).
	unwalked int

	nsNames   []string
	nsIndex   map[string]uint32
	poolNames []driver.Pool
	poolIndex map[driver.Pool]uint32
	counts    map[attrKey]int

	build    *searcher   // scratch for inserts and repair, used under the write lock
	workers  []*searcher // scratch of a parallel build's goroutines (locking)
	searches sync.Pool   // *searcher for concurrent searches

	// locks guard the neighbour lists during a parallel build, slot i's
	// under locks[i%len(locks)]. A goroutine holds at most one at a time.
	locks [nodeLocks]sync.Mutex
}

// nodeLocks is the number of striped node locks: enough that two inserting
// goroutines rarely wait for each other.
const nodeLocks = 1024

func (ix *Index) lockOf(slot uint32) *sync.Mutex { return &ix.locks[slot%nodeLocks] }

// New returns an empty index for vectors of dim dimensions. Every vector
// added and every query must have exactly dim components.
func New(dim int, cfg Config) (*Index, error) {
	if dim < 1 || dim > maxDim {
		return nil, driver.Invalidf("hnsw: dimension %d; use 1..%d", dim, maxDim)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ix := &Index{
		cfg:       cfg,
		dim:       dim,
		mL:        1 / math.Log(float64(cfg.M)),
		rng:       rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15),
		stride0:   2*cfg.M + 1,
		vecs:      vector.NewRows(dim, cfg.Precision),
		byID:      make(map[int64]uint32),
		top:       -1,
		nsIndex:   make(map[string]uint32),
		poolIndex: make(map[driver.Pool]uint32),
		counts:    make(map[attrKey]int),
		build:     new(searcher),
	}
	return ix, nil
}

// SetWorkers sets Config.Workers for later inserts (0: one per CPU). Load
// leaves it at 0, since it is not saved.
func (ix *Index) SetWorkers(n int) error {
	if n < 0 || n > maxWorkers {
		return driver.Invalidf("hnsw: Workers is %d; use 1..%d, or 0 for one per CPU", n, maxWorkers)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.cfg.Workers = n
	return nil
}

// Config returns the index's parameters with defaults filled in.
func (ix *Index) Config() Config {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.cfg
}

// Precision returns the precision the index stores its vectors at.
func (ix *Index) Precision() vector.Precision { return ix.cfg.Precision }

// Len returns the number of live entries.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

// Holds reports whether the index holds e as given: a live entry e.ID in
// e.Namespace and e.Pool whose vector has cosine similarity at least
// driver.HoldsSimilarity with e.Vector (see driver.VectorHolder).
func (ix *Index) Holds(e driver.VectorEntry) bool {
	if len(e.Vector) != ix.dim {
		return false
	}
	v, ok := unitCopy(e.Vector)
	if !ok {
		return false
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	slot, ok := ix.byID[e.ID]
	if !ok {
		return false
	}
	n := &ix.nodes[slot]
	return ix.nsNames[n.ns] == e.Namespace && ix.poolNames[n.pool] == e.Pool &&
		ix.vecs.Dot(v, int(slot)) >= driver.HoldsSimilarity
}

// Stats describes an index's shape.
type Stats struct {
	Dim        int
	Live       int // entries returned by searches
	Tombstones int // removed or replaced entries awaiting repair
	Free       int // slots freed by repair, reused by later inserts
	Levels     int // number of graph levels
}

// Stats returns the index's current shape.
func (ix *Index) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return Stats{Dim: ix.dim, Live: ix.live, Tombstones: ix.tombs, Free: len(ix.free), Levels: ix.top + 1}
}

// addChunk is how many entries Add inserts per hold of the write lock, per
// worker.
const addChunk = 32

// workers returns how many goroutines insert a batch.
func (c Config) workers() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return max(1, runtime.GOMAXPROCS(0))
}

// Add inserts entries, replacing any live entry with the same ID (the old
// node becomes a tombstone unless only its namespace or pool changed); a
// later entry of the same call wins. The index keeps a normalised copy of
// each vector. Every entry is validated before any is inserted: a vector of
// the wrong dimension fails with driver.ErrDimensionMismatch, a zero or
// non-finite one with driver.ErrInvalid, and nothing is added. If ctx is
// cancelled part-way through a large batch, the entries before that point
// stay inserted.
//
// A large batch is inserted by Config.Workers goroutines at once, each
// linking its own entries while holding only the lock of the node whose
// neighbour list it reads or changes; this is the bulk-build path, used
// when a store's index is built or rebuilt.
func (ix *Index) Add(ctx context.Context, entries ...driver.VectorEntry) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hnsw add: %w", err)
	}
	vecs := make([][]float32, len(entries))
	for i := range entries {
		e := &entries[i]
		if len(e.Vector) != ix.dim {
			return fmt.Errorf("hnsw add id %d: %w: vector has %d dimensions, the index has %d (re-embed with the store's model or rebuild the index)",
				e.ID, driver.ErrDimensionMismatch, len(e.Vector), ix.dim)
		}
		v, ok := unitCopy(e.Vector)
		if !ok {
			return fmt.Errorf("hnsw add id %d: %w: vector is zero or has non-finite components", e.ID, driver.ErrInvalid)
		}
		vecs[i] = v
	}
	// Only the last entry of an ID counts.
	if len(entries) > 1 {
		last := make(map[int64]int, len(entries))
		for i := range entries {
			last[entries[i].ID] = i
		}
		if len(last) < len(entries) {
			es, vs := make([]driver.VectorEntry, 0, len(last)), make([][]float32, 0, len(last))
			for i := range entries {
				if last[entries[i].ID] == i {
					es, vs = append(es, entries[i]), append(vs, vecs[i])
				}
			}
			entries, vecs = es, vs
		}
	}
	chunk := addChunk * ix.cfg.workers()
	for start := 0; start < len(entries); start += chunk {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("hnsw add: %w", err)
		}
		end := min(start+chunk, len(entries))
		if err := ix.addLocked(entries[start:end], vecs[start:end]); err != nil {
			return err
		}
	}
	return nil
}

// pending is a node set up by addLocked and waiting to be linked.
type pending struct {
	slot  uint32
	level int
}

func (ix *Index) addLocked(entries []driver.VectorEntry, vecs [][]float32) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.nodes)+len(entries) > maxSlots {
		return fmt.Errorf("hnsw add: %w: the index is full (%d slots)", driver.ErrInvalid, maxSlots)
	}
	// Replaced entries first, so that a graph left with no live node is
	// dropped before the new nodes are set up.
	skip := make([]bool, len(entries))
	for i := range entries {
		e := &entries[i]
		old, ok := ix.byID[e.ID]
		if !ok {
			continue
		}
		if ix.vecs.Equal(int(old), vecs[i]) {
			// Same vector: only the attributes change; the graph stays.
			ns, pool := ix.intern(e.Namespace, e.Pool)
			n := &ix.nodes[old]
			ix.counts[attrKey{n.ns, n.pool}]--
			n.ns, n.pool = ns, pool
			ix.counts[attrKey{ns, pool}]++
			skip[i] = true
			continue
		}
		ix.tombstone(old)
	}
	if ix.live == 0 && ix.tombs > 0 {
		// Nothing live to connect to: drop the dead graph first.
		ix.repair()
	}
	todo := make([]pending, 0, len(entries))
	for i := range entries {
		if !skip[i] {
			todo = append(todo, ix.setUp(&entries[i], vecs[i]))
		}
	}
	ix.insertAll(todo)
	ix.maybeRepair()
	ix.maybeReconnect(len(todo))
	return nil
}

// maybeReconnect counts n nodes inserted and, once the nodes inserted in
// parallel since the last walk reach a tenth of the graph, walks level 0
// and links back any node the concurrent inserts cut off. Parallel inserts
// keep nodes reachable in nearly every interleaving, not all
// (TestParallelBuild under the race detector left 3–6 of 3,000 cut off
// about one run in eight). The walk costs O(graph), so it is amortised over
// a tenth of the graph's inserts rather than run per batch; Save's repair
// walks too, so a saved graph is always whole.
func (ix *Index) maybeReconnect(n int) {
	if ix.cfg.workers() <= 1 || n <= 1 {
		return
	}
	ix.unwalked += n
	if 10*ix.unwalked >= ix.live {
		ix.reconnectUnreachable(ix.build)
	}
}

// setUp allocates a live node for e with vector v and a random level; it is
// returned for insertAll to link.
func (ix *Index) setUp(e *driver.VectorEntry, v []float32) pending {
	ns, pool := ix.intern(e.Namespace, e.Pool)
	level := ix.randomLevel()
	slot := ix.alloc(v, level)
	ix.nodes[slot] = node{id: e.ID, ns: ns, pool: pool, level: uint8(level), state: stateLive}
	ix.byID[e.ID] = slot
	ix.live++
	ix.counts[attrKey{ns, pool}]++
	return pending{slot, level}
}

// insertAll links the nodes set up by setUp, in order with one worker. With
// more, the nodes that raise the graph's top level are inserted first, one
// at a time, so that the entry point stays fixed while the others are
// inserted in parallel; each goroutine takes the next node, searches the
// graph and links the node, locking one neighbour list at a time (the
// fine-grained locking of hnswlib). Vectors, levels and node states do not
// change meanwhile. The caller holds the write lock.
func (ix *Index) insertAll(todo []pending) {
	workers := min(ix.cfg.workers(), len(todo))
	if workers <= 1 {
		for _, p := range todo {
			ix.insert(ix.build, p.slot, p.level)
		}
		return
	}
	rest := todo[:0:0]
	for _, p := range todo {
		if p.level > ix.top {
			ix.insert(ix.build, p.slot, p.level)
		} else {
			rest = append(rest, p)
		}
	}
	for len(ix.workers) < workers {
		ix.workers = append(ix.workers, &searcher{locking: true})
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		s := ix.workers[w]
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(rest) {
					return
				}
				ix.insert(s, rest[i].slot, rest[i].level)
			}
		})
	}
	wg.Wait()
}

// alloc places v in a free slot, or a new one, with empty links.
func (ix *Index) alloc(v []float32, level int) uint32 {
	var slot uint32
	if n := len(ix.free); n > 0 {
		slot = ix.free[n-1]
		ix.free = ix.free[:n-1]
		ix.vecs.Set(int(slot), v)
		ix.links0[int(slot)*ix.stride0] = 0
	} else {
		slot = uint32(len(ix.nodes))
		ix.nodes = append(ix.nodes, node{})
		ix.vecs.Append(v)
		ix.links0 = append(ix.links0, make([]uint32, ix.stride0)...)
		ix.indeg = append(ix.indeg, 0)
		ix.upper = append(ix.upper, nil)
	}
	ix.upper[slot] = nil
	if level > 0 {
		ix.upper[slot] = make([]uint32, level*(ix.cfg.M+1))
	}
	return slot
}

// randomLevel draws a level with P(level >= l) = M^-l (the paper's mL = 1/ln M).
func (ix *Index) randomLevel() int {
	// 1-Float64 lies in (0, 1], so the log is finite.
	u := 1 - float64(ix.rng.Uint64()>>11)/(1<<53)
	return min(int(-math.Log(u)*ix.mL), maxLevel)
}

func (ix *Index) intern(ns string, pool driver.Pool) (uint32, uint32) {
	n, ok := ix.nsIndex[ns]
	if !ok {
		n = uint32(len(ix.nsNames))
		ix.nsNames = append(ix.nsNames, ns)
		ix.nsIndex[ns] = n
	}
	p, ok := ix.poolIndex[pool]
	if !ok {
		p = uint32(len(ix.poolNames))
		ix.poolNames = append(ix.poolNames, pool)
		ix.poolIndex[pool] = p
	}
	return n, p
}

// Remove deletes ids; unknown ids are ignored. Removed entries leave
// tombstones that keep routing searches until the next repair (see
// Config.RepairFraction).
func (ix *Index) Remove(ctx context.Context, ids ...int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hnsw remove: %w", err)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, id := range ids {
		if slot, ok := ix.byID[id]; ok {
			ix.tombstone(slot)
		}
	}
	ix.maybeRepair()
	return nil
}

func (ix *Index) tombstone(slot uint32) {
	n := &ix.nodes[slot]
	delete(ix.byID, n.id)
	ix.counts[attrKey{n.ns, n.pool}]--
	n.state = stateTomb
	ix.live--
	ix.tombs++
}

// Repair reconnects the graph around tombstones now and frees their slots,
// whatever their number. Save calls it, so a saved index holds no removed
// vectors.
func (ix *Index) Repair() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.repair()
}

func (ix *Index) maybeRepair() {
	if ix.tombs > 0 && float64(ix.tombs) > ix.cfg.RepairFraction*float64(ix.live+ix.tombs) {
		ix.repair()
	}
}

// vec returns slot's stored vector as float32: at Float32 the stored row
// (not a copy), at Int8 decoded into *buf (see vector.Rows.Row), a scratch
// buffer of the caller's.
func (ix *Index) vec(slot uint32, buf *[]float32) []float32 {
	v := ix.vecs.Row(int(slot), *buf)
	if ix.cfg.Precision != vector.Float32 {
		*buf = v
	}
	return v
}

// maxLinks is the capacity of a level's neighbour list.
func (ix *Index) maxLinks(level int) int {
	if level == 0 {
		return 2 * ix.cfg.M
	}
	return ix.cfg.M
}

// block returns the count-prefixed neighbour block of slot at level.
func (ix *Index) block(slot uint32, level int) []uint32 {
	if level == 0 {
		i := int(slot) * ix.stride0
		return ix.links0[i : i+ix.stride0 : i+ix.stride0]
	}
	w := ix.cfg.M + 1
	i := (level - 1) * w
	return ix.upper[slot][i : i+w : i+w]
}

// neighbors returns slot's neighbours at level (a view, not a copy).
func (ix *Index) neighbors(slot uint32, level int) []uint32 {
	b := ix.block(slot, level)
	return b[1 : 1+b[0]]
}

// setNeighbors replaces slot's neighbours at level.
func (ix *Index) setNeighbors(slot uint32, level int, ns []uint32) {
	b := ix.block(slot, level)
	if level == 0 {
		for _, x := range b[1 : 1+b[0]] {
			atomic.AddUint32(&ix.indeg[x], ^uint32(0))
		}
	}
	b[0] = uint32(copy(b[1:], ns))
	if level == 0 {
		for _, x := range b[1 : 1+b[0]] {
			atomic.AddUint32(&ix.indeg[x], 1)
		}
	}
}

// unitCopy returns a copy of v scaled to unit length with vector.Normalize,
// as the exact index stores it, so that both score alike. It reports false
// for a zero or non-finite vector, or any that does not come out unit length.
func unitCopy(v []float32) ([]float32, bool) {
	c := slices.Clone(v)
	if !vector.Normalize(c) {
		return nil, false
	}
	n := vector.Dot(c, c)
	return c, n > 0.99 && n < 1.01 // false for NaN and ±Inf
}
