package vector

import (
	"io"

	"github.com/memos-go/memos/core"
)

// The exact index is the engine's default; backends import this package so
// that it is registered wherever a backend is.
func init() {
	core.RegisterVectorIndex("exact", core.VectorIndexDriver{
		New:  func(dim int) core.VectorIndex { return NewExact(dim) },
		Load: func(r io.Reader) (core.VectorIndex, error) { return LoadExact(r) },
	})
}
