package core

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/core/vector/hnsw"
)

// vectorIndexKind is one of the vector indexes the engine can keep: exact
// (a SIMD scan) or hnsw (an approximate graph). Both live under the engine, so
// any backend, in this repository or outside it, gets them with no import.
type vectorIndexKind struct {
	new  func(dim int, p vector.Precision) (VectorIndex, error)
	load func(r io.Reader) (VectorIndex, error)
}

var vectorIndexes = map[string]vectorIndexKind{
	"exact": {
		new:  func(dim int, p vector.Precision) (VectorIndex, error) { return vector.NewExactPrecision(dim, p), nil },
		load: func(r io.Reader) (VectorIndex, error) { return vector.LoadExact(r) },
	},
	"hnsw": {
		new: func(dim int, p vector.Precision) (VectorIndex, error) {
			return hnsw.New(dim, hnsw.Config{Precision: p})
		},
		load: func(r io.Reader) (VectorIndex, error) { return hnsw.Load(r) },
	},
}

// VectorIndexNames lists the values Options.VectorIndex accepts.
func VectorIndexNames() []string { return []string{"auto", "exact", "hnsw"} }

// ValidateVectorIndex checks that name is one of VectorIndexNames (or empty,
// meaning exact).
func ValidateVectorIndex(name string) error {
	if name == "" || slices.Contains(VectorIndexNames(), name) {
		return nil
	}
	return fmt.Errorf("%w: no vector index named %q (known: %s)", ErrUnknownName, name, strings.Join(VectorIndexNames(), ", "))
}

// VectorPrecisionNames lists the values Options.VectorPrecision accepts.
func VectorPrecisionNames() []string { return vector.PrecisionNames() }

// ValidateVectorPrecision checks that name is one of VectorPrecisionNames
// (or empty, meaning float32).
func ValidateVectorPrecision(name string) error {
	_, err := vector.ParsePrecision(name)
	return err
}

// precisionOf returns the precision idx stores vectors at; float32 for an
// index that does not say.
func precisionOf(idx VectorIndex) vector.Precision {
	if p, ok := idx.(interface{ Precision() vector.Precision }); ok {
		return p.Precision()
	}
	return vector.Float32
}

func lookupVectorIndex(name string) (vectorIndexKind, error) {
	k, ok := vectorIndexes[name]
	if !ok {
		return k, ValidateVectorIndex(name)
	}
	return k, nil
}
