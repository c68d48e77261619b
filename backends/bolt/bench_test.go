package bolt

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// Benchmarks: batch insert rate, keyword search latency at 10k memories,
// cold open plus first query, and disk size. Run with
//
//	go test -run '^$' -bench . -benchtime 20x ./backends/bolt

const benchDim = 256

// benchVocab is a deterministic vocabulary of made-up words; word i is drawn
// with Zipf-like frequency so that some words are common and most are rare.
var benchVocab = func() []string {
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "dor", "pan", "qua", "ber", "lin", "mos", "tek"}
	r := rand.New(rand.NewPCG(1, 1))
	seen := map[string]bool{}
	var out []string
	for len(out) < 3000 {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()

func benchText(r *rand.Rand, z *rand.Zipf) string {
	n := 15 + r.IntN(30)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = benchVocab[z.Uint64()]
	}
	return strings.Join(ws, " ")
}

func benchMemories(seed uint64, n int) []*driver.Memory {
	r := rand.New(rand.NewPCG(seed, 7))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(benchVocab)-1))
	ms := make([]*driver.Memory, n)
	nss := []string{"default", "user:alice", "project:memos"}
	for i := range ms {
		m := testMemory(benchText(r, z))
		m.Namespace = nss[r.IntN(len(nss))]
		v := make([]float32, benchDim)
		for j := range v {
			v[j] = r.Float32()*2 - 1
		}
		m.Embedding = driver.Embedding{Model: "bench-256", Vector: v}
		ms[i] = m
	}
	return ms
}

func insertAll(tb testing.TB, d *DB, ms []*driver.Memory, batch int) {
	tb.Helper()
	for i := 0; i < len(ms); i += batch {
		err := d.Update(context.Background(), func(tx driver.Tx) error {
			for _, m := range ms[i:min(i+batch, len(ms))] {
				m.ID = 0
				if err := tx.Insert(m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkInsertBatch1000 inserts batches of 1000 memories with 256-dim
// vectors into a growing store.
func BenchmarkInsertBatch1000(b *testing.B) {
	d, err := Open(context.Background(), Config{Path: filepath.Join(b.TempDir(), "store")})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ms := benchMemories(3, 1000)
	b.ResetTimer()
	for b.Loop() {
		insertAll(b, d, ms, 1000)
	}
	b.ReportMetric(float64(b.N*len(ms))/b.Elapsed().Seconds(), "memories/s")
}

var (
	store10kOnce sync.Once
	store10kDir  string
	store10kErr  error
)

// store10k builds, once per test binary run, a closed store of 10k memories.
func store10k(b *testing.B) string {
	store10kOnce.Do(func() {
		dir, err := os.MkdirTemp("", "memos-bolt-bench-")
		if err != nil {
			store10kErr = err
			return
		}
		store10kDir = filepath.Join(dir, "store")
		d, err := Open(context.Background(), Config{Path: store10kDir})
		if err != nil {
			store10kErr = err
			return
		}
		insertAll(b, d, benchMemories(5, 10000), 1000)
		store10kErr = d.Close()
	})
	if store10kErr != nil {
		b.Fatal(store10kErr)
	}
	return store10kDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if store10kDir != "" {
		os.RemoveAll(filepath.Dir(store10kDir))
	}
	os.Exit(code)
}

// benchQueries are typical keyword queries: the natural-language rewrite of
// a question (an OR of words), a single word, a phrase, a prefix, AND.
func benchQueries() []query.Node {
	w := func(i int) string { return benchVocab[i] }
	return []query.Node{
		query.Natural(w(3) + " " + w(40) + " " + w(300)),
		&query.Term{Text: w(10)},
		&query.Term{Text: w(200)},
		&query.Phrase{Terms: []string{w(2), w(3)}},
		&query.Term{Text: w(5)[:4], Prefix: true},
		&query.And{Children: []query.Node{&query.Term{Text: w(4)}, &query.Term{Text: w(25)}}},
	}
}

// BenchmarkKeywordSearch10k reports the latency percentiles of top-20
// keyword searches over 10k memories, with the filter the engine uses.
func BenchmarkKeywordSearch10k(b *testing.B) {
	d, err := Open(context.Background(), Config{Path: store10k(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	qs := benchQueries()
	f := driver.Filter{Namespaces: []string{"default", "user:alice"}, Statuses: []driver.Status{driver.StatusActive}}
	var lat []time.Duration
	b.ResetTimer()
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, err := d.SearchKeyword(context.Background(), qs[i%len(qs)], f, 20); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
}

// BenchmarkColdOpenFirstQuery10k opens the 10k store and runs one search.
func BenchmarkColdOpenFirstQuery10k(b *testing.B) {
	dir := store10k(b)
	q := benchQueries()[0]
	b.ResetTimer()
	for b.Loop() {
		d, err := Open(context.Background(), Config{Path: dir})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.SearchKeyword(context.Background(), q, driver.Filter{}, 20); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		d.Close()
		b.StartTimer()
	}
}

// BenchmarkDiskSize10k reports the size of the 10k store's files.
func BenchmarkDiskSize10k(b *testing.B) {
	dir := store10k(b)
	for b.Loop() {
	}
	fi, err := os.Stat(filepath.Join(dir, StoreFile))
	if err != nil {
		b.Fatal(err)
	}
	idx := dirSize(filepath.Join(dir, IndexDir))
	b.ReportMetric(float64(fi.Size())/(1<<20), "store-MiB")
	b.ReportMetric(float64(idx)/(1<<20), "index-MiB")
	b.ReportMetric(float64(fi.Size()+idx)/10000, "bytes/memory")
}

// TestBenchQueriesMatch keeps the benchmark honest: its queries find
// something in a store built like the benchmark's.
func TestBenchQueriesMatch(t *testing.T) {
	d := openTestDB(t)
	insertAll(t, d, benchMemories(5, 500), 500)
	for _, q := range benchQueries() {
		hits, err := d.SearchKeyword(context.Background(), q, driver.Filter{}, 20)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Errorf("benchmark query %s matches nothing", q)
		}
	}
}
