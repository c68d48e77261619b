//go:build unix

package benchenv

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user + system) the process has used.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
