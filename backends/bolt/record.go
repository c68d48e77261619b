package bolt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// A record is one version of a memory as stored in bbolt. The encoding is
// binary and versioned by its first byte:
//
//	format byte (recordFormat)
//	access statistics, fixed size so that Touch patches them in place:
//	  last access: int64 seconds, uint32 nanoseconds (math.MinInt64: never)
//	  access count: int64
//	head, decoded alone by the change log:
//	  seq, version, token count (uvarints)
//	  namespace, pool, type, status, embedding model (strings)
//	  embedding: uvarint dimension, then little-endian float32s
//	tail:
//	  content, significance, entities, emotional context, source, session,
//	  trust level and score, valid from/to, created/updated at, metadata
//
// Strings are a uvarint length and the bytes; times a presence byte, then
// varint seconds and uvarint nanoseconds, always read back in UTC; floats
// their IEEE-754 bits, so every value round-trips exactly. Metadata is JSON.
//
// An earlier version (in bktVer) is written in format versionFormat: the
// same, with a flags byte after the access statistics that says what the
// record leaves out because the next version has the same: its content
// (then stored as "") and its embedding's floats (then only the dimension
// is stored). A reader takes them from the first later version that has
// them (see resolveVersions). Most edits keep both, so an edit costs a few
// hundred bytes instead of a copy of the content and the vector.
//
// Formats packedRecord and packedVersion (store format 3, written by every
// write since) are recordFormat and versionFormat with the tail packed (see
// packTail): the head stays as it is, so that the change log, scans and
// Touch read and patch it without inflating the content.
const (
	recordFormat  = 1
	versionFormat = 2
	packedRecord  = 3
	packedVersion = 4
)

// current reports whether a record's format byte is a current version's.
func current(f byte) bool { return f == recordFormat || f == packedRecord }

// earlier reports whether a record's format byte is an earlier version's.
func earlier(f byte) bool { return f == versionFormat || f == packedVersion }

// Flags of a versionFormat record.
const (
	sameContent = 1 << iota // the content is the next version's
	sameVector              // the embedding's floats are the next version's
)

const accessLen = 1 + 8 + 4 + 8 // format byte + access statistics

// noAccess marks a zero LastAccessedAt in the access statistics.
const noAccess = math.MinInt64

var errCorrupt = errors.New("bolt: corrupt record")

type encoder struct{ b []byte }

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bytes(p []byte)   { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *encoder) f64(f float64)    { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(f)) }

func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	e.varint(t.Unix())
	e.uvarint(uint64(t.Nanosecond()))
}

// encodeRecord encodes m, the current version, with its change-log
// sequence number and token count.
func encodeRecord(m *driver.Memory, seq uint64, ntok int) ([]byte, error) {
	return encode(m, seq, ntok, packedRecord, 0)
}

// encodeVersion encodes m, an earlier version whose successor is next, with
// its token count, leaving out what next has too.
func encodeVersion(m, next *driver.Memory, ntok int) ([]byte, error) {
	var flags byte
	if m.Content == next.Content {
		flags |= sameContent
	}
	if len(m.Embedding.Vector) > 0 && sameBits(m.Embedding.Vector, next.Embedding.Vector) {
		flags |= sameVector
	}
	return encode(m, 0, ntok, packedVersion, flags)
}

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func encode(m *driver.Memory, seq uint64, ntok int, format, flags byte) ([]byte, error) {
	var meta []byte
	if len(m.Metadata) > 0 {
		var err error
		if meta, err = json.Marshal(m.Metadata); err != nil {
			return nil, driver.Invalidf("metadata of memory %d cannot be stored as JSON: %v", m.ID, err)
		}
	}
	e := encoder{b: make([]byte, 0, 128+len(m.Content)+4*len(m.Embedding.Vector)+len(meta))}
	e.b = append(e.b, format)
	e.b = appendAccess(e.b, m.LastAccessedAt, m.AccessCount)
	if earlier(format) {
		e.b = append(e.b, flags)
	}
	e.uvarint(seq)
	e.uvarint(uint64(m.Version))
	e.uvarint(uint64(ntok))
	e.str(m.Namespace)
	e.str(string(m.Pool))
	e.str(string(m.Type))
	e.str(string(m.Status))
	e.str(m.Embedding.Model)
	e.uvarint(uint64(len(m.Embedding.Vector)))
	if flags&sameVector == 0 {
		for _, f := range m.Embedding.Vector {
			e.b = binary.LittleEndian.AppendUint32(e.b, math.Float32bits(f))
		}
	}
	head := len(e.b)
	if flags&sameContent == 0 {
		e.str(m.Content)
	} else {
		e.str("")
	}
	e.varint(int64(m.Significance))
	e.uvarint(uint64(len(m.Entities)))
	for _, s := range m.Entities {
		e.str(s)
	}
	e.str(m.EmotionalContext)
	e.str(m.Source)
	e.str(m.Session)
	e.str(string(m.Trust.Level))
	e.f64(m.Trust.Score)
	e.time(m.ValidFrom)
	e.time(m.ValidTo)
	e.time(m.CreatedAt)
	e.time(m.UpdatedAt)
	e.bytes(meta)
	if format == packedRecord || format == packedVersion {
		tail := e.b[head:]
		return pack(e.b[:head:head], tail, true), nil
	}
	return e.b, nil
}

func appendAccess(b []byte, last time.Time, count int64) []byte {
	sec, nsec := int64(noAccess), uint32(0)
	if !last.IsZero() {
		sec, nsec = last.Unix(), uint32(last.Nanosecond())
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(sec))
	b = binary.LittleEndian.AppendUint32(b, nsec)
	return binary.LittleEndian.AppendUint64(b, uint64(count))
}

// touchRecord returns a copy of the encoded record v with its access
// statistics set to one more access at t.
func touchRecord(v []byte, t time.Time) ([]byte, error) {
	if len(v) < accessLen || !current(v[0]) {
		return nil, errCorrupt
	}
	count := int64(binary.LittleEndian.Uint64(v[13:21]))
	out := make([]byte, 0, len(v))
	out = append(out, v[0])
	out = appendAccess(out, t, count+1)
	return append(out, v[accessLen:]...), nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) raw(n uint64) []byte {
	if uint64(len(d.b)) < n {
		d.fail()
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) str() string { return string(d.raw(d.uvarint())) }

func (d *decoder) f64() float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(pad(d.raw(8), 8)))
}

func (d *decoder) time() time.Time {
	p := d.raw(1)
	if len(p) == 0 || p[0] == 0 {
		return time.Time{}
	}
	sec := d.varint()
	nsec := d.uvarint()
	return time.Unix(sec, int64(nsec)).UTC()
}

// pad returns p, or zeros of length n when a failed read left p short.
func pad(p []byte, n int) []byte {
	if len(p) < n {
		return make([]byte, n)
	}
	return p
}

// recordHead is the part of a record the change log and the keyword index
// need without the content.
type recordHead struct {
	Seq       uint64
	Version   int
	NTok      int
	Namespace string
	Pool      driver.Pool
	Type      driver.Type
	Status    driver.Status
	Embedding driver.Embedding
	// Flags say what an earlier version's record leaves out (versionFormat);
	// with sameVector, Dim is the embedding's dimension.
	Flags byte
	Dim   int
}

// decodeHead decodes the head of v; d is left at the tail.
func decodeHead(v []byte) (recordHead, *decoder) {
	d := &decoder{b: v}
	var h recordHead
	if len(v) < accessLen || (!current(v[0]) && !earlier(v[0])) {
		d.fail()
		return h, d
	}
	d.b = v[accessLen:]
	if earlier(v[0]) {
		if p := d.raw(1); len(p) == 1 {
			h.Flags = p[0]
		}
	}
	h.Seq = d.uvarint()
	h.Version = int(d.uvarint())
	h.NTok = int(d.uvarint())
	h.Namespace = d.str()
	h.Pool = driver.Pool(d.str())
	h.Type = driver.Type(d.str())
	h.Status = driver.Status(d.str())
	h.Embedding.Model = d.str()
	if dim := d.uvarint(); dim > 0 && h.Flags&sameVector != 0 {
		h.Dim = int(min(dim, 1<<20))
	} else if dim > 0 {
		p := d.raw(4 * dim)
		if p != nil {
			h.Embedding.Vector = make([]float32, dim)
			for i := range h.Embedding.Vector {
				h.Embedding.Vector[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
			}
		}
	}
	return h, d
}

// decodeRecord decodes a whole record for memory id into a fresh Memory.
// What an earlier version's record leaves out (h.Flags) is missing from it:
// see resolveVersions.
func decodeRecord(id int64, v []byte) (*driver.Memory, recordHead, error) {
	h, d := decodeHead(v)
	m := &driver.Memory{
		ID: id, Version: h.Version, Namespace: h.Namespace, Pool: h.Pool, Type: h.Type,
		Status: h.Status, Embedding: h.Embedding,
	}
	if d.err == nil {
		sec := int64(binary.LittleEndian.Uint64(v[1:9]))
		if sec != noAccess {
			m.LastAccessedAt = time.Unix(sec, int64(binary.LittleEndian.Uint32(v[9:13]))).UTC()
		}
		m.AccessCount = int64(binary.LittleEndian.Uint64(v[13:21]))
		if v[0] == packedRecord || v[0] == packedVersion {
			tail, release, err := unpack(d.b)
			if err != nil {
				return nil, h, fmt.Errorf("%w of memory %d (%v); restore the store from a backup", errCorrupt, id, err)
			}
			defer release()
			d.b = tail
		}
	}
	m.Content = d.str()
	m.Significance = int(d.varint())
	if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)) {
		m.Entities = make([]string, n)
		for i := range m.Entities {
			m.Entities[i] = d.str()
		}
	} else if n > 0 {
		d.fail()
	}
	m.EmotionalContext = d.str()
	m.Source = d.str()
	m.Session = d.str()
	m.Trust.Level = driver.TrustLevel(d.str())
	m.Trust.Score = d.f64()
	m.ValidFrom = d.time()
	m.ValidTo = d.time()
	m.CreatedAt = d.time()
	m.UpdatedAt = d.time()
	if meta := d.raw(d.uvarint()); len(meta) > 0 && d.err == nil {
		if err := json.Unmarshal(meta, &m.Metadata); err != nil {
			d.fail()
		}
	}
	if d.err != nil {
		return nil, h, fmt.Errorf("%w of memory %d; restore the store from a backup", d.err, id)
	}
	return m, h, nil
}

// resolveVersions fills in what the records of earlier versions left out
// (see versionFormat): ms are consecutive versions of one memory, oldest
// first, with their heads; the last has everything unless ms ends before
// the current version. It reports whether all of ms is complete.
func resolveVersions(ms []*driver.Memory, hs []recordHead) bool {
	for i := len(ms) - 2; i >= 0; i-- {
		if hs[i].Flags&sameContent != 0 && hs[i+1].Flags&sameContent == 0 {
			ms[i].Content = ms[i+1].Content
			hs[i].Flags &^= sameContent
		}
		if hs[i].Flags&sameVector != 0 && hs[i+1].Flags&sameVector == 0 {
			if len(ms[i+1].Embedding.Vector) != hs[i].Dim {
				return false
			}
			ms[i].Embedding.Vector = slices.Clone(ms[i+1].Embedding.Vector)
			hs[i].Flags &^= sameVector
		}
	}
	for _, h := range hs {
		if h.Flags&(sameContent|sameVector) != 0 {
			return false
		}
	}
	return true
}
