//go:build !amd64

package vector

// dotInt8 is the dot product of q and codes (len(codes) >= len(q)).
func dotInt8(q []float32, codes []int8) float32 { return dotInt8Go(q, codes) }
