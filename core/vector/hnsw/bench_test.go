package hnsw

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/core/bench/benchenv"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
)

// Benchmarks at the scale, 100k vectors of dimension 384, on two data
// sets: "clustered" (100 Gaussian clusters, like text embeddings) and
// "random" (independent unit vectors, the worst case). Building a graph
// takes minutes, so each set is built once per process, by BenchmarkBuild
// (which reports the build rate) or by the first benchmark that needs it:
//
//	go test -run '^$' -bench . -benchtime 2000x -timeout 60m ./core/vector/hnsw
//
// BenchmarkSearch reports, per ef, the latency (ns/op), recall@10 against the
// exact index and the speedup over an exact search of the same queries.
const (
	benchN       = 100_000
	benchDim     = 384
	benchQueries = 500
)

var benchKinds = []string{"clustered", "random"}

type benchSet struct {
	es       []driver.VectorEntry
	queries  [][]float32
	exact    *vector.Exact
	truth    [][]driver.Hit
	exactNs  float64 // mean exact search latency per query, wall time
	exactCPU float64 // the same in CPU time (the exact index scans on all cores)

	mu                  sync.Mutex
	ix                  *Index
	buildWall, buildCPU time.Duration // of the build BenchmarkBuild timed
}

var (
	benchMu   sync.Mutex
	benchSets = map[string]*benchSet{}
)

// dataset returns the vectors, queries, exact index and ground truth of a
// kind, made once per process.
func dataset(b *testing.B, kind string) *benchSet {
	benchMu.Lock()
	defer benchMu.Unlock()
	if s := benchSets[kind]; s != nil {
		return s
	}
	rng := rand.New(rand.NewPCG(384, 100))
	var data, queries [][]float32
	if kind == "random" {
		data, queries = randomUnit(rng, benchN, benchDim), randomUnit(rng, benchQueries, benchDim)
	} else {
		data, queries = clustered(rng, benchN, benchQueries, benchDim, 100)
	}
	s := &benchSet{es: entries(data, 10), queries: queries, exact: vector.NewExact(benchDim)}
	ctx := context.Background()
	if err := s.exact.Add(ctx, s.es...); err != nil {
		b.Fatal(err)
	}
	start, cpu := time.Now(), benchenv.CPUTime()
	for _, q := range queries {
		hits, err := s.exact.Search(ctx, q, 10, driver.VectorFilter{})
		if err != nil {
			b.Fatal(err)
		}
		s.truth = append(s.truth, hits)
	}
	s.exactNs = float64(time.Since(start).Nanoseconds()) / float64(len(queries))
	s.exactCPU = float64((benchenv.CPUTime() - cpu).Nanoseconds()) / float64(len(queries))
	benchSets[kind] = s
	return s
}

// build builds the kind's index and returns it with the wall and CPU time
// the inserts took (on one goroutine per core).
func build(b *testing.B, s *benchSet) (*Index, time.Duration, time.Duration) {
	ix := newIndex(b, benchDim, Config{})
	start, cpu := time.Now(), benchenv.CPUTime()
	mustAdd(b, ix, s.es...)
	return ix, time.Since(start), benchenv.CPUTime() - cpu
}

// index returns the kind's HNSW index at the default parameters, building it
// if no benchmark has yet.
func (s *benchSet) index(b *testing.B) *Index {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ix == nil {
		s.ix, _, _ = build(b, s)
	}
	return s.ix
}

// BenchmarkBuild builds each set's index once, however large b.N (a
// -benchtime of 2000x is meant for the search benchmarks), and reports that
// build's rate.
func BenchmarkBuild(b *testing.B) {
	for _, kind := range benchKinds {
		b.Run(kind, func(b *testing.B) {
			s := dataset(b, kind)
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.buildWall == 0 {
				s.ix, s.buildWall, s.buildCPU = build(b, s)
			}
			b.ReportMetric(float64(benchN)/s.buildWall.Seconds(), "inserts/s")
			b.ReportMetric(float64(benchN)/s.buildCPU.Seconds(), "inserts/cpu-s")
		})
	}
}

func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	for _, kind := range benchKinds {
		for _, ef := range []int{16, 32, 64, 128, 256, DefaultEfSearch} {
			b.Run(fmt.Sprintf("%s/ef=%d", kind, ef), func(b *testing.B) {
				s := dataset(b, kind)
				ix := s.index(b)
				var rs []float64
				for i, q := range s.queries {
					got, err := ix.SearchEf(ctx, q, 10, ef, driver.VectorFilter{})
					if err != nil {
						b.Fatal(err)
					}
					rs = append(rs, recall(got, s.truth[i]))
				}
				b.ResetTimer()
				cpu := benchenv.CPUTime()
				for i := range b.N {
					if _, err := ix.SearchEf(ctx, s.queries[i%len(s.queries)], 10, ef, driver.VectorFilter{}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				cpuNs := float64((benchenv.CPUTime() - cpu).Nanoseconds()) / float64(b.N)
				b.ReportMetric(mean(rs), "recall@10")
				b.ReportMetric(cpuNs, "cpu-ns/op")
				b.ReportMetric(s.exactNs/ns, "x-exact")
				b.ReportMetric(s.exactCPU/cpuNs, "x-exact-cpu")
			})
		}
	}
}

// BenchmarkSearchFiltered: a namespace holding a tenth of the entries, by
// the default choice (an exact scan of them at this size) and by the
// filtered graph walk.
func BenchmarkSearchFiltered(b *testing.B) {
	ctx := context.Background()
	f := driver.VectorFilter{Namespaces: []string{nsName(3)}}
	for _, mode := range []string{"auto", "graph"} {
		b.Run("clustered/"+mode, func(b *testing.B) {
			s := dataset(b, "clustered")
			ix := s.index(b)
			ix.mu.Lock()
			saved := ix.cfg.ExactBelow
			if mode == "graph" {
				ix.cfg.ExactBelow = -1
			}
			ix.mu.Unlock()
			defer func() { ix.mu.Lock(); ix.cfg.ExactBelow = saved; ix.mu.Unlock() }()
			var rs []float64
			for _, q := range s.queries {
				want, _ := s.exact.Search(ctx, q, 10, f)
				got, err := ix.Search(ctx, q, 10, f)
				if err != nil {
					b.Fatal(err)
				}
				rs = append(rs, recall(got, want))
			}
			b.ResetTimer()
			for i := range b.N {
				if _, err := ix.Search(ctx, s.queries[i%len(s.queries)], 10, f); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(mean(rs), "recall@10")
		})
	}
}

func BenchmarkExactSearch(b *testing.B) {
	ctx := context.Background()
	for _, kind := range benchKinds {
		b.Run(kind, func(b *testing.B) {
			s := dataset(b, kind)
			b.ResetTimer()
			cpu := benchenv.CPUTime()
			for i := range b.N {
				if _, err := s.exact.Search(ctx, s.queries[i%len(s.queries)], 10, driver.VectorFilter{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((benchenv.CPUTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkLoad: opening a saved 100k × 384 index from a file and answering
// a first query, the cold path of opening a store.
func BenchmarkLoad(b *testing.B) {
	s := dataset(b, "clustered")
	ix := s.index(b)
	path := filepath.Join(b.TempDir(), "hnsw.idx")
	var buf bytes.Buffer
	if err := ix.Save(&buf); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		got, err := Load(f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := got.Search(context.Background(), s.queries[0], 10, driver.VectorFilter{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len())/(1<<20), "MB")
}

func BenchmarkSave(b *testing.B) {
	s := dataset(b, "clustered")
	ix := s.index(b)
	b.ResetTimer()
	for range b.N {
		var buf bytes.Buffer
		if err := ix.Save(&buf); err != nil {
			b.Fatal(err)
		}
	}
}
