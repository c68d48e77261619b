package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/backendtest/devbench"
	"github.com/memos-go/memos/core/bench/benchenv"
	"github.com/memos-go/memos/core/corpus"
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

// BenchmarkPruneReads measures what the two-phase keyword search reads with
// the terms' stored frontiers (bound.go) and without them (every phrase
// bounded by MaxTerm, as before they were kept), on the store
// BenchmarkNatural keeps in $MEMOS_BENCH_DIR: every dev question, top 10
// (MEMOS_BENCH_LIMIT sets another k), unfiltered, the two settings
// alternated pass by pass after a warm-up pass of each. It reports, per
// search, the postings, lengths and contents read, the terms whose
// postings were decoded from FTS5's records and those that fell back to
// the fts5vocab table (fts5read.go), the p50 and p95 of each
// setting, the share answered by FTS5 (not proved in two phases), and
// fails if any result differs between the two. MEMOS_BENCH_N picks the
// store by its size (BenchmarkNatural's; 100k by default), and
// MEMOS_BENCH_QUESTIONS N keeps every k-th question so that about N are
// asked (a 1M store answers a few a second).
func BenchmarkPruneReads(b *testing.B) {
	dir := os.Getenv("MEMOS_BENCH_DIR")
	size := corpus.FormatSize(benchenv.N(b, 100_000))
	path := filepath.Join(dir, "natural-sqlite-"+size, "store")
	if _, err := os.Stat(path); dir == "" || err != nil {
		b.Skipf("needs the store BenchmarkNatural keeps in $MEMOS_BENCH_DIR (natural-sqlite-%s)", size)
	}
	limit := 10
	if v := os.Getenv("MEMOS_BENCH_LIMIT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("MEMOS_BENCH_LIMIT is %q; use a positive number of results", v)
		}
		limit = n
	}
	var nodes []query.Node
	for _, s := range devbench.Questions(b, devbench.DataDir) {
		if q := query.Natural(s); q != nil {
			nodes = append(nodes, q)
		}
	}
	if v := os.Getenv("MEMOS_BENCH_QUESTIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("MEMOS_BENCH_QUESTIONS is %q; want a positive number of questions", v)
		}
		step := max(len(nodes)/n, 1)
		var kept []query.Node
		for i := 0; i < len(nodes); i += step {
			kept = append(kept, nodes[i])
		}
		nodes = kept
	}
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	type result struct {
		hits  [][]driver.Hit
		lat   []time.Duration
		reads [3]int64
		fts   [2]int64 // terms decoded, and read from fts5vocab instead
		exact int64    // searches FTS5 answered
	}
	pass := func(loose bool) result {
		d.looseBounds = loose
		var r result
		var before [3]int64
		for k := range before {
			before[k] = d.pruneReads[k].Load()
		}
		fts := [2]int64{d.ftsReads[0].Load(), d.ftsReads[1].Load()}
		exact := d.pruneCounts[pruneExact].Load()
		for _, q := range nodes {
			start := time.Now()
			h, err := d.SearchKeyword(ctx, q, driver.Filter{}, limit)
			if err != nil {
				b.Fatal(err)
			}
			r.lat = append(r.lat, time.Since(start))
			r.hits = append(r.hits, h)
		}
		for k := range before {
			r.reads[k] = d.pruneReads[k].Load() - before[k]
		}
		for k := range fts {
			r.fts[k] = d.ftsReads[k].Load() - fts[k]
		}
		r.exact = d.pruneCounts[pruneExact].Load() - exact
		slices.Sort(r.lat)
		return r
	}
	for b.Loop() {
		pass(false)
		pass(true)
		var tight, loose []result
		for range 2 {
			tight = append(tight, pass(false))
			loose = append(loose, pass(true))
		}
		for i := range nodes {
			if !slices.Equal(tight[0].hits[i], loose[0].hits[i]) {
				b.Fatalf("%s: with frontiers %s, without %s", nodes[i], backendtest.FormatHits(tight[0].hits[i]), backendtest.FormatHits(loose[0].hits[i]))
			}
		}
		report := func(name string, rs []result) {
			n := float64(len(nodes) * len(rs))
			var lat []time.Duration
			var reads [3]int64
			var fts [2]int64
			var exact int64
			for _, r := range rs {
				lat = append(lat, r.lat...)
				exact += r.exact
				for k := range reads {
					reads[k] += r.reads[k]
				}
				fts[0] += r.fts[0]
				fts[1] += r.fts[1]
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), name+"-p50-µs")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), name+"-p95-µs")
			for k, what := range []string{"postings", "lengths", "contents"} {
				b.ReportMetric(float64(reads[k])/n, name+"-"+what+"/search")
			}
			b.ReportMetric(float64(fts[0])/n, name+"-decoded/search")
			b.ReportMetric(float64(fts[1])/n, name+"-fallbacks/search")
			b.ReportMetric(float64(exact)/n, name+"-fts5-answered/search")
		}
		report("frontiers", tight)
		report("maxterm", loose)
	}
}
