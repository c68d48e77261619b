package vector

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/memos-go/memos/core/driver"
)

// Precision is how an index stores its vectors.
type Precision uint8

const (
	// Float32 stores each component as given: 4 bytes a component.
	Float32 Precision = iota
	// Int8 stores each component as a signed byte and each vector with one
	// float32 scale (symmetric quantization): dim+4 bytes a vector, about a
	// quarter of Float32. The scale makes the stored vector unit length, so
	// scores stay cosine similarities; they are off by a few thousandths
	// (see Rows).
	Int8
)

var precisionNames = []string{Float32: "float32", Int8: "int8"}

// PrecisionNames lists the names ParsePrecision accepts.
func PrecisionNames() []string { return slices.Clone(precisionNames) }

func (p Precision) String() string {
	if int(p) < len(precisionNames) {
		return precisionNames[p]
	}
	return fmt.Sprintf("precision(%d)", uint8(p))
}

// Valid reports whether p is a known precision.
func (p Precision) Valid() bool { return int(p) < len(precisionNames) }

// ParsePrecision returns the precision named s ("" means Float32).
func ParsePrecision(s string) (Precision, error) {
	if s == "" {
		return Float32, nil
	}
	if i := slices.Index(precisionNames, s); i >= 0 {
		return Precision(i), nil
	}
	return 0, driver.Invalidf("no vector precision named %q (known: %s)", s, strings.Join(precisionNames, ", "))
}

// Rows holds equal-length vectors, one row each, at a Precision: the vector
// storage of the exact and the HNSW index. Rows are written unit length
// (callers normalise) and read back by Dot with a float32 query.
//
// At Int8, row i is codes[i]·scale[i]: a component v is stored as
// round(127·v/max|v|), and the scale is chosen so that the stored row is unit
// length again. A score is then the cosine of the query and the stored
// direction, which differs from the float32 one by the rounding: at 256
// dimensions the angle error gives score errors of about 0.001.
//
// Rows is not safe for concurrent writes; the indexes lock around it.
type Rows struct {
	dim   int
	prec  Precision
	f     []float32 // Float32: row i is f[i*dim:(i+1)*dim]
	codes []int8    // Int8: row i is codes[i*dim:(i+1)*dim] ...
	scale []float32 // ... times scale[i]
	// borrowed: the storage is memory the rows must not write (a snapshot
	// read in place, see LoadExactBytes); own copies it before a write.
	borrowed bool
}

// own copies borrowed storage, so that it can be written, and reports
// whether it did.
func (r *Rows) own() bool {
	if !r.borrowed {
		return false
	}
	r.f, r.codes, r.scale = clone(r.f), clone(r.codes), clone(r.scale)
	r.borrowed = false
	return true
}

// clone copies s (nil stays nil).
func clone[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// NewRows returns empty storage for vectors of dim components at p.
func NewRows(dim int, p Precision) Rows { return Rows{dim: dim, prec: p} }

// RowsOf wraps the data of n rows read back from a snapshot (see Raw): f
// at Float32, codes and scales at Int8. It checks the lengths.
func RowsOf(dim int, p Precision, n int, f []float32, codes []int8, scales []float32) (Rows, error) {
	r := Rows{dim: dim, prec: p, f: f, codes: codes, scale: scales}
	switch {
	case !p.Valid():
		return Rows{}, driver.Invalidf("vector rows: unknown precision %d", uint8(p))
	case p == Float32 && (len(f) != n*dim || codes != nil || scales != nil),
		p == Int8 && (len(codes) != n*dim || len(scales) != n || f != nil):
		return Rows{}, driver.Invalidf("vector rows: %d rows of %d at %s do not match the data (%d floats, %d codes, %d scales)",
			n, dim, p, len(f), len(codes), len(scales))
	}
	return r, nil
}

// Raw returns the stored data, for a snapshot: the components at Float32,
// the codes and per-row scales at Int8 (the other results are nil). The
// slices are the storage itself, to be read only.
func (r *Rows) Raw() (f []float32, codes []int8, scales []float32) {
	n := r.Len()
	if r.prec == Int8 {
		return nil, r.codes[:n*r.dim], r.scale[:n]
	}
	return r.f[:n*r.dim], nil, nil
}

// Precision returns the precision the rows are stored at.
func (r *Rows) Precision() Precision { return r.prec }

// Len returns the number of rows.
func (r *Rows) Len() int {
	if r.prec == Int8 {
		return len(r.scale)
	}
	return len(r.f) / r.dim
}

// Append adds v as the last row.
func (r *Rows) Append(v []float32) {
	r.own()
	if r.prec == Int8 {
		n := len(r.codes)
		r.codes = slices.Grow(r.codes, r.dim)[:n+r.dim]
		r.scale = append(r.scale, quantize(r.codes[n:], v))
		return
	}
	r.f = append(r.f, v...)
}

// appendUnit adds v scaled to unit length as the last row when normalized
// accepts it, and reports whether it did; at Float32 v is copied straight
// into the storage and scaled there, at Int8 it is scaled in buf (dim
// components) and quantised.
func (r *Rows) appendUnit(v, buf []float32) bool {
	if r.prec == Int8 {
		copy(buf, v)
		if !normalized(buf) {
			return false
		}
		r.Append(buf)
		return true
	}
	n := len(r.f)
	r.f = append(r.f, v...)
	if !normalized(r.f[n:]) {
		r.f = r.f[:n]
		return false
	}
	return true
}

// Set replaces row i by v.
func (r *Rows) Set(i int, v []float32) {
	r.own()
	if r.prec == Int8 {
		r.scale[i] = quantize(r.codes[i*r.dim:(i+1)*r.dim], v)
		return
	}
	copy(r.f[i*r.dim:(i+1)*r.dim], v)
}

// Clear zeroes row i (a freed slot).
func (r *Rows) Clear(i int) {
	r.own()
	if r.prec == Int8 {
		clear(r.codes[i*r.dim : (i+1)*r.dim])
		r.scale[i] = 0
		return
	}
	clear(r.f[i*r.dim : (i+1)*r.dim])
}

// Move copies row src over row dst.
func (r *Rows) Move(dst, src int) {
	r.own()
	if r.prec == Int8 {
		copy(r.codes[dst*r.dim:(dst+1)*r.dim], r.codes[src*r.dim:(src+1)*r.dim])
		r.scale[dst] = r.scale[src]
		return
	}
	copy(r.f[dst*r.dim:(dst+1)*r.dim], r.f[src*r.dim:(src+1)*r.dim])
}

// Truncate keeps the first n rows.
func (r *Rows) Truncate(n int) {
	r.own()
	if r.prec == Int8 {
		r.codes, r.scale = r.codes[:n*r.dim], r.scale[:n]
		return
	}
	r.f = r.f[:n*r.dim]
}

// Reserve makes room for n more rows, growing the storage by half its size
// at least (append grows large slices by a quarter, which makes a bulk load
// copy every vector about four times).
func (r *Rows) Reserve(n int) {
	r.own()
	have := r.Len()
	need := have + n
	if r.prec == Int8 {
		if need <= cap(r.scale) {
			return
		}
		c := max(need, cap(r.scale)+cap(r.scale)/2, 64)
		r.codes = regrow(r.codes, c*r.dim)
		r.scale = regrow(r.scale, c)
		return
	}
	if need*r.dim <= cap(r.f) {
		return
	}
	r.f = regrow(r.f, max(need*r.dim, cap(r.f)+cap(r.f)/2, 64*r.dim))
}

// regrow returns s in new storage of capacity c. Unlike slices.Grow it does
// not zero the room it adds (appends write it): a large allocation comes
// zeroed from the operating system, or is zeroed by the runtime only when
// reused.
func regrow[T int8 | float32](s []T, c int) []T {
	out := make([]T, len(s), c)
	copy(out, s)
	return out
}

// Compact reallocates the storage to room for twice the rows it holds, to
// give memory back after many removals.
func (r *Rows) Compact() {
	r.own()
	n := r.Len()
	if r.prec == Int8 {
		r.codes = slices.Grow(slices.Clone(r.codes[:n*r.dim:n*r.dim]), n*r.dim)
		r.scale = slices.Grow(slices.Clone(r.scale[:n:n]), n)
		return
	}
	r.f = slices.Grow(slices.Clone(r.f[:n*r.dim:n*r.dim]), n*r.dim)
}

// Bytes returns the memory the storage holds, capacity included.
func (r *Rows) Bytes() int64 {
	return int64(cap(r.f))*4 + int64(cap(r.codes)) + int64(cap(r.scale))*4
}

// Dot returns the dot product of q with row i: the cosine similarity for a
// unit q. At Float32 it is the SIMD Dot; at Int8 dotInt8.
func (r *Rows) Dot(q []float32, i int) float32 {
	if r.prec == Int8 {
		return dotInt8(q, r.codes[i*r.dim:(i+1)*r.dim]) * r.scale[i]
	}
	return Dot(q, r.f[i*r.dim:(i+1)*r.dim])
}

// Row returns row i as float32: at Float32 the stored row itself (not a
// copy, to be read only), at Int8 decoded into buf, which is grown as needed
// and returned.
func (r *Rows) Row(i int, buf []float32) []float32 {
	if r.prec == Int8 {
		buf = slices.Grow(buf[:0], r.dim)[:r.dim]
		s := r.scale[i]
		for j, c := range r.codes[i*r.dim : (i+1)*r.dim] {
			buf[j] = float32(c) * s
		}
		return buf
	}
	return r.f[i*r.dim : (i+1)*r.dim : (i+1)*r.dim]
}

// Equal reports whether row i is what Set(i, v) would store.
func (r *Rows) Equal(i int, v []float32) bool {
	if r.prec == Int8 {
		codes := make([]int8, r.dim)
		s := quantize(codes, v)
		return s == r.scale[i] && slices.Equal(codes, r.codes[i*r.dim:(i+1)*r.dim])
	}
	return slices.Equal(r.f[i*r.dim:(i+1)*r.dim], v)
}

// quantize stores v in codes, each component as round(127·v/max|v|), and
// returns the scale that makes codes·scale unit length (0 for a zero v).
func quantize(codes []int8, v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if !(m > 0) || math.IsInf(float64(m), 0) {
		clear(codes)
		return 0
	}
	var sq int64
	for j, x := range v {
		c := int8(math.Round(float64(x / m * 127)))
		codes[j] = c
		sq += int64(c) * int64(c)
	}
	return float32(1 / math.Sqrt(float64(sq)))
}

// dotInt8Go is the dot product of q and codes (len(codes) >= len(q)) in
// Go, with eight accumulators so that the additions do not wait on each
// other (2× faster than one); dotInt8 uses SIMD instructions instead where
// the CPU has them.
func dotInt8Go(q []float32, codes []int8) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	codes = codes[:len(q)]
	i := 0
	for ; i+8 <= len(q); i += 8 {
		q, c := q[i:i+8:i+8], codes[i:i+8:i+8]
		s0 += q[0] * float32(c[0])
		s1 += q[1] * float32(c[1])
		s2 += q[2] * float32(c[2])
		s3 += q[3] * float32(c[3])
		s4 += q[4] * float32(c[4])
		s5 += q[5] * float32(c[5])
		s6 += q[6] * float32(c[6])
		s7 += q[7] * float32(c[7])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(codes[i])
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
