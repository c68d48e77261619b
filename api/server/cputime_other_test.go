//go:build !unix

package server_test

import "time"

// cpuTime is not measured on this platform; cpu-ms/req reads zero.
func cpuTime() time.Duration { return 0 }
