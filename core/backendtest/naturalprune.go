package backendtest

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// PruneStore is a keyword index opened with a keyword_prune_rows setting,
// for RunNaturalPrune: Proved and Approx count its searches whose two-phase
// result was proved exact or is an approximation; Close closes it.
type PruneStore struct {
	Index          driver.KeywordIndex
	Proved, Approx func() int64
	Close          func() error
}

// RunNaturalPrune compares a backend's two-phase keyword search with
// scoring every match on the 100k store BenchmarkNatural keeps: every one
// of questions (the dev questions), top 30 (MEMOS_BENCH_LIMIT sets another
// k, e.g. 10), unfiltered, once with keyword_prune_rows -1 and once with the
// default, each pass timed after a warm-up pass. It reports both p50s, how
// close the pruned top 10 is to the exact one (mean overlap, and the share
// of questions with the same top-10 set) and the shares of searches proved
// exact and approximate.
func RunNaturalPrune(b *testing.B, questions []string, open func(rows int) (PruneStore, error)) {
	var nodes []query.Node
	for _, s := range questions {
		if q := query.Natural(s); q != nil {
			nodes = append(nodes, q)
		}
	}
	ctx := context.Background()
	limit := 30
	if v := os.Getenv("MEMOS_BENCH_LIMIT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("MEMOS_BENCH_LIMIT is %q; use a positive number of results", v)
		}
		limit = n
	}
	run := func(rows int) (res [][]driver.Hit, p50 time.Duration, proved, approx int64) {
		st, err := open(rows)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		var lat []time.Duration
		for range 2 { // the first pass warms the caches
			lat, res = lat[:0], res[:0]
			for _, q := range nodes {
				start := time.Now()
				h, err := st.Index.SearchKeyword(ctx, q, driver.Filter{}, limit)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				res = append(res, h)
			}
		}
		slices.Sort(lat)
		return res, lat[len(lat)/2], st.Proved() / 2, st.Approx() / 2
	}
	for b.Loop() {
		pruned, p50, proved, approx := run(0)
		exact, p50Exact, _, _ := run(-1)
		overlap, same := TopOverlap(exact, pruned, 10)
		b.ReportMetric(float64(p50Exact.Microseconds()), "exact-p50-µs")
		b.ReportMetric(float64(p50.Microseconds()), "pruned-p50-µs")
		b.ReportMetric(overlap, "top10-overlap")
		b.ReportMetric(same, "same-top10")
		b.ReportMetric(float64(proved)/float64(len(nodes)), "proved")
		b.ReportMetric(float64(approx)/float64(len(nodes)), "approximate")
	}
}
