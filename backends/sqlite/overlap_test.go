package sqlite

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
