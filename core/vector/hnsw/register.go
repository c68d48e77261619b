package hnsw

import (
	"io"

	"github.com/memos-go/memos/core"
)

var _ core.PersistentVectorIndex = (*Index)(nil)

// The index registers as "hnsw" with the default Config, so that an engine
// opened with Options.VectorIndex "hnsw" finds it wherever this package is
// imported.
func init() {
	core.RegisterVectorIndex("hnsw", core.VectorIndexDriver{
		New: func(dim int) core.VectorIndex {
			ix, err := New(dim, Config{})
			if err != nil {
				// Only a dimension outside 1..65536 gets here: a caller's bug,
				// as for vector.NewExact.
				panic(err)
			}
			return ix
		},
		Load: func(r io.Reader) (core.VectorIndex, error) { return Load(r) },
	})
}
