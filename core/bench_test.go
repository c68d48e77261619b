package core_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	_ "github.com/memos-go/memos/core/vector/hnsw"
	"github.com/memos-go/memos/embedders/hash"
)

// The pipeline benchmarks run over a synthetic store of 100,000 memories
// (sqlite, hash embedder, exact vector index): turns in sessions of 20, a
// fact in ten with an edge to a turn, and a lesson in a hundred. Words follow
// Zipf's law over a vocabulary of 20,000 (as in real text, so that a query's
// content words match a realistic share of the store); queries take 3–5
// words of middling frequency (ranks 100–5,000), as a question's content
// words do once stop words are gone. The store is built once per test binary
// run, in a temporary directory, and takes a minute or two; set
// MEMOS_BENCH_N for another size, MEMOS_BENCH_DIR to keep the store there
// for later runs, MEMOS_BENCH_DIM for the hash embedder's dimension (default
// 256) and MEMOS_BENCH_INDEX for the vector index (default exact; hnsw).

// benchVocab is the vocabulary, most frequent first.
var benchVocab = func() []string {
	r := rand.New(rand.NewPCG(3, 3))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	seen := map[string]bool{}
	var out []string
	for len(out) < 20_000 {
		n := 3 + r.IntN(7)
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()

var benchStore struct {
	once sync.Once
	dir  string
	path string
	n    int
	err  error
}

// benchSentence draws n words by Zipf's law.
func benchSentence(z *rand.Zipf, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = benchVocab[z.Uint64()]
	}
	return strings.Join(ws, " ")
}

// benchQuery draws n words of middling frequency.
func benchQuery(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = benchVocab[100+r.IntN(4900)]
	}
	return strings.Join(ws, " ")
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
		if dir := os.Getenv("MEMOS_BENCH_DIR"); dir != "" {
			// A kept store: build it once, reuse it in later runs.
			benchStore.path = filepath.Join(dir, fmt.Sprintf("bench-zipf-%d-dim%s.db", n, os.Getenv("MEMOS_BENCH_DIM")))
			if _, err := os.Stat(benchStore.path); err == nil {
				return
			}
		} else {
			benchStore.dir, benchStore.err = os.MkdirTemp("", "memos-bench-")
			if benchStore.err != nil {
				return
			}
			benchStore.path = filepath.Join(benchStore.dir, "memory.db")
		}
		e, err := openBench(benchStore.path)
		if err != nil {
			benchStore.err = err
			return
		}
		defer e.Close()
		r := rand.New(rand.NewPCG(7, 7))
		z := rand.NewZipf(r, 1.07, 2, uint64(len(benchVocab)-1))
		const batch = 2000
		var lastTurn int64
		for start := 0; start < n; start += batch {
			var ins []core.Input
			for i := start; i < min(start+batch, n); i++ {
				in := core.Input{Content: benchSentence(z, 8+r.IntN(12)), Type: core.TypeTurn, Session: fmt.Sprintf("s%d", i/20),
					Significance: 1 + r.IntN(10)}
				switch {
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
				if m.Type == core.TypeTurn {
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

func openBench(path string) (*core.Engine, error) {
	ctx := context.Background()
	bk, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		return nil, err
	}
	var dim int
	fmt.Sscan(os.Getenv("MEMOS_BENCH_DIM"), &dim)
	emb, err := hash.Open(ctx, hash.Config{Dim: dim})
	if err != nil {
		return nil, err
	}
	return core.Open(ctx, core.Options{Backend: bk, Embedder: emb, VectorIndex: os.Getenv("MEMOS_BENCH_INDEX"),
		Search: core.SearchConfig{DisableAccessTracking: true}})
}

// reportPercentiles adds p50 and p95 latencies (ms) to the benchmark.
func reportPercentiles(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	ms := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))]) / 1e6 }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.95), "p95-ms")
}

func BenchmarkSearchHybridExpand100k(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 1))
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		q := benchQuery(r, 3+r.IntN(3))
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
	r := rand.New(rand.NewPCG(2, 2))
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		q := benchQuery(r, 3+r.IntN(3))
		t0 := time.Now()
		if _, err := e.ContextPack(ctx, core.PackRequest{Query: q, Budget: 800}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportPercentiles(b, lat)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchStore.dir != "" {
		os.RemoveAll(benchStore.dir)
	}
	os.Exit(code)
}
