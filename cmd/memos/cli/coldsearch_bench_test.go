//go:build linux

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench/benchenv"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/embedders/hash"
)

// BenchmarkCLISearch measures `memos search QUESTION` end to end, as a
// user runs it: a new process that loads its configuration, opens the
// store and its vector snapshot, runs the default (hybrid) search and
// prints the answer. The store holds $MEMOS_BENCH_N (default 100,000) real
// conversation turns (dataset.Turns over the shared dev data,
// $MEMOS_BENCH_DATA or ../shared/data next to the repository; the
// benchmark skips without it) with the default hash embedder, written as
// `memos bench` writes them (RememberBatch, 500 at a time), and closed
// so that its vector snapshot is saved. Each iteration runs one of the
// data set's questions; the benchmark reports the wall time per command
// (p50-ms, p95-ms) and the largest peak resident set of a command
// (peak-rss-MiB, from the child's rusage).
//
// Building the store takes a minute or more: with $MEMOS_BENCH_DIR set it
// is kept there (cli-search-<n>/home) and later runs reuse it, which also
// lets another build of memos be timed on the same store:
//
//	MEMOS_BENCH_DIR=/tmp/mb go test -run '^$' -bench CLISearch -benchtime 20x ./cmd/memos/cli/
func BenchmarkCLISearch(b *testing.B) {
	n := benchenv.N(b, 100_000)
	data := benchenv.DataDir("../../../../shared/data")
	d, err := dataset.Turns(dataset.TurnsOptions{Dir: data, Docs: n, Seed: 1})
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("the shared dev data is absent (%v); set MEMOS_BENCH_DATA or place it in ../shared/data next to the repository", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	home := filepath.Join(b.TempDir(), "home")
	if dir := os.Getenv("MEMOS_BENCH_DIR"); dir != "" {
		home = filepath.Join(dir, fmt.Sprintf("cli-search-%d", n), "home")
	}
	if err := buildCLIStore(home, d.Corpora[0].Docs); err != nil {
		b.Fatal(err)
	}
	bin := buildMemos(b)
	qs := d.Corpora[0].Queries
	var wall []time.Duration
	var peak int64
	for i := 0; b.Loop(); i++ {
		cmd := exec.Command(bin, "search", qs[i%len(qs)].Text)
		cmd.Env = append(os.Environ(), "MEMOS_HOME="+home, "HOME="+filepath.Dir(home))
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = nil, &stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("memos search: %v: %s", err, stderr.String())
		}
		wall = append(wall, time.Since(t0))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss*1024) // KiB on Linux
		}
	}
	slices.Sort(wall)
	at := func(q float64) float64 { return float64(wall[int(q*float64(len(wall)-1))]) / 1e6 }
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
}

// buildCLIStore writes docs into the store of a memos home (memory.db and
// its vector snapshot, as the CLI opens them) unless a previous run
// completed it (the file "complete" says so).
func buildCLIStore(home string, docs []dataset.Doc) error {
	done := filepath.Join(filepath.Dir(home), "complete")
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	if err := os.RemoveAll(home); err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	ctx := context.Background()
	path := filepath.Join(home, "memory.db")
	be, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		return err
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		return errors.Join(err, be.Close())
	}
	eng, err := core.Open(ctx, core.Options{Backend: be, Embedder: emb, VectorSnapshot: path + ".vectors",
		Govern: core.GovernConfig{Contradictions: core.ContradictOff}})
	if err != nil {
		return errors.Join(err, be.Close())
	}
	for start := 0; start < len(docs); start += 500 {
		var ins []core.Input
		for _, doc := range docs[start:min(start+500, len(docs))] {
			ins = append(ins, doc.Input)
		}
		if _, err := eng.RememberBatch(ctx, ins); err != nil {
			return errors.Join(err, eng.Close())
		}
	}
	if err := eng.Close(); err != nil {
		return err
	}
	return os.WriteFile(done, nil, 0o600)
}
