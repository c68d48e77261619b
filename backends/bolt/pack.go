package bolt

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Packed bytes (a record's tail in packedRecord and packedVersion, an audit
// entry in store format 3) start with how they are stored:
//
//	packRaw:         the bytes as they are
//	packDeflate:     uvarint length of the bytes, then their raw DEFLATE
//	                 stream (RFC 1951)
//	packDeflateDict: the same, compressed with the preset dictionary
//	                 packDict
//
// A write packs with DEFLATE when that is smaller: record tails with the
// dictionary, audit entries (JSON and hex digests) without. Conversation
// turns shrink to less than half; bytes shorter than packMin are not worth
// the try.
const (
	packRaw         = 0
	packDeflate     = 1
	packDeflateDict = 2
)

// packMin is the length below which bytes are stored raw.
const packMin = 48

// packLevel is the DEFLATE level: the default, 6. Level 1 (the fastest)
// leaves the content of the footprint benchmark 5% larger.
const packLevel = flate.DefaultCompression

var (
	dict      = []byte(packDict)
	deflaters = [2]sync.Pool{
		{New: func() any { return newDeflater(nil) }},
		{New: func() any { return newDeflater(dict) }},
	}
	inflaters = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}
	unpacked  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// newDeflater returns a writer whose Reset restores the dictionary d.
func newDeflater(d []byte) *flate.Writer {
	w, err := flate.NewWriterDict(nil, packLevel, d)
	if err != nil {
		panic(err) // only for an invalid level
	}
	return w
}

// pack appends raw to dst, packed, with the dictionary packDict when
// withDict is set.
func pack(dst, raw []byte, withDict bool) []byte {
	if len(raw) >= packMin {
		how, pool := byte(packDeflate), &deflaters[0]
		if withDict {
			how, pool = packDeflateDict, &deflaters[1]
		}
		var z bytes.Buffer
		z.Grow(len(raw))
		w := pool.Get().(*flate.Writer)
		w.Reset(&z)
		_, err := w.Write(raw)
		if err == nil {
			err = w.Close()
		}
		pool.Put(w)
		// Writing to a bytes.Buffer does not fail.
		if err == nil && z.Len()+binary.MaxVarintLen32 < len(raw) {
			dst = append(dst, how)
			dst = binary.AppendUvarint(dst, uint64(len(raw)))
			return append(dst, z.Bytes()...)
		}
	}
	dst = append(dst, packRaw)
	return append(dst, raw...)
}

// errPacked says why packed bytes could not be unpacked.
var errPacked = errors.New("packed bytes")

// unpack returns the bytes p holds (see pack). They may be a pooled buffer
// that release hands back: the caller copies what it keeps and calls
// release when done with them.
func unpack(p []byte) (raw []byte, release func(), err error) {
	if len(p) == 0 {
		return nil, nil, fmt.Errorf("%w: empty", errPacked)
	}
	switch p[0] {
	case packRaw:
		return p[1:], func() {}, nil
	case packDeflate, packDeflateDict:
	default:
		return nil, nil, fmt.Errorf("%w: unknown packing %d", errPacked, p[0])
	}
	n, k := binary.Uvarint(p[1:])
	if k <= 0 {
		return nil, nil, fmt.Errorf("%w: malformed length", errPacked)
	}
	r := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(r)
	var d []byte
	if p[0] == packDeflateDict {
		d = dict
	}
	if err := r.(flate.Resetter).Reset(bytes.NewReader(p[1+k:]), d); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errPacked, err)
	}
	buf := unpacked.Get().(*bytes.Buffer)
	buf.Reset()
	// n is not trusted for the allocation: a damaged length must not ask
	// for gigabytes. Read at most one byte more than it says.
	m, err := buf.ReadFrom(io.LimitReader(r, int64(min(n, 1<<40))+1))
	if err != nil || uint64(m) != n {
		unpacked.Put(buf)
		if err == nil {
			err = fmt.Errorf("%d bytes, the header says %d", m, n)
		}
		return nil, nil, fmt.Errorf("%w: %v", errPacked, err)
	}
	return buf.Bytes(), func() {
		if buf.Cap() <= 1<<20 { // keep the pool's buffers small
			unpacked.Put(buf)
		}
	}, nil
}

// packAudit packs the JSON of an audit entry. An entry of an older store
// is the JSON itself, which starts with '{', unlike packed bytes.
func packAudit(js []byte) []byte { return pack(nil, js, false) }

// unpackAudit returns the JSON of an audit entry stored as v; the caller
// calls release when done with it.
func unpackAudit(v []byte) (js []byte, release func(), err error) {
	if len(v) > 0 && v[0] == '{' {
		return v, func() {}, nil
	}
	return unpack(v)
}
