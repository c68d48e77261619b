package sqlite

import (
	"context"
	"database/sql"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/longtest"
	"github.com/memos-go/memos/core/query"
)

// The benchmarks every backend shares are backendtest.RunBenchmarks
// (BenchmarkBackend in conformance_test.go). This file measures what only
// sqlite has: the cost of SearchKeyword over the bare FTS5 query, on the
// same workload.

var search10k struct {
	once    sync.Once
	dir     string
	path    string
	queries []query.Node
	err     error
}

// store10k returns the path of a shared 10k-memory store and its queries,
// built once per test binary run (and removed by TestMain).
func store10k(b *testing.B) (string, []query.Node) {
	search10k.once.Do(func() {
		ms, qs, err := backendtest.BenchWorkload(10_000)
		if err != nil {
			search10k.err = err
			return
		}
		search10k.queries = qs
		if search10k.dir, search10k.err = os.MkdirTemp("", "memos-sqlite-bench-"); search10k.err != nil {
			return
		}
		search10k.path = filepath.Join(search10k.dir, "memory.db")
		d, err := Open(context.Background(), Config{Path: search10k.path})
		if err != nil {
			search10k.err = err
			return
		}
		defer d.Close()
		for batch := range slices.Chunk(ms, 1000) {
			search10k.err = d.Update(context.Background(), func(tx driver.Tx) error {
				for _, m := range batch {
					if err := tx.Insert(m); err != nil {
						return err
					}
				}
				return nil
			})
			if search10k.err != nil {
				return
			}
		}
	})
	if search10k.err != nil {
		b.Fatal(search10k.err)
	}
	return search10k.path, search10k.queries
}

func TestMain(m *testing.M) {
	// TestFTSPostings opens a store per case: 100 cases took 66 s under
	// the race detector. 20 here; .ci/run checks rapid's 100 without it.
	flag.Parse()
	longtest.QuickRapidChecks(20)
	code := m.Run()
	if search10k.dir != "" {
		os.RemoveAll(search10k.dir)
	}
	os.Exit(code)
}

// rawSearch is the baseline: the bare FTS5 query, no join, no filter, no
// tie-break.
const rawSearch = `SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT 20`

func runRaw(b *testing.B, st *sql.Stmt, q string) {
	rows, err := st.Query(q)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
	}
	if err := rows.Close(); err != nil {
		b.Fatal(err)
	}
}

var benchFilter = driver.Filter{
	Namespaces: []string{driver.DefaultNamespace, "project:alpha"},
	Statuses:   []driver.Status{driver.StatusActive},
}

// BenchmarkSearchOverhead10k runs the raw query and SearchKeyword
// alternately on the same queries and file and reports the ratio of their
// total times and the median of the per-query ratios (the target is at most
// 1.3).
func BenchmarkSearchOverhead10k(b *testing.B) {
	path, qs := store10k(b)
	d := openDB(b, path)
	defer d.Close()
	strs := make([]string, len(qs))
	for i, q := range qs {
		strs[i] = q.String()
	}
	raw, err := d.r.Prepare(rawSearch)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()
	for _, fc := range []struct {
		name string
		f    driver.Filter
	}{{"nofilter", driver.Filter{}}, {"filter", benchFilter}} {
		b.Run(fc.name, func(b *testing.B) {
			var tRaw, tOurs time.Duration
			var ratios []float64
			ours := func(q query.Node) {
				if _, err := d.SearchKeyword(ctx, q, fc.f, 20); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; b.Loop(); i++ {
				q, s := qs[i%len(qs)], strs[i%len(qs)]
				// Alternate which runs first, so that neither always finds
				// the pages warm.
				var r, o time.Duration
				if i%2 == 0 {
					r = timed(func() { runRaw(b, raw, s) })
					o = timed(func() { ours(q) })
				} else {
					o = timed(func() { ours(q) })
					r = timed(func() { runRaw(b, raw, s) })
				}
				tRaw += r
				tOurs += o
				ratios = append(ratios, float64(o)/float64(r))
			}
			slices.Sort(ratios)
			b.ReportMetric(float64(tOurs)/float64(tRaw), "ratio")
			b.ReportMetric(ratios[len(ratios)/2], "ratio-p50")
		})
	}
}

func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}
