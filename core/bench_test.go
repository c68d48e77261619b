package core_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/corpus"
	"github.com/memos-go/memos/core/longtest"
	_ "github.com/memos-go/memos/core/vector/hnsw"
	"github.com/memos-go/memos/embedders/hash"
)

// The pipeline benchmarks run over a synthetic store of 100,000 memories
// (sqlite, hash embedder, exact vector index) written with the seeded corpus
// of core/corpus (the one `memos bench` and the backend kit's benchmarks
// use: Zipf vocabulary, log-normal lengths), all in the default namespace:
// turns in sessions of 20, a fact in ten with an edge to a turn, and a
// lesson in a hundred. Queries are the corpus's: three words of a topic,
// rarer than the 200 commonest, as a question's content words are once
// stop words are gone. The store is built once per test binary run, in a
// temporary directory, and takes a minute or two; set MEMOS_BENCH_N for
// another size, MEMOS_BENCH_DIR to keep the store there for later runs,
// MEMOS_BENCH_DIM for the hash embedder's dimension (default 256) and
// MEMOS_BENCH_INDEX for the vector index (default exact; hnsw),
// MEMOS_BENCH_BACKEND for the backend (default sqlite; bolt) and
// MEMOS_BENCH_TYPE=document to store the turns as documents (the memories
// query feedback runs over by default).

var benchStore struct {
	once    sync.Once
	dir     string
	path    string
	n       int
	queries []string
	err     error
}

// benchEngine opens the shared synthetic store, building it on first use.
func benchEngine(b *testing.B) *core.Engine {
	b.Helper()
	ctx := context.Background()
	benchStore.once.Do(func() {
		n := 100_000
		if s := os.Getenv("MEMOS_BENCH_N"); s != "" {
			fmt.Sscan(s, &n)
		}
		benchStore.n = n
		c, err := corpus.New(corpus.Options{Docs: n, Queries: 1000, Seed: 7})
		if err != nil {
			benchStore.err = err
			return
		}
		for _, q := range c.Queries {
			benchStore.queries = append(benchStore.queries, strings.Join(q.Words, " "))
		}
		if dir := os.Getenv("MEMOS_BENCH_DIR"); dir != "" {
			// A kept store: build it once, reuse it in later runs.
			benchStore.path = filepath.Join(dir, fmt.Sprintf("bench-corpus-%d-dim%s%s.%s", n, os.Getenv("MEMOS_BENCH_DIM"), benchType(), benchBackend()))
			if _, err := os.Stat(benchStore.path); err == nil {
				return
			}
		} else {
			benchStore.dir, benchStore.err = os.MkdirTemp("", "memos-bench-")
			if benchStore.err != nil {
				return
			}
			benchStore.path = filepath.Join(benchStore.dir, "memory."+benchBackend())
		}
		e, err := openBench(benchStore.path)
		if err != nil {
			benchStore.err = err
			return
		}
		defer e.Close()
		const batch = 2000
		var lastTurn int64
		for start := 0; start < n; start += batch {
			var ins []core.Input
			for i := start; i < min(start+batch, n); i++ {
				in := core.Input{Content: c.Docs[i].Content, Type: core.TypeTurn, Session: fmt.Sprintf("s%d", i/20),
					Significance: 1 + i*7%10}
				switch {
				case benchType() != "" && i%10 != 9:
					in.Type = core.TypeDocument
				case i%100 == 99:
					in.Type = core.TypeLesson
				case i%10 == 9:
					in.Type = core.TypeFact
				}
				ins = append(ins, in)
			}
			ms, err := e.RememberBatch(ctx, ins)
			if err != nil {
				benchStore.err = err
				return
			}
			for _, m := range ms {
				if m.Type == core.TypeTurn || m.Type == core.TypeDocument {
					lastTurn = m.ID
					continue
				}
				if _, err := e.Link(ctx, core.Edge{From: m.ID, To: lastTurn, Type: core.EdgeDerivedFrom}); err != nil {
					benchStore.err = err
					return
				}
			}
		}
	})
	if benchStore.err != nil {
		b.Fatal(benchStore.err)
	}
	e, err := openBench(benchStore.path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	// Warm up: the vector index, the session index and the tokenizer.
	if _, err := e.ContextPack(ctx, core.PackRequest{Query: "warm up", Budget: 800}); err != nil {
		b.Fatal(err)
	}
	return e
}

// benchType is "-document" when the store's turns are documents, else "".
func benchType() string {
	if os.Getenv("MEMOS_BENCH_TYPE") == "document" {
		return "-document"
	}
	return ""
}

// benchBackend is the backend the benchmarks use: sqlite, or bolt.
func benchBackend() string {
	if os.Getenv("MEMOS_BENCH_BACKEND") == "bolt" {
		return "bolt"
	}
	return "sqlite"
}

func openBench(path string) (*core.Engine, error) {
	ctx := context.Background()
	var bk core.Backend
	var err error
	if benchBackend() == "bolt" {
		bk, err = bolt.Open(ctx, bolt.Config{Path: path})
	} else {
		bk, err = sqlite.Open(ctx, sqlite.Config{Path: path})
	}
	if err != nil {
		return nil, err
	}
	var dim int
	fmt.Sscan(os.Getenv("MEMOS_BENCH_DIM"), &dim)
	emb, err := hash.Open(ctx, hash.Config{Dim: dim})
	if err != nil {
		return nil, err
	}
	// The snapshot, as the CLI keeps one: without it every open rebuilds an
	// HNSW graph from the store.
	return core.Open(ctx, core.Options{Backend: bk, Embedder: emb, VectorIndex: os.Getenv("MEMOS_BENCH_INDEX"),
		VectorSnapshot: path + ".vectors", Search: core.SearchConfig{DisableAccessTracking: true}})
}

// reportPercentiles adds p50 and p95 latencies (ms) to the benchmark.
func reportPercentiles(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	ms := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))]) / 1e6 }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.95), "p95-ms")
}

// BenchmarkOpen100k: opening the store and answering a first vector search,
// the cold path of a CLI command; with MEMOS_BENCH_INDEX=hnsw the graph is
// loaded from the snapshot the previous Close wrote.
func BenchmarkOpen100k(b *testing.B) {
	e := benchEngine(b) // builds the store and, on Close, the snapshot
	e.Close()
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		e, err := openBench(benchStore.path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Search(ctx, core.SearchRequest{Query: benchStore.queries[0], Mode: core.ModeVector}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		e.Close()
		b.StartTimer()
	}
}

func BenchmarkSearchHybridExpand100k(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	qs := benchStore.queries
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := qs[(i*7+0)%len(qs)]
		t0 := time.Now()
		if _, err := e.Search(ctx, core.SearchRequest{Query: q}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportPercentiles(b, lat)
}

// BenchmarkSearchTime100k is BenchmarkSearchHybridExpand100k with time in
// the question: half the queries name a time ("this week", which holds the
// whole synthetic store: the worst case for the deeper retrieval, all of
// whose candidates stay), half ask for one ("when did …", which parses the
// content of every candidate).
func BenchmarkSearchTime100k(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	qs := benchStore.queries
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := qs[(i*7+0)%len(qs)]
		if i%2 == 0 {
			q += " this week"
		} else {
			q = "when did " + q
		}
		t0 := time.Now()
		if _, err := e.Search(ctx, core.SearchRequest{Query: q}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportPercentiles(b, lat)
}

func BenchmarkContextPack100k(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	qs := benchStore.queries
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := qs[(i*7+1)%len(qs)]
		t0 := time.Now()
		if _, err := e.ContextPack(ctx, core.PackRequest{Query: q, Budget: 800}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportPercentiles(b, lat)
}

func TestMain(m *testing.M) {
	flag.Parse()
	// Each case of TestConsolidateProperties opens a store: 20 cases in the
	// quick set and under -race, rapid's 100 in the long set without it
	// (.ci/run's full-size step runs the properties so).
	longtest.QuickRapidChecks(20)
	code := m.Run()
	if benchStore.dir != "" {
		os.RemoveAll(benchStore.dir)
	}
	os.Exit(code)
}

// BenchmarkFirstSearch100k opens the store afresh for every iteration and
// times its first hybrid search with expansion (first-p50-ms) and the one
// after it (later-p50-ms): what a process that has just started pays. The
// open itself is not timed.
func BenchmarkFirstSearch100k(b *testing.B) {
	benchFirst(b, func(e *core.Engine, q string) error {
		_, err := e.Search(context.Background(), core.SearchRequest{Query: q})
		return err
	})
}

// BenchmarkFirstAsOf100k is BenchmarkFirstSearch100k for searches as of a
// past time: when the benchmark starts, after the store was written, so
// that the search rewinds nothing and finding what changed since is the
// whole extra cost.
func BenchmarkFirstAsOf100k(b *testing.B) {
	asOf := time.Now()
	benchFirst(b, func(e *core.Engine, q string) error {
		_, err := e.Search(context.Background(), core.SearchRequest{Query: q, AsOf: asOf})
		return err
	})
}

// BenchmarkFirstBootstrap100k is BenchmarkFirstSearch100k for the
// bootstrap context pack (the store's most significant, most used
// memories, and its lessons).
func BenchmarkFirstBootstrap100k(b *testing.B) {
	benchFirst(b, func(e *core.Engine, _ string) error {
		_, err := e.ContextPack(context.Background(), core.PackRequest{Bootstrap: true, Budget: 800})
		return err
	})
}

// benchFirst opens the store afresh for every iteration and times the
// first call of fn (first-p50-ms) and the one after it (later-p50-ms).
func benchFirst(b *testing.B, fn func(e *core.Engine, q string) error) {
	benchEngine(b).Close() // builds the store; bolt opens it once at a time
	qs := benchStore.queries
	var first, later []time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		e, err := openBench(benchStore.path)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for j, lat := range []*[]time.Duration{&first, &later} {
			t0 := time.Now()
			if err := fn(e, qs[(i*13+j)%len(qs)]); err != nil {
				b.Fatal(err)
			}
			*lat = append(*lat, time.Since(t0))
		}
		b.StopTimer()
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	slices.Sort(first)
	slices.Sort(later)
	b.ReportMetric(float64(first[len(first)/2])/1e6, "first-p50-ms")
	b.ReportMetric(float64(later[len(later)/2])/1e6, "later-p50-ms")
}
