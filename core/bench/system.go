package bench

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// Machine describes where a report was measured.
type Machine struct {
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	Kernel     string `json:"kernel,omitempty"`
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// MemoryBytes is the machine's total memory (0 when unknown).
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// Module is the memos module version the benchmark was built from.
	Module string `json:"module,omitempty"`
	// LoadAverage is the one-minute load average when the benchmark started
	// (Linux); above Cores, other work competed for the CPU and the figures
	// are noisy.
	LoadAverage float64 `json:"load_average,omitempty"`
}

// CurrentMachine describes the machine the process runs on. The CPU model
// and memory come from /proc on Linux and are empty elsewhere.
func CurrentMachine() Machine {
	m := Machine{
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPU:        "unknown CPU",
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		m.MemoryBytes = parseKB(v)
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			m.LoadAverage, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
			if dep.Path == "github.com/memos-go/memos" {
				m.Module = dep.Version
			}
		}
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// parseKB reads "1234 kB" as bytes.
func parseKB(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(s, "kB")), 10, 64)
	if err != nil {
		return 0
	}
	return n * 1024
}

// writtenBytes returns the bytes the process has caused to be written to
// storage (write_bytes of /proc/self/io: pages it dirtied in files,
// counted once per page until it is written back), or -1 where that is
// unknown.
func writtenBytes() int64 {
	n, err := strconv.ParseInt(procField("/proc/self/io", "write_bytes"), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// peakRSS returns the process's peak resident set size (VmHWM), or 0.
func peakRSS() int64 { return parseKB(procField("/proc/self/status", "VmHWM")) }

// currentRSS returns the process's resident set size (VmRSS), or 0.
func currentRSS() int64 { return parseKB(procField("/proc/self/status", "VmRSS")) }

// settledRSS returns VmRSS after a garbage collection that returns freed
// memory to the OS, so that garbage does not count.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return currentRSS()
}

// resetPeakRSS lowers the process's peak RSS mark to its current RSS (Linux
// ≥ 4.0: writing 5 to /proc/self/clear_refs), after returning freed memory
// to the OS, so that the next peakRSS covers what happens from now on. It
// reports whether the reset worked.
func resetPeakRSS() bool {
	runtime.GC()
	debug.FreeOSMemory()
	f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	_, err = f.WriteString("5")
	return f.Close() == nil && err == nil
}

// DiskUsage sums the sizes of the regular files under path (as ls shows
// them) and the space the file system allocated for them (as du counts it;
// less for sparse files, which some stores preallocate).
func DiskUsage(path string) (size, alloc int64, err error) {
	err = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			size += info.Size()
			alloc += allocated(info)
		}
		return nil
	})
	return size, alloc, err
}
