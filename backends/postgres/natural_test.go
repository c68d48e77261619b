package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/backendtest/devbench"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// BenchmarkNatural measures natural-language keyword search over 100,000
// real dev turns (devbench.RunNaturalDev), as sqlite's and bolt's
// BenchmarkNatural do; it skips without MEMOS_TEST_PG_DSN or the shared
// data (../shared/data next to the repository). Building the store takes
// minutes: with MEMOS_BENCH_DIR set it is kept, in the schema
// natural_postgres_100k of MEMOS_TEST_PG_DSN's database (best a database
// of its own), and later runs reuse it. A file in MEMOS_BENCH_DIR records
// that the build completed; without it the schema is dropped and built
// again. Otherwise the store is a throwaway schema.
//
//	MEMOS_TEST_PG_DSN=... MEMOS_BENCH_DIR=... go test -run '^$' -bench Natural -benchtime 200x ./backends/postgres/
func BenchmarkNatural(b *testing.B) {
	dsn := testDSN(b)
	devbench.RunNaturalDev(b, backendtest.Harness{
		Name: postgres.Name,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return openNatural(b, dsn, path)
		},
	}, "../../../shared/data")
}

// BenchmarkNaturalPrune compares the two-phase keyword search with
// evaluating every candidate on the store BenchmarkNatural keeps (100k dev
// turns), as sqlite's and bolt's BenchmarkNaturalPrune do: every dev
// question, top 30, unfiltered, once with keyword_prune_rows -1 and once
// with the default, each pass timed after a warm-up pass. It reports both
// p50s, how close the pruned top 10 is to the exact one (mean overlap, and
// the share of questions with the same top-10 set) and the shares of
// searches proved exact and approximate. Run BenchmarkNatural with
// MEMOS_BENCH_DIR set first.
func BenchmarkNaturalPrune(b *testing.B) {
	dsn := testDSN(b)
	dir := os.Getenv("MEMOS_BENCH_DIR")
	path := filepath.Join(dir, "natural-postgres-100k", "store")
	if _, err := os.Stat(path); dir == "" || err != nil {
		b.Skip("needs the store BenchmarkNatural keeps with $MEMOS_BENCH_DIR (natural-postgres-100k)")
	}
	qs := devbench.Questions(b, devbench.DataDir)
	backendtest.RunNaturalPrune(b, qs, func(rows int) (backendtest.PruneStore, error) {
		d, err := postgres.Open(context.Background(), postgres.Config{DSN: dsn, Schema: keptSchema(path), KeywordPruneRows: rows})
		if err != nil {
			return backendtest.PruneStore{}, err
		}
		count := func(k int) func() int64 {
			return func() int64 {
				c := pruneCounts(b, d)
				return [2]int64{c[0] - c[1], c[1]}[k]
			}
		}
		return backendtest.PruneStore{Index: d, Close: d.Close, Proved: count(0), Approx: count(1)}, nil
	})
}

// openNatural opens the store RunNaturalBenchmarks names path: kept when
// path is in $MEMOS_BENCH_DIR (see BenchmarkNatural), whose file at path
// is written when the handle that built the store closes.
func openNatural(b *testing.B, dsn, path string) (driver.Backend, error) {
	ctx := context.Background()
	dir := os.Getenv("MEMOS_BENCH_DIR")
	if dir == "" || !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
		return postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schemaFor(b, dsn, path)})
	}
	schema := keptSchema(path)
	if _, err := os.Stat(path); err == nil {
		return postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema})
	}
	// No completed build: start from an empty schema.
	dropSchema(b, dsn, schema)
	db, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema})
	if err != nil {
		return nil, err
	}
	return &building{DB: db, path: path, schema: schema}, nil
}

// keptSchema names the schema of the store kept at path: its directory's
// name ("natural-postgres-100k" → natural_postgres_100k).
func keptSchema(path string) string {
	return strings.ReplaceAll(filepath.Base(filepath.Dir(path)), "-", "_")
}

// building is the handle that builds a kept store: its Close records that
// the build completed.
type building struct {
	*postgres.DB
	path, schema string
}

func (s *building) Close() error {
	if err := s.DB.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(s.path, []byte("schema "+s.schema+"\n"), 0o644); err != nil {
		return fmt.Errorf("record the kept store: %w", err)
	}
	return nil
}

// BenchmarkNaturalPruneVsFTS5 measures the two-phase search's top 10
// against scoring every match, the way BenchmarkNaturalPrune does, but
// takes the exact results from FTS5 on sqlite's kept store (the same 100k
// memories with the same ids, from sqlite's BenchmarkNatural): evaluating
// every candidate here costs seconds a search at 100k, and its results are
// FTS5's (TestEquivalentToSQLite). Every 50th question checks that: its
// exact search runs here too, and exact-mismatches counts those whose top
// 30 differs from FTS5's (ids and order). It reports the pruned p50 and
// p95 (every dev question, top 30, unfiltered, timed after a warm-up
// pass), the top-10 overlap and the shares proved and approximate. Run
// BenchmarkNatural with MEMOS_BENCH_DIR set first, here and in
// backends/sqlite.
func BenchmarkNaturalPruneVsFTS5(b *testing.B) {
	dsn := testDSN(b)
	ctx := context.Background()
	dir := os.Getenv("MEMOS_BENCH_DIR")
	path := filepath.Join(dir, "natural-postgres-100k", "store")
	ref := filepath.Join(dir, "natural-sqlite-100k", "store")
	for _, p := range []string{path, ref} {
		if _, err := os.Stat(p); dir == "" || err != nil {
			b.Skipf("needs the stores BenchmarkNatural keeps in $MEMOS_BENCH_DIR (%s): run it here and in backends/sqlite", p)
		}
	}
	qs := devbench.Questions(b, devbench.DataDir)
	var nodes []query.Node
	for _, s := range qs {
		if q := query.Natural(s); q != nil {
			nodes = append(nodes, q)
		}
	}
	fts, err := sqlite.Open(ctx, sqlite.Config{Path: ref, KeywordPruneRows: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer fts.Close()
	pruned, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: keptSchema(path)})
	if err != nil {
		b.Fatal(err)
	}
	defer pruned.Close()
	exact, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: keptSchema(path), KeywordPruneRows: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer exact.Close()
	search := func(d driver.KeywordIndex, q query.Node) []driver.Hit {
		h, err := d.SearchKeyword(ctx, q, driver.Filter{}, 30)
		if err != nil {
			b.Fatalf("%s: %v", q, err)
		}
		return h
	}
	for b.Loop() {
		want := make([][]driver.Hit, len(nodes))
		for i, q := range nodes {
			want[i] = search(fts, q)
		}
		mismatches := 0
		for i := 0; i < len(nodes); i += 50 {
			got := search(exact, nodes[i])
			if !slices.EqualFunc(got, want[i], func(a, c driver.Hit) bool { return a.ID == c.ID }) {
				mismatches++
			}
		}
		var got [][]driver.Hit
		var lat []time.Duration
		before := stats(b, pruned)
		pruneBefore := pruneCounts(b, pruned)
		for range 2 { // the first pass warms the caches
			got, lat = got[:0], lat[:0]
			for _, q := range nodes {
				start := time.Now()
				got = append(got, search(pruned, q))
				lat = append(lat, time.Since(start))
			}
		}
		after, pruneAfter := stats(b, pruned), pruneCounts(b, pruned)
		slices.Sort(lat)
		overlap, same := backendtest.TopOverlap(want, got, 10)
		searches := float64(2 * len(nodes))
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "pruned-p50-µs")
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "pruned-p95-µs")
		b.ReportMetric(overlap, "top10-overlap")
		b.ReportMetric(same, "same-top10")
		b.ReportMetric(float64(pruneAfter[0]-pruneBefore[0]-(pruneAfter[1]-pruneBefore[1]))/searches, "proved")
		b.ReportMetric(float64(pruneAfter[1]-pruneBefore[1])/searches, "approximate")
		b.ReportMetric(float64(after[0]-before[0])/searches, "candidates/search")
		b.ReportMetric(float64(mismatches), "exact-mismatches")
	}
}

// pruneCounts returns d's counts of two-phase searches and of those that
// were approximate.
func pruneCounts(tb testing.TB, d *postgres.DB) [2]int64 {
	tb.Helper()
	m, err := d.BackendStats(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return [2]int64{m["keyword_pruned"].(int64), m["keyword_approx"].(int64)}
}
