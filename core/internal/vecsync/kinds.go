package vecsync

import (
	"bytes"
	"io"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/core/vector/hnsw"
)

// kind is one of the vector indexes the engine can keep: exact (a SIMD
// scan) or hnsw (an approximate graph). Both live under the engine, so any
// backend, in this repository or outside it, gets them with no import.
type kind struct {
	new  func(dim int, p vector.Precision) (driver.VectorIndex, error)
	load loader
}

// A loader makes an index of a snapshot's serialisation b (a mapped file),
// which it may keep reading: it calls release once it no longer does (at
// once when it copies what it needs, and when it fails).
type loader func(b []byte, release func()) (driver.VectorIndex, error)

var kinds = map[string]kind{
	"exact": {
		new: func(dim int, p vector.Precision) (driver.VectorIndex, error) {
			return vector.NewExactPrecision(dim, p), nil
		},
		load: func(b []byte, release func()) (driver.VectorIndex, error) {
			x, err := vector.LoadExactBytes(b, release)
			if err != nil {
				return nil, err
			}
			return x, nil
		},
	},
	"hnsw": {
		new: func(dim int, p vector.Precision) (driver.VectorIndex, error) {
			return hnsw.New(dim, hnsw.Config{Precision: p})
		},
		load: func(b []byte, release func()) (driver.VectorIndex, error) {
			defer release()
			// The size lets Load allocate its arrays at once.
			g, err := hnsw.Load(&io.LimitedReader{R: bytes.NewReader(b), N: int64(len(b))})
			if err != nil {
				return nil, err
			}
			return g, nil
		},
	},
}

// precisionOf returns the precision idx stores vectors at; float32 for an
// index that does not say.
func precisionOf(idx driver.VectorIndex) vector.Precision {
	if p, ok := idx.(interface{ Precision() vector.Precision }); ok {
		return p.Precision()
	}
	return vector.Float32
}
