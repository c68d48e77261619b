package openai_test

import (
	"testing"

	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/core/testbin"
	"github.com/memos-go/memos/plugins"
)

// TestAsPlugin builds cmd/memos-embed-openai and runs the conformance cases
// through it against the fake server; the key travels in the environment.
func TestAsPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := testbin.Build(t, "./cmd/memos-embed-openai")
	f := &fake{}
	url := serve(t, f)
	p, err := plugins.Open(t.Context(), plugins.Config{Path: bin, Args: []string{
		"-base-url", url, "-model", "test-model", "-dimensions", "12", "-api-key-env", keyEnv, "-batch", "3",
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	embedtest.Run(t, p, append(embedtest.Cases(), embedtest.HostSplitsBatches)...)
	if len(f.requests()) == 0 {
		t.Fatal("the plugin never called the server")
	}
}
