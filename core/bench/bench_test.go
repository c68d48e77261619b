package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/embedders/hash"
)

// pets is a tiny labelled corpus whose answers any retriever finds.
func pets() *dataset.Dataset {
	doc := func(key, content string) dataset.Doc {
		return dataset.Doc{Key: key, Input: core.Input{Content: content, Type: core.TypeTurn}}
	}
	return &dataset.Dataset{Name: "pets", Corpora: []dataset.Corpus{{
		Name: "c1",
		Docs: []dataset.Doc{
			doc("t1", "Ann adopted a grey kitten called Miso"),
			doc("t2", "Bo is training for the Berlin marathon"),
			doc("t3", "The kitten Miso sleeps on the radiator"),
			doc("t4", "Bo bought new running shoes"),
		},
		Queries: []dataset.Query{
			{ID: "q1", Text: "kitten Miso", Relevant: map[string]float64{"t1": 1, "t3": 1}, Category: "pets"},
			{ID: "q2", Text: "marathon training", Relevant: map[string]float64{"t2": 1}, Category: "sport"},
			{ID: "q3", Text: "unlabelled question about shoes"},
		},
	}}}
}

// TestRunVectorIndexes measures one store with two vector indexes: ingested
// with the exact one, then the HNSW graph is built from it.
func TestRunVectorIndexes(t *testing.T) {
	dir := t.TempDir()
	rep, err := bench.Run(context.Background(), bench.Config{
		Backends:        []string{"sqlite"},
		EmbedderConfigs: map[string]any{"hash": &hash.Config{Dim: 32}},
		Sizes:           []int{300},
		VectorIndexes:   []string{"exact", "hnsw"},
		Queries:         5,
		Warmup:          1,
		Dir:             dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results; want one per vector index", len(rep.Results))
	}
	ex, hn := rep.Results[0], rep.Results[1]
	if ex.VectorIndex != "exact" || hn.VectorIndex != "hnsw" || ex.IndexBuild != 0 || hn.IndexBuild <= 0 {
		t.Errorf("indexes %q (built in %v), %q (built in %v); want exact as ingested, hnsw built after", ex.VectorIndex, ex.IndexBuild, hn.VectorIndex, hn.IndexBuild)
	}
	if hn.Ingest.Docs != 300 || hn.Ingest.Total != ex.Ingest.Total || len(hn.Open.Samples) != 1 || hn.Pack == nil || hn.Pack.Queries != 5 {
		t.Errorf("hnsw run: ingest %+v (exact's %v), open %+v, pack %+v", hn.Ingest, ex.Ingest.Total, hn.Open, hn.Pack)
	}
	// 300 vectors: the graph finds what the exact scan does.
	if a, b := ex.Quality[core.ModeVector].Recall[10], hn.Quality[core.ModeVector].Recall[10]; a != b {
		t.Errorf("vector recall@10 exact %v, hnsw %v", a, b)
	}
	if rep.Settings.VectorIndexes[1] != "hnsw" {
		t.Errorf("settings %+v", rep.Settings)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "hnsw (built in ") {
		t.Errorf("the table does not show the build:\n%s", table.String())
	}
	if _, err := bench.Run(context.Background(), bench.Config{Backends: []string{"sqlite"}, VectorIndexes: []string{"exact", "faiss"}}); !errors.Is(err, core.ErrUnknownName) {
		t.Errorf("unknown vector index: %v; want ErrUnknownName", err)
	}
	if _, err := bench.Run(context.Background(), bench.Config{Backends: []string{"sqlite"}, VectorIndexes: []string{"hnsw", "hnsw"}}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("an index listed twice: %v; want ErrInvalid", err)
	}
}

func TestRunEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var progress bytes.Buffer
	rep, err := bench.Run(context.Background(), bench.Config{
		Backends:        []string{"sqlite"},
		Embedders:       []string{"hash"},
		EmbedderConfigs: map[string]any{"hash": &hash.Config{Dim: 64}},
		Sizes:           []int{200},
		Datasets:        []*dataset.Dataset{pets()},
		K:               []int{1, 5},
		Queries:         8,
		Warmup:          1,
		Seed:            1,
		Dir:             dir,
		Progress:        &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2 (synthetic, pets)", len(rep.Results))
	}
	syn, tiny := rep.Results[0], rep.Results[1]
	if syn.Dataset != "synthetic" || syn.Docs != 200 || syn.Backend != "sqlite" || syn.Embedder != "hash" || syn.Model.Dim != 64 {
		t.Errorf("synthetic result %+v", syn)
	}
	if syn.Ingest.Docs != 200 || len(syn.Ingest.Batches) != 1 || syn.Ingest.PerSecond <= 0 || syn.Ingest.Total <= 0 {
		t.Errorf("ingest %+v", syn.Ingest)
	}
	if syn.DiskBytes <= 0 || syn.DiskAllocated <= 0 || len(syn.Open.Samples) != 1 || syn.Open.Samples[0].Open <= 0 || syn.Open.Samples[0].FirstQuery <= 0 {
		t.Errorf("disk %d, open %+v", syn.DiskBytes, syn.Open)
	}
	if want := float64(syn.DiskAllocated) * 1e5 / 200; syn.DiskPer100k != want {
		t.Errorf("disk per 100k %v, want %v (the 200 memories' %d bytes scaled)", syn.DiskPer100k, want, syn.DiskAllocated)
	}
	if syn.OpenRSS < 0 || syn.OpenRSS != syn.Open.Samples[0].RSS || syn.OpenRSSPer100k != float64(syn.OpenRSS)*1e5/200 {
		t.Errorf("open RSS %d (per 100k %v), samples %+v", syn.OpenRSS, syn.OpenRSSPer100k, syn.Open.Samples)
	}
	for _, mode := range bench.Modes {
		l := syn.Latency[mode]
		if l == nil || l.Queries != 8 || len(l.Samples) != 8 || l.P50 <= 0 || l.P50 > l.P95 || l.P95 > l.P99 || l.P99 > l.Max {
			t.Errorf("%s latency %+v", mode, l)
		}
		q := syn.Quality[mode]
		if q == nil || q.Queries != 8 || len(q.PerQuery) != 8 {
			t.Fatalf("%s quality %+v", mode, q)
		}
		if r := q.Recall[5]; r <= 0 || r > 1 {
			t.Errorf("%s synthetic recall@5 = %v, want in (0, 1]", mode, r)
		}
	}
	if p := syn.Pack; p == nil || p.Queries != 8 || p.P50 <= 0 || p.P50 > p.P95 {
		t.Errorf("context pack latency %+v", p)
	}
	if syn.VectorIndex != "exact" || syn.IndexBuild != 0 {
		t.Errorf("vector index %q built in %v; want exact, ingested with", syn.VectorIndex, syn.IndexBuild)
	}
	// The tiny corpus: 3 queries, 2 labelled; every retriever finds the answers.
	if tiny.Latency[core.ModeKeyword].Queries != 3 {
		t.Errorf("pets timed %d queries, want 3", tiny.Latency[core.ModeKeyword].Queries)
	}
	kw := tiny.Quality[core.ModeKeyword]
	if kw.Queries != 2 || kw.Recall[5] != 1 || kw.NDCG10 != 1 || kw.Recall[1] != 0.75 {
		t.Errorf("pets keyword quality: %d queries, recall %v, nDCG %v", kw.Queries, kw.Recall, kw.NDCG10)
	}
	if c := kw.ByCategory["pets"]; c == nil || c.Queries != 1 || c.Recall[1] != 0.5 {
		t.Errorf("by category %+v", kw.ByCategory)
	}
	if h := tiny.Quality[core.ModeHybrid]; h.Recall[5] != 1 {
		t.Errorf("pets hybrid recall@5 = %v", h.Recall[5])
	}
	if rep.Machine.GoVersion == "" || rep.Machine.Cores < 1 || rep.Machine.CPU == "" {
		t.Errorf("machine %+v", rep.Machine)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("temporary stores left behind: %v", entries)
	}
	if !strings.Contains(progress.String(), "ingest") || !strings.Contains(progress.String(), "queries") {
		t.Errorf("progress output %q", progress.String())
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DATASET", "synthetic", "pets", "sqlite", "INDEX", "PACK ms", "R@1 kw/vec/hyb", "R@5 kw/vec/hyb", "1.000/", "nDCG@10"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back bench.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != 2 || len(back.Results[0].Latency[core.ModeHybrid].Samples) != 8 ||
		back.Results[1].Quality[core.ModeKeyword].Recall[5] != 1 || back.Machine != rep.Machine {
		t.Errorf("JSON round trip lost figures: %s", js.String()[:min(400, js.Len())])
	}

	svg := filepath.Join(dir, "out.svg")
	if err := rep.SavePlot(svg); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("hybrid search")) {
		t.Errorf("SVG: %v, %d bytes", err, len(b))
	}
	var png bytes.Buffer
	if err := rep.WritePlot(&png, "png"); err != nil || !bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")) {
		t.Errorf("PNG: %v", err)
	}
	if err := rep.SavePlot(filepath.Join(dir, "out.pdf")); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("pdf: %v, want ErrInvalid", err)
	}
}

func TestRunSameDataSameOrder(t *testing.T) {
	run := func() *bench.Report {
		rep, err := bench.Run(context.Background(), bench.Config{Backends: []string{"sqlite"}, Sizes: []int{60}, Queries: 6, Warmup: 1, Seed: 5, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	a, b := run(), run()
	for _, mode := range bench.Modes {
		qa, qb := a.Results[0].Quality[mode], b.Results[0].Quality[mode]
		for i := range qa.PerQuery {
			if qa.PerQuery[i].ID != qb.PerQuery[i].ID || qa.PerQuery[i].Recall[10] != qb.PerQuery[i].Recall[10] {
				t.Fatalf("%s: query %d differs between runs: %+v vs %+v", mode, i, qa.PerQuery[i], qb.PerQuery[i])
			}
		}
	}
}

func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	for name, cfg := range map[string]bench.Config{
		"unknown backend":  {Backends: []string{"nope"}, Sizes: []int{10}},
		"unknown embedder": {Backends: []string{"sqlite"}, Embedders: []string{"nope"}, Sizes: []int{10}},
		"bad k":            {Backends: []string{"sqlite"}, K: []int{0}, Sizes: []int{10}},
		"twice":            {Backends: []string{"sqlite", "sqlite"}, Sizes: []int{10}},
		"empty data set":   {Backends: []string{"sqlite"}, Datasets: []*dataset.Dataset{{Name: "x"}}},
		"bad embedder cfg": {Backends: []string{"sqlite"}, EmbedderConfigs: map[string]any{"hash": &hash.Config{Dim: 3}}, Sizes: []int{10}},
		"pathless config":  {Backends: []string{"sqlite"}, BackendConfigs: map[string]any{"sqlite": &struct{ Name string }{}}, Sizes: []int{10}},
	} {
		_, err := bench.Run(ctx, cfg)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		want := core.ErrInvalid
		if strings.HasPrefix(name, "unknown") {
			want = core.ErrUnknownName
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := bench.Run(cctx, bench.Config{Backends: []string{"sqlite"}, Sizes: []int{10}, Dir: t.TempDir()}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// A run that fails leaves the runs before and after it in the report, and
// the report names the one that failed.
func TestRunKeepsFinishedRuns(t *testing.T) {
	broken := pets()
	broken.Name = "broken"
	broken.Corpora[0].Docs[2].Input.Content = "" // RememberBatch refuses an empty memory
	rep, err := bench.Run(context.Background(), bench.Config{Backends: []string{"sqlite"},
		Datasets: []*dataset.Dataset{broken, pets()}, Queries: 3, Warmup: 1, Dir: t.TempDir()})
	if err == nil || !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("err = %v, want the broken run's invalid-input error", err)
	}
	if !strings.Contains(err.Error(), "1 of 2 benchmark runs failed") || !strings.Contains(err.Error(), "broken") {
		t.Errorf("err = %v, want it to count the failures and name the data set", err)
	}
	if rep == nil || len(rep.Results) != 1 || rep.Results[0].Dataset != "pets" {
		t.Fatalf("report %+v, want the pets run that came after the failure", rep)
	}
	if len(rep.Failures) != 1 || rep.Failures[0].Dataset != "broken" || rep.Failures[0].Backend != "sqlite" {
		t.Fatalf("failures %+v, want the broken run", rep.Failures)
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "FAILED: broken") {
		t.Errorf("table does not list the failure:\n%s", out.String())
	}
}
