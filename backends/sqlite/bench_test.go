package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
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

// Benchmarks run on a deterministic synthetic corpus: memories of 12–40
// words drawn with a Zipf distribution from a 4000-word vocabulary, in four
// namespaces, with 256-dimensional unit vectors.

const benchDim = 256

var benchNamespaces = []string{driver.DefaultNamespace, "project:alpha", "project:beta", "user:ada"}

type corpus struct {
	vocab []string
	rng   *rand.Rand
	zipf  *rand.Zipf
}

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, 42))
	syll := []string{"ka", "lo", "mi", "ren", "tas", "vo", "quel", "ur", "dan", "pe", "sto", "ri", "gal", "nu", "fe", "zor"}
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < 4000 {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &corpus{vocab: vocab, rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))}
}

func (c *corpus) memory(i int) *driver.Memory {
	words := make([]string, 12+c.rng.IntN(29))
	for j := range words {
		words[j] = c.vocab[c.zipf.Uint64()]
	}
	m := newMem(strings.Join(words, " "))
	m.Namespace = benchNamespaces[i%len(benchNamespaces)]
	if i%10 == 9 {
		m.Status = driver.StatusArchived
	}
	v := make([]float32, benchDim)
	var norm float64
	for j := range v {
		v[j] = float32(c.rng.NormFloat64())
		norm += float64(v[j]) * float64(v[j])
	}
	for j := range v {
		v[j] /= float32(math.Sqrt(norm))
	}
	m.Embedding = driver.Embedding{Model: "bench-256", Vector: v}
	return m
}

func (c *corpus) batch(start, n int) []*driver.Memory {
	ms := make([]*driver.Memory, n)
	for i := range ms {
		ms[i] = c.memory(start + i)
	}
	return ms
}

// queries returns keyword queries of the kinds the engine sends: ORs of
// natural-language terms (most common), ANDs, phrases and prefixes, over
// words of middling frequency.
func (c *corpus) queries(n int) []query.Node {
	w := func() string { return c.vocab[5+c.rng.IntN(400)] }
	qs := make([]query.Node, n)
	for i := range qs {
		var s string
		switch i % 5 {
		case 0, 1:
			s = w() + " OR " + w() + " OR " + w()
		case 2:
			s = w() + " " + w()
		case 3:
			s = `"` + w() + " " + w() + `" OR ` + w()
		case 4:
			s = w()[:3] + "* OR " + w()
		}
		q, err := query.Parse(s)
		if err != nil {
			panic(fmt.Sprintf("bench query %q: %v", s, err))
		}
		qs[i] = q
	}
	return qs
}

func insertBatch(b *testing.B, d *DB, ms []*driver.Memory) {
	err := d.Update(context.Background(), func(tx driver.Tx) error {
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

// BenchmarkInsertBatch measures ingest: transactions of 1000 memories with
// 256-dimensional vectors into a growing store.
func BenchmarkInsertBatch(b *testing.B) {
	d := openDB(b, filepath.Join(b.TempDir(), "memory.db"))
	defer d.Close()
	c := newCorpus(1)
	batches := make([][]*driver.Memory, 8)
	for i := range batches {
		batches[i] = c.batch(i*1000, 1000)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		insertBatch(b, d, batches[i%len(batches)])
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "memories/s")
}

// BenchmarkBuild10k builds a store of 10,000 memories (ten batches of 1000)
// and reports its size on disk after Close.
func BenchmarkBuild10k(b *testing.B) {
	c := newCorpus(1)
	batches := make([][]*driver.Memory, 10)
	for i := range batches {
		batches[i] = c.batch(i*1000, 1000)
	}
	var size int64
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "memory.db")
		d := openDB(b, path)
		for _, batch := range batches {
			insertBatch(b, d, batch)
		}
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		size = st.Size()
	}
	b.ReportMetric(float64(size)/(1<<20), "file-MiB")
	b.ReportMetric(float64(size)/10000, "file-bytes/memory")
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "memories/s")
}

var search10k struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// store10k returns the path of a shared 10k-memory store, built once per
// test binary run (and removed by TestMain).
func store10k(b *testing.B) string {
	search10k.once.Do(func() {
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
		c := newCorpus(1)
		for i := range 10 {
			insertBatch(b, d, c.batch(i*1000, 1000))
		}
	})
	if search10k.err != nil {
		b.Fatal(search10k.err)
	}
	return search10k.path
}

func TestMain(m *testing.M) {
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

// BenchmarkSearchKeyword10k measures keyword search latency at 10k
// memories: the raw FTS5 query, SearchKeyword without a filter, and with a
// scope filter (two namespaces, active only) as the engine sends it.
func BenchmarkSearchKeyword10k(b *testing.B) {
	path := store10k(b)
	d := openDB(b, path)
	defer d.Close()
	qs := newCorpus(7).queries(200)
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
	cases := []struct {
		name string
		run  func(i int)
	}{
		{"raw", func(i int) { runRaw(b, raw, strs[i]) }},
		{"nofilter", func(i int) {
			if _, err := d.SearchKeyword(ctx, qs[i], driver.Filter{}, 20); err != nil {
				b.Fatal(err)
			}
		}},
		{"filter", func(i int) {
			if _, err := d.SearchKeyword(ctx, qs[i], benchFilter, 20); err != nil {
				b.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				c.run(i % len(qs))
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkSearchOverhead10k runs the raw query and SearchKeyword
// alternately on the same queries and file and reports the ratio of their
// total times and the median of the per-query ratios (the target is at most
// 1.3).
func BenchmarkSearchOverhead10k(b *testing.B) {
	path := store10k(b)
	d := openDB(b, path)
	defer d.Close()
	qs := newCorpus(7).queries(200)
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
