package cli

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
)

// TestReembed moves a store from hash-v1-256 to hash-v1-128 with the CLI.
func TestReembed(t *testing.T) {
	t.Parallel()
	old := newEnv(t)
	var ids []int64
	for _, c := range []string{"The kitten slept on the rug", "Stock prices fell sharply", "Alice prefers open-source tools"} {
		ids = append(ids, old.add(c).ID)
	}
	old.ok("add", "in another namespace", "--namespace", "project:infra")
	neu := old.with("MEMOS_EMBEDDER__HASH__DIM=128")

	// Other commands refuse the changed model, naming both.
	r := neu.run("search", "kitten")
	if r.code != 4 || !strings.Contains(r.stderr, "hash-v1-256") || !strings.Contains(r.stderr, "hash-v1-128") || !strings.Contains(r.stderr, "memos reembed") {
		t.Fatalf("search with the new model: exit %d, %q; want 4 naming both models and memos reembed", r.code, r.stderr)
	}

	var rep core.ReembedReport
	neu.json(&rep, "reembed", "--batch", "2")
	want := core.ReembedReport{Model: "hash-v1-128", Dim: 128, Previous: "hash-v1-256", Total: 4, Reembedded: 4, Batches: 2, Switched: true}
	if rep != want {
		t.Errorf("reembed --json: %+v, want %+v", rep, want)
	}

	var res core.SearchResult
	neu.json(&res, "search", "kitten rug", "--mode", "vector")
	if len(res.Hits) == 0 || res.Hits[0].Memory.ID != ids[0] {
		t.Errorf("vector search after reembed: %+v; want memory %d first", res.Hits, ids[0])
	}
	var h struct {
		Versions []struct {
			Embedding struct {
				Model string `json:"model"`
				Dim   int    `json:"dim"`
			} `json:"embedding"`
		} `json:"versions"`
	}
	neu.json(&h, "history", fmt.Sprint(ids[0]))
	hist := h.Versions
	if len(hist) != 2 || hist[0].Embedding.Model != "hash-v1-256" || hist[1].Embedding.Model != "hash-v1-128" || hist[1].Embedding.Dim != 128 {
		t.Errorf("history after reembed: %+v; want version 2 on hash-v1-128", hist)
	}

	if out := neu.ok("reembed"); !strings.Contains(out, "nothing to do") {
		t.Errorf("second reembed printed %q; want nothing to do", out)
	}
	if r := old.run("search", "kitten"); r.code != 4 || !strings.Contains(r.stderr, "hash-v1-128") {
		t.Errorf("search with the old model after the switch: exit %d, %q; want 4", r.code, r.stderr)
	}
	if r := neu.run("reembed", "--batch", "-1"); r.code != 2 {
		t.Errorf("reembed --batch -1: exit %d, want 2", r.code)
	}
}

func TestReembedHuman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.add("one")
	e.add("two")
	out := e.with("MEMOS_EMBEDDER__HASH__DIM=64").ok("reembed")
	for _, s := range []string{"re-embedded 2 memories with hash-v1-64 (64 dimensions)", "the store now uses hash-v1-64 (was hash-v1-256)"} {
		if !strings.Contains(out, s) {
			t.Errorf("reembed printed %q; want %q", out, s)
		}
	}
}

func TestReembedBar(t *testing.T) {
	var buf bytes.Buffer
	b := &countBar{w: &buf, desc: "re-embedding"}
	b.progress(0, 10)
	b.progress(10, 10)
	b.finish()
	if s := buf.String(); !strings.Contains(s, "re-embedding") || !strings.Contains(s, "10/10") || !strings.HasSuffix(s, "\n") {
		t.Errorf("bar drew %q", s)
	}
	var none *countBar
	none.progress(1, 2) // a nil bar draws nothing and does not panic
	none.finish()
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	l := Logger(&buf, []string{"MEMOS_LOG_LEVEL=debug"})
	if !l.Enabled(t.Context(), slog.LevelDebug) {
		t.Error("MEMOS_LOG_LEVEL=debug does not enable debug")
	}
	l = Logger(&buf, nil)
	if l.Enabled(t.Context(), slog.LevelDebug) || !l.Enabled(t.Context(), slog.LevelInfo) {
		t.Error("the default level is not info")
	}
	buf.Reset()
	l = Logger(&buf, []string{"MEMOS_LOG_LEVEL=loud"})
	if !l.Enabled(t.Context(), slog.LevelInfo) || !strings.Contains(buf.String(), "unknown log level") || !strings.Contains(buf.String(), "loud") {
		t.Errorf("an unknown level: logged %q", buf.String())
	}
}
