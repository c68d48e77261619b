package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/memos-go/memos/core/driver"
)

// exactMagic starts a snapshot of an Exact index; the digit is the format
// version. Version 1 holds float32 vectors; version 2 follows the magic with
// a precision byte and holds the vectors at that precision (at Int8: the
// codes, then the per-vector scales as float32). Version 3, which Save
// writes, is version 2 for every precision with zero bytes before the
// vectors (and at Int8 before the scales) so that they start at a multiple
// of exactAlign bytes from the start of the snapshot: a snapshot read in
// place (LoadExactBytes over a mapped file) then holds them aligned, and
// the index searches them where they are.
const (
	exactMagic   = "MEMOSEX1"
	exactMagicV2 = "MEMOSEX2"
	exactMagicV3 = "MEMOSEX3"
)

// exactAlign is the alignment of the vectors in a version-3 snapshot.
const exactAlign = 64

var _ driver.PersistentVectorIndex = (*Exact)(nil)

// Save writes a snapshot of the index to w: a versioned binary format
// (little endian) ending with a CRC-32 of everything before it. Loading a
// snapshot is a sequential read, much cheaper than re-reading every vector
// from the store; started at a multiple of 64 bytes into a file, it can be
// searched in place (LoadExactBytes).
func (x *Exact) Save(w io.Writer) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	cw := &countWriter{w: bw}
	put := func(v any) error { return binary.Write(cw, binary.LittleEndian, v) }
	putNames := func(names []string) error {
		if err := put(uint32(len(names))); err != nil {
			return err
		}
		for _, s := range names {
			if len(s) > math.MaxUint16 {
				return fmt.Errorf("name of %d bytes is too long", len(s))
			}
			if err := put(uint16(len(s))); err != nil {
				return err
			}
			if _, err := io.WriteString(cw, s); err != nil {
				return err
			}
		}
		return nil
	}
	pad := func() error {
		_, err := cw.Write(make([]byte, padding(cw.n)))
		return err
	}
	prec := x.rows.Precision()
	f, codes, scales := x.rows.Raw()
	vectors := func() error {
		if prec == Float32 {
			return errors.Join(pad(), putSlice(cw, f))
		}
		return errors.Join(pad(), putSlice(cw, codes), pad(), putSlice(cw, scales))
	}
	err := errors.Join(
		put([]byte(exactMagicV3)), put(uint8(prec)),
		put(uint32(x.dim)), put(uint64(len(x.ids))), putSlice(cw, x.ids),
		putNames(x.ns.names), putNames(x.pools.names), putSlice(cw, x.nsOf), putSlice(cw, x.pool),
		vectors(),
		bw.Flush(),
	)
	if err != nil {
		return fmt.Errorf("vector save: %w", err)
	}
	if err := binary.Write(w, binary.LittleEndian, crc.Sum32()); err != nil {
		return fmt.Errorf("vector save: %w", err)
	}
	return nil
}

// padding is the number of zero bytes that take offset n to a multiple of
// exactAlign.
func padding(n int64) int64 { return -n & (exactAlign - 1) }

// countWriter counts what passes through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// putSlice writes s little endian. binary.Write would first copy the whole
// slice into a buffer of its own (1 GB for a million 256-dimension
// vectors, allocated at every Close); on a little-endian machine s's bytes
// are written as they are, on another a chunk at a time.
func putSlice[T int8 | uint32 | int64 | float32](w io.Writer, s []T) error {
	size := int(unsafe.Sizeof(*new(T)))
	if littleEndian {
		_, err := w.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size*len(s)))
		return err
	}
	const chunk = 1 << 14
	for len(s) > 0 {
		n := min(len(s), chunk)
		if err := binary.Write(w, binary.LittleEndian, s[:n]); err != nil {
			return err
		}
		s = s[n:]
	}
	return nil
}

// littleEndian: the machine stores values as snapshots do.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// LoadExact reads a snapshot written by Save. A truncated, corrupt or
// foreign snapshot is an error; the caller then rebuilds from the store.
// When r is an *io.LimitedReader, whose N says how many bytes the snapshot
// holds, the snapshot is read into one buffer of that size, and a header
// whose count cannot fit in it is refused.
func LoadExact(r io.Reader) (*Exact, error) {
	var b []byte
	var err error
	if lr, ok := r.(*io.LimitedReader); ok && lr.N >= 0 && lr.N == int64(int(lr.N)) {
		b = make([]byte, lr.N)
		var n int
		n, err = io.ReadFull(lr, b)
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			b, err = b[:n], nil // shorter than said: the header check tells
		}
	} else {
		b, err = io.ReadAll(r)
	}
	if err != nil {
		return nil, snapshotErr("data", err)
	}
	// b is the index's own: it writes its vectors there in place.
	return loadExact(b, nil, true)
}

// LoadExactBytes is LoadExact of the snapshot in b, which may be a mapped
// file (core/internal/fmap). The index does not copy the vectors of a
// version-3 snapshot whose vectors b holds aligned (Save's, starting at a
// multiple of 64 bytes of b): it searches them in b, which it never
// writes, until its first write copies them. b must stay valid and
// unchanged until then. release, if not nil, is called once the index no
// longer reads b: at that first write, when the index is garbage
// collected, or before LoadExactBytes returns when the index copied
// everything or the snapshot could not be loaded.
func LoadExactBytes(b []byte, release func()) (*Exact, error) {
	return loadExact(b, release, false)
}

// loadExact is LoadExactBytes; own says that b is the index's to write.
func loadExact(b []byte, release func(), own bool) (*Exact, error) {
	kept := false
	if release != nil {
		defer func() {
			if !kept {
				release()
			}
		}()
	}
	d := &decoder{b: b}
	prec, dim, n, v3, err := readExactHeader(d, int64(len(b)))
	if err != nil {
		return nil, err
	}
	x := NewExactPrecision(dim, prec)
	x.slots = nil // built at the first write (slotMap)
	nsNames, poolNames, borrowed, err := x.readEntries(d, n, v3)
	if err != nil {
		return nil, err
	}
	sum := crc32.ChecksumIEEE(b[:d.off])
	want := d.uint32()
	if d.err != nil {
		return nil, snapshotErr("checksum", d.err)
	}
	if sum != want {
		return nil, snapshotErr("checksum", fmt.Errorf("CRC-32 %08x, recorded %08x", sum, want))
	}
	if err := x.rebuild(nsNames, poolNames); err != nil {
		return nil, err
	}
	if borrowed && !own {
		x.rows.borrowed = true
		if release != nil {
			kept = true
			rel := &releaser{fn: release}
			x.release = rel
			runtime.AddCleanup(x, (*releaser).do, rel)
		}
	}
	return x, nil
}

// releaser calls fn once.
type releaser struct {
	once sync.Once
	fn   func()
}

func (r *releaser) do() { r.once.Do(r.fn) }

// own makes the index's vectors its own before a write: vectors read in
// place from a snapshot (LoadExactBytes) are copied, and the snapshot's
// memory released. x.mu is held for writing.
func (x *Exact) own() {
	if x.rows.own() && x.release != nil {
		x.release.do()
		x.release = nil
	}
}

// snapshotErr is LoadExact's error for a snapshot whose part what cannot
// be read.
func snapshotErr(what string, err error) error {
	return fmt.Errorf("vector load: %w: snapshot %s: %v", driver.ErrInvalid, what, err)
}

// decoder reads little-endian values from a snapshot in memory. After the
// first read past the end, err is set and every read returns zeros.
type decoder struct {
	b   []byte
	off int
	err error
}

// take returns the next n bytes.
func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.off {
		d.err = io.ErrUnexpectedEOF
		return nil
	}
	p := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return p
}

func (d *decoder) uint8() uint8 {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (d *decoder) uint16() uint16 {
	if p := d.take(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (d *decoder) uint32() uint32 {
	if p := d.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (d *decoder) uint64() uint64 {
	if p := d.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// align skips the padding Save writes before the vectors of a version-3
// snapshot.
func (d *decoder) align() { d.take(int(padding(int64(d.off)))) }

// slice returns the next n values of type T: b's own bytes when the
// machine is little endian and they are aligned for T (borrowed), else a
// copy.
func slice[T int8 | uint32 | int64 | float32](d *decoder, n int) (s []T, borrowed bool) {
	size := int(unsafe.Sizeof(*new(T)))
	if n > (len(d.b)-d.off)/size {
		d.err = io.ErrUnexpectedEOF
	}
	p := d.take(n * size)
	if d.err != nil {
		return nil, false
	}
	if n == 0 {
		return []T{}, false
	}
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(p)))%unsafe.Alignof(*new(T)) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(p))), n), true
	}
	s = make([]T, n)
	if littleEndian {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), n*size), p)
		return s, false
	}
	if err := binary.Read(&byteReader{p}, binary.LittleEndian, s); err != nil {
		d.err = err
	}
	return s, false
}

// copied is slice, always copied: for what the index changes in place.
func copied[T int8 | uint32 | int64 | float32](d *decoder, n int) []T {
	s, borrowed := slice[T](d, n)
	if borrowed {
		return append([]T(nil), s...)
	}
	return s
}

// byteReader reads p.
type byteReader struct{ p []byte }

func (r *byteReader) Read(b []byte) (int, error) {
	if len(r.p) == 0 {
		return 0, io.EOF
	}
	n := copy(b, r.p)
	r.p = r.p[n:]
	return n, nil
}

// readExactHeader reads a snapshot's header: the precision, the dimension,
// the number of vectors and whether the snapshot is of version 3. A count
// the holds bytes of the snapshot cannot hold is refused here, before a
// damaged header makes the load allocate it: the arrays are allocated whole.
func readExactHeader(d *decoder, holds int64) (prec Precision, dim, n int, v3 bool, err error) {
	magic := string(d.take(len(exactMagic)))
	if magic != exactMagic && magic != exactMagicV2 && magic != exactMagicV3 {
		return 0, 0, 0, false, snapshotErr("header", fmt.Errorf("not an exact-index snapshot (magic %q)", magic))
	}
	prec, v3 = Float32, magic == exactMagicV3
	if magic != exactMagic {
		b := d.uint8()
		if prec = Precision(b); d.err == nil && (!prec.Valid() || (prec == Float32 && !v3)) {
			return 0, 0, 0, false, snapshotErr("header", fmt.Errorf("unknown vector precision %d", b))
		}
	}
	dd, count := d.uint32(), d.uint64()
	if d.err != nil {
		return 0, 0, 0, false, snapshotErr("header", d.err)
	}
	if dd < 1 || dd > 1<<16 || count > math.MaxInt32 {
		return 0, 0, 0, false, snapshotErr("header", fmt.Errorf("implausible dimension %d or count %d", dd, count))
	}
	per := int64(8 + 4 + 4) // id, namespace, pool
	if prec == Float32 {
		per += 4 * int64(dd)
	} else {
		per += int64(dd) + 4 // codes, scale
	}
	if int64(count)*per > holds {
		return 0, 0, 0, false, snapshotErr("header", fmt.Errorf("%d vectors of %d dimensions do not fit the %d bytes the snapshot holds", count, dd, holds))
	}
	return prec, int(dd), int(count), v3, nil
}

// readNames reads an interner's names (at most n+1 of them).
func readNames(d *decoder, n int) ([]string, error) {
	k := d.uint32()
	if d.err != nil {
		return nil, d.err
	}
	if k > uint32(n)+1 {
		return nil, fmt.Errorf("implausible name count %d", k)
	}
	names := make([]string, k)
	for i := range names {
		names[i] = string(d.take(int(d.uint16())))
		if d.err != nil {
			return nil, d.err
		}
	}
	return names, nil
}

// readEntries reads the n entries of a snapshot into x, which is empty:
// their ids, the namespace and pool names, each entry's namespace and pool
// and the vectors. The ids, namespaces and pools are copied (the index
// changes them in place); the vectors are borrowed from the snapshot where
// its layout allows (borrowed reports it).
func (x *Exact) readEntries(d *decoder, n int, v3 bool) (nsNames, poolNames []string, borrowed bool, err error) {
	if x.ids = copied[int64](d, n); d.err != nil {
		return nil, nil, false, snapshotErr("ids", d.err)
	}
	if nsNames, err = readNames(d, n); err != nil {
		return nil, nil, false, snapshotErr("namespaces", err)
	}
	if poolNames, err = readNames(d, n); err != nil {
		return nil, nil, false, snapshotErr("pools", err)
	}
	x.nsOf, x.pool = copied[uint32](d, n), copied[uint32](d, n)
	if d.err != nil {
		return nil, nil, false, snapshotErr("entries", d.err)
	}
	dim, prec := x.dim, x.rows.Precision()
	var f, scales []float32
	var codes []int8
	if v3 {
		d.align()
	}
	if prec == Float32 {
		f, borrowed = slice[float32](d, n*dim)
	} else {
		var b1, b2 bool
		codes, b1 = slice[int8](d, n*dim)
		if v3 {
			d.align()
		}
		scales, b2 = slice[float32](d, n)
		borrowed = b1 || b2
	}
	if d.err != nil {
		return nil, nil, false, snapshotErr("vectors", d.err)
	}
	if x.rows, err = RowsOf(dim, prec, n, f, codes, scales); err != nil {
		return nil, nil, false, snapshotErr("vectors", err)
	}
	return nsNames, poolNames, borrowed, nil
}

// rebuild makes the interners' reference counts of the entries a load
// read. The id map waits for the first write (slotMap); a snapshot holds
// each id once, which its checksum vouches for.
func (x *Exact) rebuild(nsNames, poolNames []string) error {
	x.ns = interner{names: nsNames, refs: make([]int, len(nsNames)), idx: map[string]uint32{}}
	x.pools = interner{names: poolNames, refs: make([]int, len(poolNames)), idx: map[string]uint32{}}
	for s, id := range x.ids {
		if int(x.nsOf[s]) >= len(nsNames) || int(x.pool[s]) >= len(poolNames) {
			return snapshotErr("entries", fmt.Errorf("entry %d (id %d) is inconsistent", s, id))
		}
		x.ns.refs[x.nsOf[s]]++
		x.pools.refs[x.pool[s]]++
	}
	for _, in := range []*interner{&x.ns, &x.pools} {
		for i, name := range in.names {
			if in.refs[i] == 0 {
				in.free = append(in.free, uint32(i))
				continue
			}
			in.idx[name] = uint32(i)
		}
	}
	return nil
}
