package driver

import "math"

// Normalize scales v in place to unit length and reports whether it could
// (a zero or non-finite vector cannot be normalised and is left unchanged).
func Normalize(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return false
	}
	// Scale in float64: 1/sqrt(s) overflows float32 for very short vectors.
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return true
}
