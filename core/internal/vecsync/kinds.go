package vecsync

import (
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
	load func(r io.Reader) (driver.VectorIndex, error)
}

var kinds = map[string]kind{
	"exact": {
		new: func(dim int, p vector.Precision) (driver.VectorIndex, error) {
			return vector.NewExactPrecision(dim, p), nil
		},
		load: func(r io.Reader) (driver.VectorIndex, error) { return vector.LoadExact(r) },
	},
	"hnsw": {
		new: func(dim int, p vector.Precision) (driver.VectorIndex, error) {
			return hnsw.New(dim, hnsw.Config{Precision: p})
		},
		load: func(r io.Reader) (driver.VectorIndex, error) { return hnsw.Load(r) },
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
