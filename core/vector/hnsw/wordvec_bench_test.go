package hnsw_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/core/bench/benchenv"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/core/vector/hnsw"
	"github.com/memos-go/memos/embedders/hash"
	"github.com/memos-go/memos/embedders/wordvec"
)

// BenchmarkWordvec measures the index on real embeddings: the turns of the
// LoCoMo and LongMemEval dev sets (../shared/data, skipped when absent),
// embedded with the wordvec embedder (GloVe 100d, SIF), made up to
// MEMOS_HNSW_N vectors (default 100k) by joining each turn with the next
// ones of its conversation, as a long-lived store holds many similar turns;
// the queries are the data sets' questions, the even ones for tuning and the
// odd ones held out. MEMOS_HNSW_EMBEDDER=hash embeds the same texts with the
// hash embedder (256 d) instead. For each (M, efConstruction) of MEMOS_HNSW_GRID
// ("16x200,24x100"; default: the package defaults) it reports the build rate
// on all cores, and for each ef of MEMOS_HNSW_EF (default 32..400) the
// latency and recall@10 against the exact index on both halves; the exact
// index's latency on the same queries is BenchmarkWordvec/exact.
//
//	go test -run '^$' -bench Wordvec -benchtime 1000x -timeout 60m ./core/vector/hnsw
//
// Recall counts a hit as found when the exact top 10 holds it or holds a
// different entry with the same score (identical turns embed identically).
func BenchmarkWordvec(b *testing.B) {
	w := wordvecSet(b)
	ctx := context.Background()
	b.Run("exact", func(b *testing.B) {
		cpu := benchenv.CPUTime()
		for i := range b.N {
			if _, err := w.exact.Search(ctx, w.queries[i%len(w.queries)], 10, driver.VectorFilter{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((benchenv.CPUTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	})
	for _, mc := range grid(b) {
		// The graph is built once per (M, efConstruction), however large
		// b.N, by the first sub-benchmark that needs it; the build
		// sub-benchmark reports that one build's rate.
		var (
			ix        *hnsw.Index
			wall, cpu time.Duration
		)
		built := func(b *testing.B) *hnsw.Index {
			if ix != nil {
				return ix
			}
			var err error
			if ix, err = hnsw.New(w.dim, hnsw.Config{M: mc[0], EfConstruction: mc[1], Workers: envInt("MEMOS_HNSW_WORKERS", 0)}); err != nil {
				b.Fatal(err)
			}
			start, cpu0 := time.Now(), benchenv.CPUTime()
			for i := 0; i < len(w.entries); i += 4096 {
				if err := ix.Add(ctx, w.entries[i:min(i+4096, len(w.entries))]...); err != nil {
					b.Fatal(err)
				}
			}
			wall, cpu = time.Since(start), benchenv.CPUTime()-cpu0
			return ix
		}
		b.Run(fmt.Sprintf("build/M=%d/efc=%d", mc[0], mc[1]), func(b *testing.B) {
			built(b)
			b.ReportMetric(float64(len(w.entries))/wall.Seconds(), "inserts/s")
			b.ReportMetric(float64(len(w.entries))/cpu.Seconds(), "inserts/cpu-s")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cores")
		})
		b.Run(fmt.Sprintf("load/M=%d/efc=%d", mc[0], mc[1]), func(b *testing.B) {
			// Loading the saved graph and a first search: the index's part
			// of opening a store.
			path := filepath.Join(b.TempDir(), "hnsw.idx")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := built(b).Save(f); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			st, _ := os.Stat(path)
			b.ResetTimer()
			for range b.N {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				got, err := hnsw.Load(f)
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := got.Search(ctx, w.queries[0], 10, driver.VectorFilter{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Size())/(1<<20), "MB")
		})
		for _, ef := range efs(b) {
			b.Run(fmt.Sprintf("search/M=%d/efc=%d/ef=%d", mc[0], mc[1], ef), func(b *testing.B) {
				ix := built(b)
				var tune, held []float64
				for i, q := range w.queries {
					got, err := ix.SearchEf(ctx, q, 10, ef, driver.VectorFilter{})
					if err != nil {
						b.Fatal(err)
					}
					r := tieRecall(got, w.truth[i])
					if i%2 == 0 {
						tune = append(tune, r)
					} else {
						held = append(held, r)
					}
				}
				b.ResetTimer()
				cpu := benchenv.CPUTime()
				for i := range b.N {
					if _, err := ix.SearchEf(ctx, w.queries[i%len(w.queries)], 10, ef, driver.VectorFilter{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((benchenv.CPUTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
				b.ReportMetric(avg(tune), "recall-tune")
				b.ReportMetric(avg(held), "recall-held")
			})
		}
	}
}

type wordvecData struct {
	dim     int
	entries []driver.VectorEntry
	queries [][]float32
	exact   *vector.Exact
	truth   [][]driver.Hit
}

var (
	wordvecOnce sync.Once
	wordvecSet_ *wordvecData
	wordvecErr  error
)

// wordvecSet returns the real-embedding corpus, made once per process, or
// skips when the data is absent.
func wordvecSet(b *testing.B) *wordvecData {
	wordvecOnce.Do(func() { wordvecSet_, wordvecErr = loadWordvec(envInt("MEMOS_HNSW_N", 100_000)) })
	if os.IsNotExist(wordvecErr) || (wordvecErr != nil && strings.Contains(wordvecErr.Error(), "no such file")) {
		b.Skipf("shared data not found: %v", wordvecErr)
	}
	if wordvecErr != nil {
		b.Fatal(wordvecErr)
	}
	return wordvecSet_
}

func loadWordvec(n int) (*wordvecData, error) {
	ctx := context.Background()
	data := filepath.Join("..", "..", "..", "..", "shared", "data")
	var texts, questions []string
	seen := map[string]bool{}
	var convs [][]string // each corpus's turns in order, for the variations
	for _, load := range []func() (*dataset.Dataset, error){
		func() (*dataset.Dataset, error) {
			return dataset.LoadLoCoMo(filepath.Join(data, "locomo", "locomo-dev.json"), dataset.Options{})
		},
		func() (*dataset.Dataset, error) {
			return dataset.LoadLongMemEval(filepath.Join(data, "longmemeval", "longmemeval-s-dev100.json.gz"), dataset.Options{})
		},
	} {
		d, err := load()
		if err != nil {
			return nil, err
		}
		for _, c := range d.Corpora {
			var turns []string
			for _, doc := range c.Docs {
				t := doc.Input.Content
				turns = append(turns, t)
				if !seen[t] {
					seen[t] = true
					texts = append(texts, t)
				}
			}
			convs = append(convs, turns)
			for _, q := range c.Queries {
				questions = append(questions, q.Text)
			}
		}
	}
	distinct := len(texts)
	// Variations: a turn joined with the one gap turns later in its
	// conversation, gap 1, 2, ... until there are n texts.
	for gap := 1; len(texts) < n && gap < 50; gap++ {
		for _, turns := range convs {
			for i := 0; i+gap < len(turns) && len(texts) < n; i++ {
				t := turns[i] + " " + turns[i+gap]
				if !seen[t] {
					seen[t] = true
					texts = append(texts, t)
				}
			}
		}
	}
	texts = texts[:min(n, len(texts))]
	var emb driver.Embedder
	var err error
	switch name := os.Getenv("MEMOS_HNSW_EMBEDDER"); name {
	case "", "wordvec":
		emb, err = wordvec.Open(ctx, wordvec.Config{Path: filepath.Join(data, "glove", "glove-6b-100d-top100k.txt.gz")})
	case "hash":
		emb, err = hash.Open(ctx, hash.Config{})
	default:
		err = fmt.Errorf("MEMOS_HNSW_EMBEDDER %q: use wordvec or hash", name)
	}
	if err != nil {
		return nil, err
	}
	info, _ := emb.Info(ctx)
	w := &wordvecData{dim: info.Dim, exact: vector.NewExact(info.Dim)}
	embed := func(ts []string) ([][]float32, error) {
		var out [][]float32
		for i := 0; i < len(ts); i += 512 {
			vs, err := emb.Embed(ctx, ts[i:min(i+512, len(ts))])
			if err != nil {
				return nil, err
			}
			out = append(out, vs...)
		}
		return out, nil
	}
	vs, err := embed(texts)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		if vector.Dot(v, v) > 0 {
			w.entries = append(w.entries, driver.VectorEntry{ID: int64(len(w.entries) + 1), Namespace: "default", Pool: driver.PoolRaw, Vector: v})
		}
	}
	qs, err := embed(questions)
	if err != nil {
		return nil, err
	}
	for _, q := range qs {
		if vector.Dot(q, q) > 0 {
			w.queries = append(w.queries, q)
		}
	}
	if err := w.exact.Add(ctx, w.entries...); err != nil {
		return nil, err
	}
	for _, q := range w.queries {
		hits, err := w.exact.Search(ctx, q, 10, driver.VectorFilter{})
		if err != nil {
			return nil, err
		}
		w.truth = append(w.truth, hits)
	}
	fmt.Fprintf(os.Stderr, "%s corpus: %d vectors of %d dims (%d distinct turns before variations), %d queries\n",
		info.ID, len(w.entries), w.dim, distinct, len(w.queries))
	return w, nil
}

// tieRecall is recall@k that also counts a hit scoring at least the k-th
// exact hit (a different entry with the same vector, or an exact tie).
func tieRecall(got, want []driver.Hit) float64 {
	if len(want) == 0 {
		return 1
	}
	floor := want[len(want)-1].Score - 1e-6
	n := 0
	for _, h := range got {
		if h.Score >= floor || slices.ContainsFunc(want, func(x driver.Hit) bool { return x.ID == h.ID }) {
			n++
		}
	}
	return float64(min(n, len(want))) / float64(len(want))
}

func avg(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(max(1, len(xs)))
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// grid parses MEMOS_HNSW_GRID ("MxEFC,..."), default the package defaults.
func grid(b *testing.B) [][2]int {
	s := os.Getenv("MEMOS_HNSW_GRID")
	if s == "" {
		return [][2]int{{hnsw.DefaultM, hnsw.DefaultEfConstruction}}
	}
	var out [][2]int
	for _, p := range strings.Split(s, ",") {
		var m, efc int
		if _, err := fmt.Sscanf(p, "%dx%d", &m, &efc); err != nil {
			b.Fatalf("MEMOS_HNSW_GRID %q: %v", s, err)
		}
		out = append(out, [2]int{m, efc})
	}
	return out
}

// efs parses MEMOS_HNSW_EF ("32,64,..."), default 32..400.
func efs(b *testing.B) []int {
	s := os.Getenv("MEMOS_HNSW_EF")
	if s == "" {
		return []int{32, 64, 100, 150, 200, 300, hnsw.DefaultEfSearch}
	}
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(p)
		if err != nil {
			b.Fatalf("MEMOS_HNSW_EF %q: %v", s, err)
		}
		out = append(out, v)
	}
	return out
}

// BenchmarkWordvecCrossover finds, for each store size of MEMOS_HNSW_SIZES
// (default 5k, 10k, 25k, 50k; the first vectors of the wordvec corpus), the
// smallest ef of MEMOS_HNSW_EF at which the graph (default parameters)
// reaches recall@10 0.97 against the exact index, and reports the CPU time
// per query of both (CPU time, since the exact index scans on every core and
// the machine is shared): where hnsw-cpu-us falls below exact-cpu-us, HNSW
// answers faster at the same recall. It also reports the cost and recall at
// the default EfSearch, which is what "auto" runs. Run it with -benchtime 1x.
func BenchmarkWordvecCrossover(b *testing.B) {
	w := wordvecSet(b)
	ctx := context.Background()
	sizes := []int{5000, 10_000, 25_000, 50_000}
	if s := os.Getenv("MEMOS_HNSW_SIZES"); s != "" {
		sizes = nil
		for _, p := range strings.Split(s, ",") {
			v, err := strconv.Atoi(p)
			if err != nil {
				b.Fatalf("MEMOS_HNSW_SIZES %q: %v", s, err)
			}
			sizes = append(sizes, v)
		}
	}
	qs := w.queries[:min(400, len(w.queries))]
	perQuery := func(search func(q []float32) error) float64 {
		cpu := benchenv.CPUTime()
		for _, q := range qs {
			if err := search(q); err != nil {
				b.Fatal(err)
			}
		}
		return float64((benchenv.CPUTime() - cpu).Microseconds()) / float64(len(qs))
	}
	for _, n := range sizes {
		n = min(n, len(w.entries))
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			es := w.entries[:n]
			exact := vector.NewExact(w.dim)
			if err := exact.Add(ctx, es...); err != nil {
				b.Fatal(err)
			}
			var truth [][]driver.Hit
			exactUs := perQuery(func(q []float32) error {
				hits, err := exact.Search(ctx, q, 10, driver.VectorFilter{})
				truth = append(truth, hits)
				return err
			})
			ix, err := hnsw.New(w.dim, hnsw.Config{})
			if err != nil {
				b.Fatal(err)
			}
			if err := ix.Add(ctx, es...); err != nil {
				b.Fatal(err)
			}
			for _, ef := range efs(b) {
				var rs []float64
				for i, q := range qs {
					got, err := ix.SearchEf(ctx, q, 10, ef, driver.VectorFilter{})
					if err != nil {
						b.Fatal(err)
					}
					rs = append(rs, tieRecall(got, truth[i]))
				}
				if r := avg(rs); r >= 0.97 || ef == efs(b)[len(efs(b))-1] {
					us := perQuery(func(q []float32) error {
						_, err := ix.SearchEf(ctx, q, 10, ef, driver.VectorFilter{})
						return err
					})
					b.ReportMetric(float64(ef), "ef")
					b.ReportMetric(r, "recall@10")
					b.ReportMetric(us, "hnsw-cpu-us")
					b.ReportMetric(exactUs, "exact-cpu-us")
					var rs []float64
					b.ReportMetric(perQuery(func(q []float32) error {
						got, err := ix.Search(ctx, q, 10, driver.VectorFilter{})
						rs = append(rs, tieRecall(got, truth[len(rs)]))
						return err
					}), "default-ef-cpu-us")
					b.ReportMetric(avg(rs), "default-ef-recall")
					break
				}
			}
		})
	}
}

// BenchmarkWordvecPrecision compares the vector precisions (vector.Float32,
// vector.Int8) of the exact index and the graph (default parameters) on the
// BenchmarkWordvec corpus (MEMOS_HNSW_EMBEDDER=hash for the hash embedder),
// against the float32 exact top 10 of the first 500 questions: the index's
// own memory estimate and its snapshot per vector, recall@10, recall@10
// when the top 20 are re-scored with the float32 vectors (what a store,
// which keeps them, could do), and the wall-clock p50 and CPU time per
// query. Run it with -benchtime 1x.
//
//	MEMOS_HNSW_EMBEDDER=hash go test -run '^$' -bench WordvecPrecision -benchtime 1x -timeout 60m ./core/vector/hnsw
func BenchmarkWordvecPrecision(b *testing.B) {
	w := wordvecSet(b)
	ctx := context.Background()
	qs := w.queries[:min(500, len(w.queries))]
	vecOf := make(map[int64][]float32, len(w.entries))
	for _, e := range w.entries {
		v := slices.Clone(e.Vector)
		vector.Normalize(v)
		vecOf[e.ID] = v
	}
	type index interface {
		driver.VectorIndex
		driver.PersistentVectorIndex
		driver.VectorIndexSizer
	}
	for _, kind := range []string{"exact", "hnsw"} {
		for _, p := range []vector.Precision{vector.Float32, vector.Int8} {
			b.Run(fmt.Sprintf("%s/%s", kind, p), func(b *testing.B) {
				var ix index = vector.NewExactPrecision(w.dim, p)
				if kind == "hnsw" {
					h, err := hnsw.New(w.dim, hnsw.Config{Precision: p})
					if err != nil {
						b.Fatal(err)
					}
					ix = h
				}
				start, cpu0 := time.Now(), benchenv.CPUTime()
				for i := 0; i < len(w.entries); i += 4096 {
					if err := ix.Add(ctx, w.entries[i:min(i+4096, len(w.entries))]...); err != nil {
						b.Fatal(err)
					}
				}
				wall, cpu := time.Since(start), benchenv.CPUTime()-cpu0
				var saved countWriter
				if err := ix.Save(&saved); err != nil {
					b.Fatal(err)
				}
				var rs, rescored []float64
				lat := make([]time.Duration, 0, len(qs))
				cpuQ := benchenv.CPUTime()
				for i, q := range qs {
					t0 := time.Now()
					got, err := ix.Search(ctx, q, 10, driver.VectorFilter{})
					lat = append(lat, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					rs = append(rs, tieRecall(got, w.truth[i]))
				}
				cpuPerQuery := float64((benchenv.CPUTime() - cpuQ).Microseconds()) / float64(len(qs))
				qn := make([]float32, w.dim)
				for i, q := range qs {
					got, err := ix.Search(ctx, q, 20, driver.VectorFilter{})
					if err != nil {
						b.Fatal(err)
					}
					copy(qn, q)
					vector.Normalize(qn)
					for j := range got {
						got[j].Score = float64(vector.Dot(qn, vecOf[got[j].ID]))
					}
					slices.SortStableFunc(got, func(x, y driver.Hit) int {
						switch {
						case x.Score > y.Score:
							return -1
						case x.Score < y.Score:
							return 1
						}
						return 0
					})
					rescored = append(rescored, tieRecall(got[:min(10, len(got))], w.truth[i]))
				}
				slices.Sort(lat)
				n := float64(len(w.entries))
				b.ReportMetric(float64(ix.MemoryBytes())/n, "index-B/vec")
				b.ReportMetric(float64(saved)/n, "snapshot-B/vec")
				b.ReportMetric(avg(rs), "recall@10")
				b.ReportMetric(avg(rescored), "rescored-recall@10")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
				b.ReportMetric(cpuPerQuery, "cpu-us/query")
				b.ReportMetric(wall.Seconds(), "build-s")
				b.ReportMetric(cpu.Seconds(), "build-cpu-s")
			})
		}
	}
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
