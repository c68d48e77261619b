package bench_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench"
	"github.com/memos-go/memos/core/provider/rerank"
	"github.com/memos-go/memos/core/provider/rerank/reranktest"
	"github.com/memos-go/memos/embedders/hash"
)

// overlap counts the query's words in text.
func overlap(query, text string) float64 {
	n := 0.0
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if strings.Contains(strings.ToLower(text), w) {
			n++
		}
	}
	return n
}

// benchWith runs the synthetic workload with the http reranker at srv (nil:
// no reranker).
func benchWith(t *testing.T, srv *reranktest.TEI) (*bench.Report, error) {
	t.Helper()
	cfg := bench.Config{
		Backends:        []string{"sqlite"},
		EmbedderConfigs: map[string]any{"hash": &hash.Config{Dim: 64}},
		Sizes:           []int{400},
		Queries:         20,
		Warmup:          2,
		Dir:             t.TempDir(),
		Search:          core.SearchConfig{RerankTimeout: 2e9, RerankTop: 20},
	}
	if srv != nil {
		cfg.Reranker = rerank.Name
		cfg.RerankerConfig = &rerank.Config{BaseURL: srv.URL, MaxRetries: -1}
	}
	return bench.Run(context.Background(), cfg)
}

// TestRunWithReranker: with a reranker configured every search of the
// benchmark asks it, and the figures are the reranked order's — one that
// puts the least matching candidates first costs hybrid recall@10 against
// the same run without it; its calls are counted.
func TestRunWithReranker(t *testing.T) {
	plain, err := benchWith(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Results[0].Rerank != nil || plain.Settings.Reranker != "" {
		t.Fatalf("no reranker configured, yet rerank %+v, settings %q", plain.Results[0].Rerank, plain.Settings.Reranker)
	}
	srv := reranktest.NewTEI(func(q, text string) float64 { return -overlap(q, text) })
	defer srv.Close()
	rep, err := benchWith(t, srv)
	if err != nil {
		t.Fatal(err)
	}
	run := rep.Results[0]
	if rep.Settings.Reranker != rerank.Name || run.Rerank == nil || run.Rerank.Calls == 0 || run.Rerank.Failed != 0 {
		t.Fatalf("settings reranker %q, counts %+v; want %s, calls and no failure", rep.Settings.Reranker, run.Rerank, rerank.Name)
	}
	// The server also saw the check made before the first run.
	if got := srv.Calls(); got != run.Rerank.Calls+1 {
		t.Errorf("the server saw %d calls, the report counts %d (+1 check)", got, run.Rerank.Calls)
	}
	p, r := plain.Results[0].Quality[core.ModeHybrid].Recall[10], run.Quality[core.ModeHybrid].Recall[10]
	if r >= p {
		t.Errorf("hybrid recall@10 %.3f with a reranker that reverses relevance, %.3f without: the figures are not the reranked searches'", r, p)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "reranker http on every search (its top 20 candidates") || strings.Contains(table.String(), "the reranker failed") {
		t.Errorf("table:\n%s", table.String())
	}
}

// A reranker that fails during the run is counted and the table warns that
// the figures mix reranked and fused orders; one that does not answer at
// all fails the benchmark before any run.
func TestRunRerankerFails(t *testing.T) {
	srv := reranktest.NewTEI(overlap)
	defer srv.Close()
	srv.FailFrom(11)
	rep, err := benchWith(t, srv)
	if err != nil {
		t.Fatal(err)
	}
	rr := rep.Results[0].Rerank
	if rr == nil || rr.Failed == 0 || rr.Failed >= rr.Calls || rr.Calls-rr.Failed != 9 {
		t.Fatalf("counts %+v; want 9 calls answered (10 less the check), the rest failed", rr)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "warning: synthetic") || !strings.Contains(table.String(), "the reranker failed") {
		t.Errorf("no warning:\n%s", table.String())
	}

	down := reranktest.NewTEI(overlap)
	down.Close()
	_, err = benchWith(t, down)
	var re *bench.RerankerError
	if !errors.As(err, &re) || re.Name != rerank.Name || !strings.Contains(err.Error(), "first call") {
		t.Errorf("reranker down: %v; want a RerankerError on the first call", err)
	}
	_, err = bench.Run(context.Background(), bench.Config{Backends: []string{"sqlite"}, Sizes: []int{10}, Reranker: "nope"})
	if !errors.Is(err, core.ErrUnknownName) {
		t.Errorf("unknown reranker: %v; want ErrUnknownName", err)
	}
}
