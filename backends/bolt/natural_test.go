package bolt

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/backendtest/devbench"
	"github.com/memos-go/memos/core/driver"
)

// BenchmarkNatural measures natural-language keyword search over 100,000
// real dev turns (backendtest.RunNaturalBenchmarks), as sqlite's
// BenchmarkNatural does; it skips without the shared data (../shared/data
// next to the repository).
func BenchmarkNatural(b *testing.B) {
	devbench.RunNaturalDev(b, backendtest.Harness{
		Name: Name,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return Open(context.Background(), Config{Path: path})
		},
	}, "../../../shared/data")
}

// BenchmarkNaturalPrune compares the two-phase keyword search with scoring
// every match on the store BenchmarkNatural keeps in $MEMOS_BENCH_DIR (100k
// dev turns), as sqlite's BenchmarkNaturalPrune does: every dev question,
// top 30, unfiltered, once with keyword_prune_rows -1 and once with the
// default, each pass timed after a warm-up pass. It reports both p50s, how
// close the pruned top 10 is to the exact one (mean overlap, and the share
// of questions with the same top-10 set) and the shares of searches proved
// exact and approximate. Run BenchmarkNatural with MEMOS_BENCH_DIR set
// first.
func BenchmarkNaturalPrune(b *testing.B) {
	dir := os.Getenv("MEMOS_BENCH_DIR")
	path := filepath.Join(dir, "natural-bolt-100k", "store")
	if _, err := os.Stat(path); dir == "" || err != nil {
		b.Skip("needs the store BenchmarkNatural keeps in $MEMOS_BENCH_DIR (natural-bolt-100k)")
	}
	qs := devbench.Questions(b, devbench.DataDir)
	backendtest.RunNaturalPrune(b, qs, func(rows int) (backendtest.PruneStore, error) {
		d, err := Open(context.Background(), Config{Path: path, KeywordPruneRows: rows})
		if err != nil {
			return backendtest.PruneStore{}, err
		}
		return backendtest.PruneStore{Index: d, Close: d.Close,
			Proved: d.pruneCounts[pruneProved].Load, Approx: func() int64 { return 0 }}, nil
	})
}
