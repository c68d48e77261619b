//go:build unix

package bench_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/memos-go/memos/core/bench"
	"github.com/memos-go/memos/core/bench/benchenv"
	"github.com/memos-go/memos/core/bench/dataset"
)

// BenchmarkIngestTurns is the ingest of `memos bench --backends sqlite
// --embedders hash --dataset turns:10k:../shared/data` (RememberBatch, 500
// at a time, the hash embedder included) with one timed query, so that a
// CPU profile (-cpuprofile) is nearly all ingest. MEMOS_BENCH_N sets the
// number of turns (e.g. 100000), MEMOS_BENCH_DATA the data directory. It
// reports memories per second, what the ingest wrote (MiB, /proc/self/io)
// and its ratio to the store's size on disk, and the process's CPU time
// per memory (cpu-µs/mem: user and system, the reopen and the one query
// included), which other work on the machine moves much less than the
// rate:
//
//	MEMOS_BENCH_N=100000 go test -run '^$' -bench IngestTurns -benchtime 1x -cpuprofile cpu.prof ./core/bench/
func BenchmarkIngestTurns(b *testing.B) {
	n := benchenv.N(b, 10_000)
	data := benchenv.DataDir("../../../shared/data")
	d, err := dataset.Turns(dataset.TurnsOptions{Dir: data, Docs: n, Queries: 1, Seed: 1})
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("the shared dev data is absent (%v); set MEMOS_BENCH_DATA or place it in ../shared/data next to the repository", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cpu0 := benchenv.CPUTime()
		rep, err := bench.Run(context.Background(), bench.Config{Backends: []string{"sqlite"}, Embedders: []string{"hash"},
			Datasets: []*dataset.Dataset{d}, Queries: 1, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		cpu := benchenv.CPUTime() - cpu0
		r := rep.Results[0]
		b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/mem")
		b.ReportMetric(r.Ingest.PerSecond, "mem/s")
		b.ReportMetric(float64(r.Ingest.Written)/(1<<20), "written-MiB")
		b.ReportMetric(float64(r.DiskAllocated)/(1<<20), "disk-MiB")
		if r.DiskAllocated > 0 {
			b.ReportMetric(float64(r.Ingest.Written)/float64(r.DiskAllocated), "written/disk")
		}
	}
}
