package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/backendtest/devbench"
)

// BenchmarkNaturalPrune compares the two-phase keyword search with FTS5
// scoring every match on the store BenchmarkNatural keeps in
// $MEMOS_BENCH_DIR (100k dev turns): every dev question, top 30, unfiltered,
// once with keyword_prune_rows -1 and once with the default, each pass
// timed after a warm-up pass. It reports both p50s, how close the pruned
// top 10 is to FTS5's (mean overlap, and the share of questions with the
// same top-10 set) and the share of searches proved exact. Run
// BenchmarkNatural with MEMOS_BENCH_DIR set first.
func BenchmarkNaturalPrune(b *testing.B) {
	dir := os.Getenv("MEMOS_BENCH_DIR")
	path := filepath.Join(dir, "natural-sqlite-100k", "store")
	if _, err := os.Stat(path); dir == "" || err != nil {
		b.Skip("needs the store BenchmarkNatural keeps in $MEMOS_BENCH_DIR (natural-sqlite-100k)")
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
