package vector

import "golang.org/x/sys/cpu"

// useAVX2 reports whether the CPU runs dotInt8AVX2.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotInt8AVX2 returns the dot product of q[:n] and c[:n], n a positive
// multiple of 8: eight codes at a time are widened to int32, converted to
// float32 and multiplied into four accumulators (dot_int8_amd64.s).
//
//go:noescape
func dotInt8AVX2(q *float32, c *int8, n int) float32

// dotInt8 is the dot product of q and codes (len(codes) >= len(q)).
func dotInt8(q []float32, codes []int8) float32 {
	n := len(q) &^ 7
	if !useAVX2 || n == 0 {
		return dotInt8Go(q, codes)
	}
	codes = codes[:len(q)]
	return dotInt8AVX2(&q[0], &codes[0], n) + dotInt8Go(q[n:], codes[n:])
}
