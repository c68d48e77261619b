package backendtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/core/corpus"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// A NaturalWorkload is real conversation text for RunNaturalBenchmarks:
// turns (each with its session) and the questions asked about them (e.g.
// dataset.DevTurns over the LoCoMo and LongMemEval-S dev sets). Long
// questions full of common words are what makes a keyword index score many
// matches; this is the workload that measures it.
type NaturalWorkload struct {
	Turns     []NaturalTurn
	Questions []string
}

// A NaturalTurn is one turn of a NaturalWorkload.
type NaturalTurn struct{ Session, Content string }

// build returns n memories, w's turns repeated in order (a repeat's session
// gets a "#<copy>" suffix), and w's questions rewritten as the engine
// rewrites a question (query.Natural: stop words dropped, the rest OR-ed).
func (w NaturalWorkload) build(n int) ([]*driver.Memory, []query.Node, error) {
	var qs []query.Node
	for _, q := range w.Questions {
		if nq := query.Natural(q); nq != nil {
			qs = append(qs, nq)
		}
	}
	if len(w.Turns) == 0 || len(qs) == 0 {
		return nil, nil, fmt.Errorf("natural workload: %d turns and %d usable questions; need at least one of each", len(w.Turns), len(qs))
	}
	mems := make([]*driver.Memory, n)
	for i := range mems {
		t := w.Turns[i%len(w.Turns)]
		m := newMemory(t.Content, withType(driver.TypeTurn), withPool(driver.PoolRaw))
		m.Session = t.Session
		if copy := i / len(w.Turns); copy > 0 {
			m.Session = fmt.Sprintf("%s#%d", m.Session, copy)
		}
		mems[i] = m
	}
	return mems, qs, nil
}

// RunNaturalBenchmarks runs the natural-language keyword benchmarks against
// the backend h opens, over n memories built from w (see NaturalWorkload):
//
//	SearchNatural/n=<n>/all     top-30 keyword searches of the dev questions,
//	SearchNatural/n=<n>/scoped  without a filter and with the engine's
//	                            (p50-µs, p95-µs, p99-µs)
//
// The store is built once per call (several minutes at 100k), in a
// directory that b's cleanup removes, or kept in $MEMOS_BENCH_DIR for later
// runs when that is set.
func RunNaturalBenchmarks(b *testing.B, h Harness, w NaturalWorkload, n int) {
	b.Helper()
	mems, qs, err := w.build(n)
	if err != nil {
		b.Fatal(err)
	}
	size := corpus.FormatSize(n)
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
	for _, fc := range benchFilters {
		b.Run("SearchNatural/n="+size+"/"+fc.name, func(b *testing.B) {
			once.Do(func() {
				if keep {
					return
				}
				bk := benchOpen(b, h, path)
				InsertAll(b, bk, mems)
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

// TopOverlap compares the results of the same searches, got with what
// exact returned, on their top k: the mean share of exact's top k that
// got's top k holds (1 for an empty exact result), and the share of
// searches whose top k is the same set.
func TopOverlap(exact, got [][]driver.Hit, k int) (mean, same float64) {
	if len(exact) == 0 {
		return 1, 1
	}
	for i := range exact {
		want, have := exact[i][:min(k, len(exact[i]))], got[i][:min(k, len(got[i]))]
		n := 0
		for _, h := range have {
			if slices.ContainsFunc(want, func(w driver.Hit) bool { return w.ID == h.ID }) {
				n++
			}
		}
		if len(want) == 0 {
			mean++
		} else {
			mean += float64(n) / float64(len(want))
		}
		if n == len(want) && len(have) == len(want) {
			same++
		}
	}
	return mean / float64(len(exact)), same / float64(len(exact))
}
