package bolt

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// BenchmarkNatural measures natural-language keyword search over 100,000
// real dev turns (backendtest.RunNaturalBenchmarks), as sqlite's
// BenchmarkNatural does; it skips without the shared data (../shared/data
// next to the repository).
func BenchmarkNatural(b *testing.B) {
	h := backendtest.Harness{
		Name: Name,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return Open(context.Background(), Config{Path: path})
		},
	}
	turns, qs, err := dataset.DevTurns("../../../shared/data")
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("the shared dev data is absent (%v); place it in ../shared/data next to the repository", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	w := backendtest.NaturalWorkload{Questions: qs}
	for _, t := range turns {
		w.Turns = append(w.Turns, backendtest.NaturalTurn(t))
	}
	backendtest.RunNaturalBenchmarks(b, h, w, 100_000)
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
	_, qs, err := dataset.DevTurns("../../../shared/data")
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("the shared dev data is absent (%v)", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	var nodes []query.Node
	for _, s := range qs {
		if q := query.Natural(s); q != nil {
			nodes = append(nodes, q)
		}
	}
	ctx := context.Background()
	run := func(rows int) (res [][]driver.Hit, p50 time.Duration, counts [4]int64) {
		d, err := Open(ctx, Config{Path: path, KeywordPruneRows: rows})
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		var lat []time.Duration
		for range 2 { // the first pass warms the caches
			lat, res = lat[:0], res[:0]
			for _, q := range nodes {
				start := time.Now()
				h, err := d.SearchKeyword(ctx, q, driver.Filter{}, 30)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				res = append(res, h)
			}
		}
		slices.Sort(lat)
		for k := range counts {
			counts[k] = d.pruneCounts[k].Load() / 2
		}
		return res, lat[len(lat)/2], counts
	}
	for b.Loop() {
		pruned, p50, counts := run(0)
		exact, p50Exact, _ := run(-1)
		overlap, same := backendtest.TopOverlap(exact, pruned, 10)
		b.ReportMetric(float64(p50Exact.Microseconds()), "exact-p50-µs")
		b.ReportMetric(float64(p50.Microseconds()), "pruned-p50-µs")
		b.ReportMetric(overlap, "top10-overlap")
		b.ReportMetric(same, "same-top10")
		b.ReportMetric(float64(counts[pruneProved])/float64(len(nodes)), "proved")
		b.ReportMetric(float64(counts[pruneApprox])/float64(len(nodes)), "approximate")
	}
}
