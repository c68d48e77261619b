//go:build !unix

package hnsw

import "time"

// cpuTime is not measured on this platform; the CPU metrics read zero.
func cpuTime() time.Duration { return 0 }
