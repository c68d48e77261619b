package ollama_test

import (
	"net/http/httptest"
	"testing"

	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/core/testbin"
	"github.com/memos-go/memos/plugins"
)

// TestAsPlugin builds cmd/memos-embed-ollama and runs the conformance cases
// through it against the fake server.
func TestAsPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := testbin.Build(t, "./cmd/memos-embed-ollama")
	f := &fake{t: t, dim: 8}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p, err := plugins.Open(t.Context(), plugins.Config{Path: bin, Args: []string{
		"-base-url", srv.URL, "-model", "all-minilm", "-batch", "2",
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	embedtest.Run(t, p, append(embedtest.Cases(), embedtest.HostSplitsBatches)...)
	if mi, _ := p.Info(t.Context()); mi.ID != "ollama:all-minilm:8" || mi.MaxBatch != 2 {
		t.Fatalf("Info %+v", mi)
	}
}
