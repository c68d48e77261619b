package hnsw

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"unsafe"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
)

// The file format, version 1. All integers are little-endian.
//
//	magic "MEMOSHNW", version u32
//	config: M, EfConstruction, EfSearch u32; ExactBelow i32; Seed u64; RepairFraction f64
//	rng: length u32, state (math/rand/v2 PCG binary form)
//	dim, slots, entry u32; top i32 (-1: empty graph)
//	namespaces, then pools: count u32, then per name length u32 and bytes
//	nodes: per slot id i64, namespace u32, pool u32, level u8, state u8
//	vectors: slots*dim f32
//	level-0 links: per slot a block of count u32 and 2*M slots u32
//	upper links: per non-free slot with level > 0, level blocks of count u32 and M slots u32
//	free slots: count u32, then the free-list stack bottom to top, u32 each
//	CRC-32C of everything above, u32
//
// Version 2 is version 1 with the vector precision (u32, see
// vector.Precision) after the version, and the vectors at that precision: at
// Int8 slots*dim codes (i8), then slots scales (f32). A Float32 index is
// written as version 1.
//
// A new version gets a new number; Load rejects versions it does not know.
const (
	magic         = "MEMOSHNW"
	formatVersion = 1
	// formatPrecision is the first version that records the precision.
	formatPrecision = 2
	nodeBytes       = 18
	maxNameBytes    = 1 << 16
	chunkBytes      = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Save writes the index to w in a versioned binary format ending in a
// checksum, so that Load can reopen it without rebuilding the graph. It first
// repairs the graph if it holds tombstones, so removed vectors are not
// written (a Remove racing with Save may still leave a few). Searches run
// during Save; Add and Remove wait for it.
func (ix *Index) Save(w io.Writer) error {
	ix.mu.Lock()
	ix.repair()
	ix.mu.Unlock()

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	bw := bufio.NewWriterSize(w, 1<<20)
	e := &encoder{w: bw}
	e.write([]byte(magic))
	c := ix.cfg
	if c.Precision == vector.Float32 {
		e.u32(formatVersion)
	} else {
		e.u32(formatPrecision)
		e.u32(uint32(c.Precision))
	}
	e.u32(uint32(c.M))
	e.u32(uint32(c.EfConstruction))
	e.u32(uint32(c.EfSearch))
	e.u32(uint32(int32(c.ExactBelow)))
	e.u64(c.Seed)
	e.u64(math.Float64bits(c.RepairFraction))
	rng, err := ix.rng.MarshalBinary()
	if err != nil {
		return fmt.Errorf("hnsw: save: %w", err)
	}
	e.u32(uint32(len(rng)))
	e.write(rng)
	e.u32(uint32(ix.dim))
	e.u32(uint32(len(ix.nodes)))
	e.u32(ix.entry)
	e.u32(uint32(int32(ix.top)))
	e.u32(uint32(len(ix.nsNames)))
	for _, s := range ix.nsNames {
		e.u32(uint32(len(s)))
		e.write([]byte(s))
	}
	e.u32(uint32(len(ix.poolNames)))
	for _, p := range ix.poolNames {
		e.u32(uint32(len(p)))
		e.write([]byte(p))
	}
	for i := range ix.nodes {
		n := &ix.nodes[i]
		var b [nodeBytes]byte
		binary.LittleEndian.PutUint64(b[0:], uint64(n.id))
		binary.LittleEndian.PutUint32(b[8:], n.ns)
		binary.LittleEndian.PutUint32(b[12:], n.pool)
		b[16], b[17] = n.level, n.state
		e.write(b[:])
	}
	f, codes, scales := ix.vecs.Raw()
	if c.Precision == vector.Float32 {
		e.f32s(f)
	} else {
		e.write(int8Bytes(codes))
		e.f32s(scales)
	}
	e.u32s(ix.links0)
	for i := range ix.nodes {
		if ix.nodes[i].state != stateFree {
			e.u32s(ix.upper[i])
		}
	}
	e.u32(uint32(len(ix.free)))
	e.u32s(ix.free)
	e.writeChecksum()
	if e.err != nil {
		return fmt.Errorf("hnsw: save: %w", e.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("hnsw: save: %w", err)
	}
	return nil
}

// Load reads an index written by Save. It reads exactly the saved bytes
// from r, no further. Input that is not an index, is truncated, fails its
// checksum or is inconsistent fails with an error wrapping driver.ErrInvalid
// that says so; an error reading r is returned wrapped.
//
// Load grows the vectors and links as they arrive, so that a damaged count
// cannot make it allocate more than the input holds. When r is an
// *io.LimitedReader, whose N says how many bytes the input holds, Load
// allocates each of them at once when the input can hold it: a large graph
// loads without copying its vectors from one grown array to the next.
func Load(r io.Reader) (*Index, error) {
	d := &decoder{r: r, left: -1}
	if lr, ok := r.(*io.LimitedReader); ok {
		d.left = lr.N
	}
	ix, err := load(d)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: hnsw: load: the index is truncated; rebuild it from the store", driver.ErrInvalid)
		}
		return nil, err
	}
	return ix, nil
}

// corrupt reports an inconsistency found while loading.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: hnsw: load: corrupt index (%s); rebuild it from the store",
		driver.ErrInvalid, fmt.Sprintf(format, args...))
}

func load(d *decoder) (*Index, error) {
	ix, slots, err := loadHeader(d)
	if err != nil {
		return nil, err
	}
	if err := loadNames(d, ix); err != nil {
		return nil, err
	}
	upperWords, err := loadNodes(d, ix, slots)
	if err != nil {
		return nil, err
	}
	if err := loadLinks(d, ix, slots, upperWords); err != nil {
		return nil, err
	}
	if err := loadFreeList(d, ix, slots); err != nil {
		return nil, err
	}
	if err := d.checkChecksum(); err != nil {
		return nil, err
	}
	return ix, nil
}

// loadHeader reads the magic, the format version, the configuration, the
// random state and the graph's shape, and returns the empty index they
// describe and its number of slots.
func loadHeader(d *decoder) (*Index, int, error) {
	m := make([]byte, len(magic))
	d.read(m)
	if d.err != nil {
		return nil, 0, d.err
	}
	if string(m) != magic {
		return nil, 0, fmt.Errorf("%w: hnsw: load: not an HNSW index (bad magic %q)", driver.ErrInvalid, m)
	}
	var prec vector.Precision
	switch v := d.u32(); {
	case d.err != nil:
	case v == formatPrecision:
		p := d.u32()
		if prec = vector.Precision(p); d.err == nil && (!prec.Valid() || prec == vector.Float32) {
			return nil, 0, corrupt("vector precision %d", p)
		}
	case v != formatVersion:
		return nil, 0, fmt.Errorf("%w: hnsw: load: index format version %d is not supported (this build reads %d and %d); rebuild the index",
			driver.ErrInvalid, v, formatVersion, formatPrecision)
	}
	cfg := Config{
		Precision:      prec,
		M:              int(d.u32()),
		EfConstruction: int(d.u32()),
		EfSearch:       int(d.u32()),
		ExactBelow:     int(int32(d.u32())),
		Seed:           d.u64(),
		RepairFraction: math.Float64frombits(d.u64()),
	}
	rngLen := d.u32()
	if d.err != nil {
		return nil, 0, d.err
	}
	if full, err := cfg.withDefaults(); err != nil || full != cfg {
		return nil, 0, corrupt("bad parameters %+v", cfg)
	}
	if rngLen > 64 {
		return nil, 0, corrupt("random state of %d bytes", rngLen)
	}
	rngState := make([]byte, rngLen)
	d.read(rngState)
	if d.err != nil {
		return nil, 0, d.err
	}
	dim, slots, entry, top := int(d.u32()), int(d.u32()), d.u32(), int(int32(d.u32()))
	if d.err != nil {
		return nil, 0, d.err
	}
	ix, err := New(dim, cfg)
	if err != nil {
		return nil, 0, corrupt("%v", err)
	}
	ix.rng = new(rand.PCG)
	if err := ix.rng.UnmarshalBinary(rngState); err != nil {
		return nil, 0, corrupt("random state: %v", err)
	}
	switch {
	case slots > maxSlots:
		return nil, 0, corrupt("%d slots", slots)
	case top < -1 || top > maxLevel || (top >= 0 && int(entry) >= slots):
		return nil, 0, corrupt("entry point %d at level %d", entry, top)
	}
	ix.entry, ix.top = entry, top
	return ix, slots, nil
}

// loadNames reads the namespace and pool name tables.
func loadNames(d *decoder, ix *Index) error {
	for _, names := range []func(string){
		func(s string) { ix.nsNames = append(ix.nsNames, s); ix.nsIndex[s] = uint32(len(ix.nsNames) - 1) },
		func(s string) {
			ix.poolNames = append(ix.poolNames, driver.Pool(s))
			ix.poolIndex[driver.Pool(s)] = uint32(len(ix.poolNames) - 1)
		},
	} {
		n := d.u32()
		for range n {
			l := d.u32()
			if d.err != nil {
				return d.err
			}
			if l > maxNameBytes {
				return corrupt("name of %d bytes", l)
			}
			b := make([]byte, l)
			d.read(b)
			if d.err != nil {
				return d.err
			}
			names(string(b))
		}
	}
	if len(ix.nsIndex) != len(ix.nsNames) || len(ix.poolIndex) != len(ix.poolNames) {
		return corrupt("duplicate namespace or pool name")
	}

	return nil
}

// loadNodes reads the slots' node records, rebuilding the id map, the live
// and tombstone counts and the free slots, and returns the number of upper
// link words that follow.
func loadNodes(d *decoder, ix *Index, slots int) (int, error) {
	cfg, top, entry := ix.cfg, ix.top, ix.entry
	// Grow the nodes and the id map as data arrives, so a corrupt slot
	// count cannot make Load allocate more than the input holds, beyond a
	// bounded first guess; when the input says it holds them all, both are
	// sized at once (growing the map to 1M entries took a tenth of a cold
	// open).
	ix.nodes = make([]node, 0, d.capFor(slots, nodeBytes, 1<<22))
	ix.byID = make(map[int64]uint32, d.capFor(slots, nodeBytes, 1<<16))
	upperWords := 0
	for done := 0; done < slots; {
		n := min(slots-done, chunkBytes/nodeBytes)
		b := d.chunk(n * nodeBytes)
		if d.err != nil {
			return 0, d.err
		}
		for i := range n {
			r := b[i*nodeBytes:]
			nd := node{
				id:    int64(binary.LittleEndian.Uint64(r)),
				ns:    binary.LittleEndian.Uint32(r[8:]),
				pool:  binary.LittleEndian.Uint32(r[12:]),
				level: r[16],
				state: r[17],
			}
			slot := uint32(done + i)
			switch {
			case nd.state > stateFree || int(nd.level) > maxLevel:
				return 0, corrupt("slot %d: state %d, level %d", slot, nd.state, nd.level)
			case nd.state == stateFree:
				if nd != (node{state: stateFree}) {
					return 0, corrupt("free slot %d holds data", slot)
				}
				ix.free = append(ix.free, slot) // order checked against the saved list below
			case int(nd.ns) >= len(ix.nsNames) || int(nd.pool) >= len(ix.poolNames) || int(nd.level) > top:
				return 0, corrupt("slot %d: namespace %d, pool %d, level %d", slot, nd.ns, nd.pool, nd.level)
			case nd.state == stateLive:
				if _, dup := ix.byID[nd.id]; dup {
					return 0, corrupt("id %d appears twice", nd.id)
				}
				ix.byID[nd.id] = slot
				ix.live++
				ix.counts[attrKey{nd.ns, nd.pool}]++
			default:
				ix.tombs++
			}
			if nd.state != stateFree {
				upperWords += int(nd.level) * (cfg.M + 1)
			}
			ix.nodes = append(ix.nodes, nd)
		}
		done += n
	}
	if top >= 0 && (ix.nodes[entry].state == stateFree || int(ix.nodes[entry].level) != top) {
		return 0, corrupt("entry point %d is not a node at level %d", entry, top)
	}
	if top < 0 && len(ix.free) != slots {
		return 0, corrupt("nodes but no entry point")
	}

	return upperWords, nil
}

// loadLinks reads the vectors and the level-0 and upper link blocks, checks
// every link and counts in-degrees.
func loadLinks(d *decoder, ix *Index, slots, upperWords int) error {
	cfg, dim := ix.cfg, ix.dim
	var f, scales []float32
	var codes []int8
	if ix.cfg.Precision == vector.Float32 {
		f = d.f32s(slots*dim, 1<<26)
	} else {
		codes = d.i8s(slots*dim, 1<<26)
		scales = d.f32s(slots, 1<<24)
	}
	ix.links0 = d.u32s(slots*ix.stride0, 1<<26)
	upper := d.u32s(upperWords, 1<<24)
	if d.err != nil {
		return d.err
	}
	var err error
	if ix.vecs, err = vector.RowsOf(dim, ix.cfg.Precision, slots, f, codes, scales); err != nil {
		return corrupt("%v", err)
	}
	ix.upper = make([][]uint32, slots)
	for i := range ix.nodes {
		if n := &ix.nodes[i]; n.state != stateFree && n.level > 0 {
			w := int(n.level) * (cfg.M + 1)
			ix.upper[i], upper = upper[:w:w], upper[w:]
		}
	}
	// Each slot's level, -1 when free: the links point anywhere, and a byte
	// a slot stays in the CPU's caches where the nodes do not (at 1M slots
	// the check took 0.4 s reading the nodes).
	levels := make([]int8, slots)
	for i := range ix.nodes {
		levels[i] = int8(ix.nodes[i].level)
		if ix.nodes[i].state == stateFree {
			levels[i] = -1
		}
	}
	ix.indeg = make([]uint32, slots)
	for i := range ix.nodes {
		for l := 0; l <= int(ix.nodes[i].level); l++ {
			b := ix.block(uint32(i), l)
			if int(b[0]) > ix.maxLinks(l) || (ix.nodes[i].state == stateFree && b[0] != 0) {
				return corrupt("slot %d level %d: %d links", i, l, b[0])
			}
			for _, x := range b[1 : 1+b[0]] {
				if int(x) >= slots || int(levels[x]) < l {
					return corrupt("slot %d level %d links to slot %d", i, l, x)
				}
				if l == 0 {
					ix.indeg[x]++
				}
			}
		}
	}

	return nil
}

// loadFreeList reads the free list and checks it against the free slots
// found among the nodes.
func loadFreeList(d *decoder, ix *Index, slots int) error {
	nfree := d.u32()
	if d.err != nil {
		return d.err
	}
	if int(nfree) != len(ix.free) {
		return corrupt("%d free slots listed, %d found", nfree, len(ix.free))
	}
	seen := make(map[uint32]bool, nfree)
	saved := d.u32s(int(nfree), 1<<20)
	if d.err != nil {
		return d.err
	}
	for _, s := range saved {
		if int(s) >= slots || ix.nodes[s].state != stateFree || seen[s] {
			return corrupt("free list holds slot %d", s)
		}
		seen[s] = true
	}
	ix.free = saved
	return nil
}

// encoder writes little-endian values and keeps a running CRC-32C; after the
// first error it does nothing.
type encoder struct {
	w   io.Writer
	crc uint32
	err error
	buf [chunkBytes]byte
}

func (e *encoder) write(b []byte) {
	if e.err != nil {
		return
	}
	e.crc = crc32.Update(e.crc, castagnoli, b)
	_, e.err = e.w.Write(b)
}

func (e *encoder) u32(v uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	e.write(b[:])
}

func (e *encoder) u64(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	e.write(b[:])
}

func (e *encoder) u32s(s []uint32) {
	if littleEndian {
		e.write(wordBytes(s))
		return
	}
	for len(s) > 0 {
		n := min(len(s), len(e.buf)/4)
		for i, v := range s[:n] {
			binary.LittleEndian.PutUint32(e.buf[4*i:], v)
		}
		e.write(e.buf[:4*n])
		s = s[n:]
	}
}

func (e *encoder) f32s(s []float32) { e.u32s(floatWords(s)) }

func (e *encoder) writeChecksum() {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], e.crc)
	if e.err == nil {
		_, e.err = e.w.Write(b[:])
	}
}

// decoder reads little-endian values with io.ReadFull (never past what it
// is asked for) and keeps a running CRC-32C; after the first error it
// returns zeros.
type decoder struct {
	r    io.Reader
	crc  uint32
	err  error
	left int64 // bytes the input still holds; -1: unknown
	buf  [chunkBytes]byte
}

// capFor returns how many of n values of size bytes each to allocate up
// front: all of them when the input is known to hold them, else at most
// prealloc.
func (d *decoder) capFor(n, size, prealloc int) int {
	if d.left >= 0 && int64(n)*int64(size) <= d.left {
		return n
	}
	return min(n, prealloc)
}

func (d *decoder) read(b []byte) {
	if d.err != nil {
		clear(b)
		return
	}
	if d.left >= 0 {
		d.left -= int64(len(b))
	}
	if _, d.err = io.ReadFull(d.r, b); d.err != nil {
		if d.err == io.EOF {
			d.err = io.ErrUnexpectedEOF
		}
		if !errors.Is(d.err, io.ErrUnexpectedEOF) {
			d.err = fmt.Errorf("hnsw: load: %w", d.err)
		}
		clear(b)
		return
	}
	d.crc = crc32.Update(d.crc, castagnoli, b)
}

// chunk reads n <= chunkBytes bytes into the decoder's buffer.
func (d *decoder) chunk(n int) []byte {
	b := d.buf[:n]
	d.read(b)
	return b
}

func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.chunk(4)) }
func (d *decoder) u64() uint64 { return binary.LittleEndian.Uint64(d.chunk(8)) }

// u32s reads n values, allocating at most prealloc up front (a damaged
// count fails on the missing bytes before it allocates much).
func (d *decoder) u32s(n, prealloc int) []uint32 {
	s := make([]uint32, 0, d.capFor(n, 4, prealloc))
	for len(s) < n && d.err == nil {
		j := len(s)
		s = slices.Grow(s, min(n-j, readWords))
		s = s[:min(n, cap(s))]
		d.words(s[j:])
	}
	return s
}

// f32s reads n values, allocating at most prealloc up front.
func (d *decoder) f32s(n, prealloc int) []float32 {
	s := make([]float32, 0, d.capFor(n, 4, prealloc))
	for len(s) < n && d.err == nil {
		j := len(s)
		s = slices.Grow(s, min(n-j, readWords))
		s = s[:min(n, cap(s))]
		d.words(floatWords(s[j:]))
	}
	return s
}

// i8s reads n bytes as int8s, allocating at most prealloc up front.
func (d *decoder) i8s(n, prealloc int) []int8 {
	s := make([]int8, 0, d.capFor(n, 1, prealloc))
	for len(s) < n && d.err == nil {
		j := len(s)
		s = slices.Grow(s, min(n-j, 4*readWords))
		s = s[:min(n, cap(s))]
		d.read(int8Bytes(s[j:]))
	}
	return s
}

// int8Bytes views s's memory as bytes.
func int8Bytes(s []int8) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// readWords is the most a read of many values asks for at once, in words.
const readWords = 1 << 20

// words fills s with little-endian words: on a little-endian machine the
// bytes are read straight into s, which loads 100k vectors several times
// faster than decoding each.
func (d *decoder) words(s []uint32) {
	if littleEndian {
		d.read(wordBytes(s))
		return
	}
	for len(s) > 0 && d.err == nil {
		k := min(len(s), chunkBytes/4)
		b := d.chunk(4 * k)
		for i := range k {
			s[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
		s = s[k:]
	}
}

// littleEndian: the machine stores words as the file does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// wordBytes views s's memory as bytes.
func wordBytes(s []uint32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
}

// floatWords views s's memory as words, the bits of each float.
func floatWords(s []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

func (d *decoder) checkChecksum() error {
	want := d.crc
	var b [4]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return io.ErrUnexpectedEOF
		}
		return fmt.Errorf("hnsw: load: %w", err)
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != want {
		return fmt.Errorf("%w: hnsw: load: checksum mismatch (stored %08x, computed %08x): the index file is damaged; rebuild it from the store",
			driver.ErrInvalid, got, want)
	}
	return nil
}
