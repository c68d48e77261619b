package backendtest

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/corpus"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// Benchmark workload sizes: ingest transactions of benchBatch memories, and
// searches over a store of benchStore memories, all from core/corpus (the
// corpus of `memos bench`'s synthetic data set) with benchDim-dimensional
// unit vectors.
const (
	benchBatch = 1000
	benchStore = 10_000
	benchDim   = 256
	benchSeed  = 1
)

// RunBenchmarks runs the backend benchmarks against the backend h opens. The
// names are the same for every backend, so that benchstat lines backends up
// (go test -bench . -count 10 > sqlite.txt, the same for bolt, then
// benchstat -col /backend or benchstat sqlite.txt bolt.txt):
//
//	Insert/batch=1000          ingest: transactions of 1000 memories with
//	                           256-dimensional vectors into a growing store
//	                           (memories/s)
//	Build/n=10k                a store of 10,000 memories in batches of 1000;
//	                           its size on disk after Close (disk-bytes/memory)
//	SearchKeyword/n=10k/all    top-20 keyword searches, no filter (p50-µs,
//	SearchKeyword/n=10k/scoped p95-µs, p99-µs); scoped is the engine's filter:
//	                           two namespaces, active memories only
//	Get/n=10k                  one memory by id in a read transaction
//	ColdOpen/n=10k             Open of the closed store plus its first search
//
// The queries are the corpus's: three topic words as the engine rewrites a
// question (an OR), two of them ANDed, a phrase and a prefix. The 10k store
// is built once per call, before the first benchmark that needs it.
func RunBenchmarks(b *testing.B, h Harness) {
	b.Helper()
	if h.Open == nil {
		b.Fatal("backendtest: Harness.Open is nil")
	}
	mems, qs, err := BenchWorkload(benchStore)
	if err != nil {
		b.Fatal(err)
	}

	b.Run("Insert/batch=1000", func(b *testing.B) {
		bk := benchOpen(b, h, filepath.Join(b.TempDir(), "store"))
		defer bk.Close()
		batches := slices.Collect(slices.Chunk(mems, benchBatch))
		for i := 0; b.Loop(); i++ {
			benchInsert(b, bk, batches[i%len(batches)])
		}
		b.ReportMetric(float64(benchBatch*b.N)/b.Elapsed().Seconds(), "memories/s")
	})

	b.Run("Build/n=10k", func(b *testing.B) {
		var size int64
		for b.Loop() {
			dir := b.TempDir()
			size = benchBuild(b, h, filepath.Join(dir, "store"), mems)
		}
		b.ReportMetric(float64(size)/benchStore, "disk-bytes/memory")
		b.ReportMetric(float64(benchStore*b.N)/b.Elapsed().Seconds(), "memories/s")
	})

	// The shared 10k store, built on first use in the parent's TempDir (which
	// outlives every sub-benchmark) and closed between benchmarks.
	parentDir := b.TempDir()
	var store string
	shared := func(b *testing.B) string {
		b.Helper()
		if store == "" {
			path := filepath.Join(parentDir, "store")
			benchBuild(b, h, path, mems)
			store = path
		}
		return store
	}

	for _, fc := range benchFilters {
		b.Run("SearchKeyword/n=10k/"+fc.name, func(b *testing.B) {
			bk := benchOpen(b, h, shared(b))
			defer bk.Close()
			benchCheckQueries(b, bk, qs)
			b.ResetTimer()
			ctx := context.Background()
			lat := make([]time.Duration, 0, 1024)
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				if _, err := bk.SearchKeyword(ctx, qs[i%len(qs)], fc.f, 20); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}

	b.Run("Get/n=10k", func(b *testing.B) {
		bk := benchOpen(b, h, shared(b))
		defer bk.Close()
		ids := benchIDs(b, bk)
		b.ResetTimer()
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			err := bk.View(ctx, func(tx driver.ReadTx) error {
				_, err := tx.Get(ids[i*7919%len(ids)], 0)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("ColdOpen/n=10k", func(b *testing.B) {
		path := shared(b)
		for b.Loop() {
			bk := benchOpen(b, h, path)
			if _, err := bk.SearchKeyword(context.Background(), qs[0], driver.Filter{}, 20); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := bk.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}

// BenchWorkload returns the benchmarks' workload for a store of n
// memories: n new memories (ids zero, 256-dimensional unit vectors) from the
// seeded corpus of core/corpus, and 200 keyword queries over it. A backend's
// own benchmarks (of what only it has) use it to measure on the same data as
// RunBenchmarks.
func BenchWorkload(n int) ([]*driver.Memory, []query.Node, error) {
	c, err := corpus.New(corpus.Options{Docs: n, Queries: 200, Seed: benchSeed})
	if err != nil {
		return nil, nil, err
	}
	return benchMemories(c), benchQueries(c), nil
}

// benchMemories turns the corpus into memories with seeded unit vectors.
func benchMemories(c *corpus.Corpus) []*driver.Memory {
	r := rand.New(rand.NewPCG(benchSeed, 0x76656374))
	ms := make([]*driver.Memory, len(c.Docs))
	for i, d := range c.Docs {
		v := make([]float32, benchDim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		driver.Normalize(v)
		ms[i] = newMemory(d.Content,
			withNamespace(d.Namespace), withType(d.Type), withPool(d.Type.DefaultPool()),
			withEmbedding("bench-256", v...))
		ms[i].Significance = d.Significance
		ms[i].Source = d.Source
		ms[i].Session = d.Session
	}
	return ms
}

// benchQueries returns keyword queries of the kinds the engine sends, over
// the corpus queries' words.
func benchQueries(c *corpus.Corpus) []query.Node {
	qs := make([]query.Node, len(c.Queries))
	for i, q := range c.Queries {
		w := q.Words
		switch i % 4 {
		case 0, 1:
			qs[i] = query.Natural(strings.Join(w, " "))
		case 2:
			qs[i] = &query.And{Children: []query.Node{term(w[0]), term(w[1])}}
		case 3:
			qs[i] = &query.Or{Children: []query.Node{prefix(w[0][:3]), phrase(w[1], w[2])}}
		}
	}
	return qs
}

func benchOpen(b *testing.B, h Harness, path string) driver.Backend {
	b.Helper()
	bk, err := h.Open(b, path)
	if err != nil {
		b.Fatalf("open %s backend at %s: %v", h.Name, path, err)
	}
	return bk
}

// benchInsert inserts ms in one transaction, as new memories.
func benchInsert(b testing.TB, bk driver.Backend, ms []*driver.Memory) {
	b.Helper()
	err := bk.Update(context.Background(), func(tx driver.Tx) error {
		for _, m := range ms {
			m.ID = 0
			if err := tx.Insert(m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// InsertAll inserts ms into bk, a thousand to a transaction. Each memory's
// ID is reset first, so that one workload can fill several stores.
func InsertAll(tb testing.TB, bk driver.Backend, ms []*driver.Memory) {
	tb.Helper()
	for batch := range slices.Chunk(ms, benchBatch) {
		benchInsert(tb, bk, batch)
	}
}

// benchBuild builds a store of ms at path, closes it and returns the size
// of its files (everything in path's directory).
func benchBuild(b *testing.B, h Harness, path string, ms []*driver.Memory) int64 {
	b.Helper()
	bk := benchOpen(b, h, path)
	InsertAll(b, bk, ms)
	if err := bk.Close(); err != nil {
		b.Fatal(err)
	}
	var size int64
	err := filepath.WalkDir(filepath.Dir(path), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		size += info.Size()
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return size
}

// benchCheckQueries keeps the benchmark honest: most of its queries find
// something.
func benchCheckQueries(b *testing.B, bk driver.Backend, qs []query.Node) {
	b.Helper()
	empty := 0
	for _, q := range qs {
		hits, err := bk.SearchKeyword(context.Background(), q, driver.Filter{}, 20)
		if err != nil {
			b.Fatalf("SearchKeyword(%s): %v", describe(q), err)
		}
		if len(hits) == 0 {
			empty++
		}
	}
	if empty > len(qs)/10 {
		b.Fatalf("%d of %d benchmark queries match nothing", empty, len(qs))
	}
}

func benchIDs(b *testing.B, bk driver.Backend) []int64 {
	b.Helper()
	var ids []int64
	err := bk.View(context.Background(), func(tx driver.ReadTx) error {
		return tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			ids = append(ids, m.ID)
			return nil
		})
	})
	if err != nil || len(ids) == 0 {
		b.Fatalf("Scan: %d ids, %v", len(ids), err)
	}
	return ids
}

// reportLatency reports the percentiles of lat.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p int) float64 { return float64(lat[(len(lat)-1)*p/100].Microseconds()) }
	b.ReportMetric(pct(50), "p50-µs")
	b.ReportMetric(pct(95), "p95-µs")
	b.ReportMetric(pct(99), "p99-µs")
}

// benchFilters are the keyword benchmarks' two cases: no filter, and the
// engine's usual one (the scope's namespaces, active memories).
var benchFilters = []struct {
	name string
	f    driver.Filter
}{
	{"all", driver.Filter{}},
	{"scoped", driver.Filter{
		Namespaces: []string{driver.DefaultNamespace, "project:alpha"},
		Statuses:   []driver.Status{driver.StatusActive},
	}},
}
