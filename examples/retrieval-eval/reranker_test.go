package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/provider/rerank/reranktest"
	"github.com/memos-go/memos/examples/internal/evaldata"
)

// TestRerankerFlag: -reranker http reads its settings from the memos
// configuration (here MEMOS_RERANKER__HTTP__BASE_URL, pointing at a fake of
// text-embeddings-inference's POST /rerank), every engine the evaluation
// opens asks it, its calls are counted and reported; a reranker that does
// not answer fails at the start, saying where its settings come from.
func TestRerankerFlag(t *testing.T) {
	srv := reranktest.NewTEI(func(_, text string) float64 {
		if strings.Contains(text, "orchard") {
			return 0.9
		}
		return 0.1
	})
	defer srv.Close()
	t.Setenv("MEMOS_HOME", t.TempDir())
	t.Setenv("MEMOS_RERANKER__HTTP__BASE_URL", srv.URL)
	ctx := context.Background()
	rr, err := evaldata.Reranker(ctx, "http", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Shutdown()
	reranker = rr
	defer func() { reranker = nil }()

	emb, err := evaldata.Embedder(ctx, "", "hash")
	if err != nil {
		t.Fatal(err)
	}
	backendName = "sqlite"
	path := filepath.Join(t.TempDir(), "c.db")
	c := corpus{name: "c", docs: []doc{
		{key: "pie", in: core.Input{Content: "apple apple apple pie with apple cinnamon"}},
		{key: "orchard", in: core.Input{Content: "the apple orchard in autumn"}},
	}}
	if err := ingest(ctx, path, emb, c); err != nil {
		t.Fatal(err)
	}
	eng, err := openEngine(ctx, path, emb, core.SearchConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	res, err := eng.Search(ctx, core.SearchRequest{Query: "apple", Mode: core.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 2 || !strings.Contains(res.Hits[0].Memory.Content, "orchard") {
		t.Fatalf("hits %v; want the reranker's favourite, the orchard, first", res.Hits)
	}
	// The check at open is not counted; the search asked once.
	if got := rr.Counts(); got.Calls != 1 || got.Failed != 0 {
		t.Errorf("counts %+v; want the search's call", got)
	}
	var out strings.Builder
	rerankReport(&out)
	if !strings.Contains(out.String(), "reranker http: 1 calls, 0 failed") {
		t.Errorf("report %q", out.String())
	}

	srv.Close()
	if _, err := evaldata.Reranker(ctx, "http", 0); err == nil || !strings.Contains(err.Error(), "MEMOS_RERANKER__HTTP__") {
		t.Errorf("reranker down: %v; want an error naming its settings", err)
	}
	if r, err := evaldata.Reranker(ctx, "none", 0); r != nil || err != nil {
		t.Errorf("none: %v, %v", r, err)
	}
}
