package wordvec_test

import (
	"fmt"
	"testing"

	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/core/testbin"
	"github.com/memos-go/memos/embedders/wordvec"
	"github.com/memos-go/memos/plugins"
)

// TestAsPlugin builds cmd/memos-embed-wordvec and checks that, run as a
// plugin, it passes the conformance cases and gives the in-process vectors.
func TestAsPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := testbin.Build(t, "./cmd/memos-embed-wordvec")
	path := fixture(t, true, false)
	p, err := plugins.Open(t.Context(), plugins.Config{Path: bin, Args: []string{"-path", path, "-dim", "4"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	embedtest.Run(t, p)
	texts := []string{"the kitten on the rug", "stock prices", ""}
	got, err := p.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := open(t, wordvec.Config{Path: path}).Embed(t.Context(), texts)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatal("the plugin's vectors differ from the in-process embedder's")
	}
}
