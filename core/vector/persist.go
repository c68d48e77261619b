package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unsafe"

	"github.com/memos-go/memos/core/driver"
)

// exactMagic starts a snapshot of an Exact index; the digit is the format
// version. Version 1 holds float32 vectors; version 2 follows the magic with
// a precision byte and holds the vectors at that precision (at Int8: the
// codes, then the per-vector scales as float32). A Float32 index is written
// as version 1, as before precisions existed.
const (
	exactMagic   = "MEMOSEX1"
	exactMagicV2 = "MEMOSEX2"
)

var _ driver.PersistentVectorIndex = (*Exact)(nil)

// Save writes a snapshot of the index to w: a versioned binary format
// (little endian) ending with a CRC-32 of everything before it. Loading a
// snapshot is a sequential read, much cheaper than re-reading every vector
// from the store.
func (x *Exact) Save(w io.Writer) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	put := func(v any) error { return binary.Write(bw, binary.LittleEndian, v) }
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
			if _, err := bw.WriteString(s); err != nil {
				return err
			}
		}
		return nil
	}
	prec := x.rows.Precision()
	f, codes, scales := x.rows.Raw()
	header := func() error {
		if prec == Float32 {
			_, err := bw.WriteString(exactMagic)
			return err
		}
		_, err := bw.WriteString(exactMagicV2)
		return errors.Join(err, bw.WriteByte(byte(prec)))
	}
	vectors := func() error {
		if prec == Float32 {
			return putSlice(bw, f)
		}
		return errors.Join(putSlice(bw, codes), putSlice(bw, scales))
	}
	err := errors.Join(
		header(),
		put(uint32(x.dim)), put(uint64(len(x.ids))), putSlice(bw, x.ids),
		putNames(x.ns.names), putNames(x.pools.names), putSlice(bw, x.nsOf), putSlice(bw, x.pool),
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
// holds, a header whose count cannot fit in them is refused before the
// vectors are allocated.
func LoadExact(r io.Reader) (*Exact, error) {
	holds := int64(-1) // bytes the snapshot holds; -1: unknown
	if lr, ok := r.(*io.LimitedReader); ok {
		holds = lr.N
	}
	crc := crc32.NewIEEE()
	br := bufio.NewReaderSize(r, 1<<20)
	tr := io.TeeReader(br, crc)
	prec, dim, n, err := readExactHeader(tr, holds)
	if err != nil {
		return nil, err
	}
	x := NewExactPrecision(dim, prec)
	nsNames, poolNames, err := x.readEntries(tr, n)
	if err != nil {
		return nil, err
	}
	sum := crc.Sum32()
	var want uint32
	if err := binary.Read(br, binary.LittleEndian, &want); err != nil {
		return nil, snapshotErr("checksum", err)
	}
	if sum != want {
		return nil, snapshotErr("checksum", fmt.Errorf("CRC-32 %08x, recorded %08x", sum, want))
	}
	if err := x.rebuild(nsNames, poolNames); err != nil {
		return nil, err
	}
	return x, nil
}

// snapshotErr is LoadExact's error for a snapshot whose part what cannot
// be read.
func snapshotErr(what string, err error) error {
	return fmt.Errorf("vector load: %w: snapshot %s: %v", driver.ErrInvalid, what, err)
}

// getLE reads v from r, little-endian.
func getLE(r io.Reader, v any) error { return binary.Read(r, binary.LittleEndian, v) }

// readExactHeader reads a snapshot's header: the precision, the dimension
// and the number of vectors. When the input says how much it holds (holds
// ≥ 0: the engine passes an *io.LimitedReader), a count it cannot hold is
// refused here, before a damaged header makes LoadExact allocate it: the
// arrays are allocated whole.
func readExactHeader(tr io.Reader, holds int64) (prec Precision, dim, n int, err error) {
	magic := make([]byte, len(exactMagic))
	if _, err := io.ReadFull(tr, magic); err != nil || (string(magic) != exactMagic && string(magic) != exactMagicV2) {
		return 0, 0, 0, snapshotErr("header", fmt.Errorf("not an exact-index snapshot (magic %q)", magic))
	}
	prec = Float32
	if string(magic) == exactMagicV2 {
		var b uint8
		if err := getLE(tr, &b); err != nil {
			return 0, 0, 0, snapshotErr("header", err)
		}
		if prec = Precision(b); !prec.Valid() || prec == Float32 {
			return 0, 0, 0, snapshotErr("header", fmt.Errorf("unknown vector precision %d", b))
		}
	}
	var d uint32
	var count uint64
	if err := errors.Join(getLE(tr, &d), getLE(tr, &count)); err != nil {
		return 0, 0, 0, snapshotErr("header", err)
	}
	if d < 1 || d > 1<<16 || count > math.MaxInt32 {
		return 0, 0, 0, snapshotErr("header", fmt.Errorf("implausible dimension %d or count %d", d, count))
	}
	if holds >= 0 {
		per := int64(8 + 4 + 4) // id, namespace, pool
		if prec == Float32 {
			per += 4 * int64(d)
		} else {
			per += int64(d) + 4 // codes, scale
		}
		if int64(count)*per > holds {
			return 0, 0, 0, snapshotErr("header", fmt.Errorf("%d vectors of %d dimensions do not fit the %d bytes the snapshot holds", count, d, holds))
		}
	}
	return prec, int(d), int(count), nil
}

// readNames reads an interner's names (at most n+1 of them).
func readNames(tr io.Reader, n int) ([]string, error) {
	var k uint32
	if err := getLE(tr, &k); err != nil {
		return nil, err
	}
	if k > uint32(n)+1 {
		return nil, fmt.Errorf("implausible name count %d", k)
	}
	names := make([]string, k)
	for i := range names {
		var l uint16
		if err := getLE(tr, &l); err != nil {
			return nil, err
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(tr, b); err != nil {
			return nil, err
		}
		names[i] = string(b)
	}
	return names, nil
}

// readEntries reads the n entries of a snapshot into x, which is empty:
// their ids, the namespace and pool names, each entry's namespace and pool
// and the vectors.
func (x *Exact) readEntries(tr io.Reader, n int) (nsNames, poolNames []string, err error) {
	x.ids = make([]int64, n)
	if err := getSlice(tr, x.ids); err != nil {
		return nil, nil, snapshotErr("ids", err)
	}
	if nsNames, err = readNames(tr, n); err != nil {
		return nil, nil, snapshotErr("namespaces", err)
	}
	if poolNames, err = readNames(tr, n); err != nil {
		return nil, nil, snapshotErr("pools", err)
	}
	x.nsOf, x.pool = make([]uint32, n), make([]uint32, n)
	if err := errors.Join(getSlice(tr, x.nsOf), getSlice(tr, x.pool)); err != nil {
		return nil, nil, snapshotErr("entries", err)
	}
	dim, prec := x.dim, x.rows.Precision()
	var f, scales []float32
	var codes []int8
	if prec == Float32 {
		f = make([]float32, n*dim)
		if err := getSlice(tr, f); err != nil {
			return nil, nil, snapshotErr("vectors", err)
		}
	} else {
		codes, scales = make([]int8, n*dim), make([]float32, n)
		if err := errors.Join(getSlice(tr, codes), getSlice(tr, scales)); err != nil {
			return nil, nil, snapshotErr("vectors", err)
		}
	}
	if x.rows, err = RowsOf(dim, prec, n, f, codes, scales); err != nil {
		return nil, nil, snapshotErr("vectors", err)
	}
	return nsNames, poolNames, nil
}

// rebuild makes the id map and the interners' reference counts of the
// entries LoadExact read.
func (x *Exact) rebuild(nsNames, poolNames []string) error {
	x.ns = interner{names: nsNames, refs: make([]int, len(nsNames)), idx: map[string]uint32{}}
	x.pools = interner{names: poolNames, refs: make([]int, len(poolNames)), idx: map[string]uint32{}}
	for s, id := range x.ids {
		if _, dup := x.slots[id]; dup || int(x.nsOf[s]) >= len(nsNames) || int(x.pool[s]) >= len(poolNames) {
			return snapshotErr("entries", fmt.Errorf("entry %d (id %d) is inconsistent", s, id))
		}
		x.slots[id] = int32(s)
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

// getSlice fills dst from little-endian values: on a little-endian machine
// the bytes are read straight into dst, on another a chunk at a time —
// either way much faster than binary.Read's copy and per-element decoding
// for the bulk of a snapshot.
func getSlice[T int8 | uint32 | int64 | float32](r io.Reader, dst []T) error {
	size := int(unsafe.Sizeof(*new(T)))
	if littleEndian {
		_, err := io.ReadFull(r, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), size*len(dst)))
		return err
	}
	const chunk = 1 << 14
	for len(dst) > 0 {
		n := min(len(dst), chunk)
		if err := binary.Read(r, binary.LittleEndian, dst[:n]); err != nil {
			return err
		}
		dst = dst[n:]
	}
	return nil
}
