package backendtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// NaturalWorkload returns a store of n real conversation turns and the
// questions asked about them, rewritten as the engine rewrites a question
// (query.Natural: stop words dropped, the rest OR-ed): the distinct turns of
// the LoCoMo and LongMemEval-S dev sets in dataDir (see the data README),
// repeated in order until there are n, each with its session, and every dev
// question. Long questions full of common words are what makes a keyword
// index score many matches; this is the workload that measures it. A
// missing data file is an error that wraps fs.ErrNotExist.
func NaturalWorkload(dataDir string, n int) ([]*driver.Memory, []query.Node, error) {
	lm, err := dataset.LoadLoCoMo(filepath.Join(dataDir, "locomo", "locomo-dev.json"), dataset.Options{})
	if err != nil {
		return nil, nil, err
	}
	lme, err := dataset.LoadLongMemEval(filepath.Join(dataDir, "longmemeval", "longmemeval-s-dev100.json.gz"), dataset.Options{})
	if err != nil {
		return nil, nil, err
	}
	var turns []*driver.Memory
	var qs []query.Node
	seen := map[string]bool{}
	for _, d := range []*dataset.Dataset{lm, lme} {
		for _, c := range d.Corpora {
			for _, doc := range c.Docs {
				in := doc.Input
				if k := in.Session + "\x00" + in.Content; !seen[k] {
					seen[k] = true
					m := newMemory(in.Content, withType(driver.TypeTurn), withPool(driver.PoolRaw))
					m.Session = in.Session
					turns = append(turns, m)
				}
			}
			for _, q := range c.Queries {
				if nq := query.Natural(q.Text); nq != nil {
					qs = append(qs, nq)
				}
			}
		}
	}
	if len(turns) == 0 || len(qs) == 0 {
		return nil, nil, fmt.Errorf("natural workload: no turns or no questions in %s", dataDir)
	}
	mems := make([]*driver.Memory, n)
	for i := range mems {
		m := *turns[i%len(turns)]
		if copy := i / len(turns); copy > 0 {
			m.Session = fmt.Sprintf("%s#%d", m.Session, copy)
		}
		mems[i] = &m
	}
	return mems, qs, nil
}

// RunNaturalBenchmarks runs the natural-language keyword benchmarks against
// the backend h opens, over NaturalWorkload(dataDir, n):
//
//	SearchNatural/n=<n>/all     top-30 keyword searches of the dev questions,
//	SearchNatural/n=<n>/scoped  without a filter and with the engine's
//	                            (p50-µs, p95-µs, p99-µs)
//
// The store is built once per call (several minutes at 100k), in a
// directory that b's cleanup removes, or kept in $MEMOS_BENCH_DIR for later
// runs when that is set. A backend's benchmark skips when the
// data is missing (errors.Is(err, fs.ErrNotExist) from NaturalWorkload).
func RunNaturalBenchmarks(b *testing.B, h Harness, dataDir string, n int) {
	b.Helper()
	mems, qs, err := NaturalWorkload(dataDir, n)
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("the shared dev data is absent (%v); place it in ../shared/data next to the repository", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	size := dataset.FormatSize(n)
	var once sync.Once
	path := filepath.Join(b.TempDir(), "store")
	keep := false
	if dir := os.Getenv("MEMOS_BENCH_DIR"); dir != "" {
		// A kept store: built once, reused by later runs.
		path = filepath.Join(dir, fmt.Sprintf("natural-%s-%s", h.Name, size), "store")
		if _, err := os.Stat(path); err == nil {
			keep = true
		} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	scoped := driver.Filter{
		Namespaces: []string{driver.DefaultNamespace, "project:alpha"},
		Statuses:   []driver.Status{driver.StatusActive},
	}
	for _, fc := range []struct {
		name string
		f    driver.Filter
	}{{"all", driver.Filter{}}, {"scoped", scoped}} {
		b.Run("SearchNatural/n="+size+"/"+fc.name, func(b *testing.B) {
			once.Do(func() {
				if keep {
					return
				}
				bk := benchOpen(b, h, path)
				for batch := range slices.Chunk(mems, benchBatch) {
					benchInsert(b, bk, batch)
				}
				if err := bk.Close(); err != nil {
					b.Fatal(err)
				}
			})
			bk := benchOpen(b, h, path)
			defer bk.Close()
			ctx := context.Background()
			// One pass first: the queries find something, and caches are warm.
			for _, q := range qs {
				if _, err := bk.SearchKeyword(ctx, q, fc.f, 30); err != nil {
					b.Fatalf("SearchKeyword(%s): %v", describe(q), err)
				}
			}
			b.ResetTimer()
			lat := make([]time.Duration, 0, 1024)
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				if _, err := bk.SearchKeyword(ctx, qs[i*7%len(qs)], fc.f, 30); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}
