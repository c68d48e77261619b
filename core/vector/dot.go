// Package vector holds memos' vector indexes, which live in the core and
// serve every backend, and the kernels they share. Vectors are float32 and,
// inside an index, unit length, so cosine similarity is a dot product; an
// index stores them at a Precision, float32 or int8 (see Rows).
package vector

import (
	"github.com/memos-go/memos/core/driver"

	"github.com/viterin/vek/vek32"
)

// Dot returns the dot product of a and b, which must have the same length.
// It uses SIMD instructions where the CPU has them.
func Dot(a, b []float32) float32 { return vek32.Dot(a, b) }

// Normalize scales v in place to unit length and reports whether it could
// (a zero or non-finite vector cannot be normalised and is left unchanged).
func Normalize(v []float32) bool { return driver.Normalize(v) }
