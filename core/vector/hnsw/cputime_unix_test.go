//go:build unix

package hnsw

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used. The benchmarks report
// per-operation CPU time next to wall time because shared machines make wall
// time depend on the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
