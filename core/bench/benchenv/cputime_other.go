//go:build !unix

package benchenv

import "time"

// CPUTime is not measured on this platform: it is zero, and so is every
// CPU figure a benchmark derives from it.
func CPUTime() time.Duration { return 0 }
