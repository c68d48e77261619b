package core_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// hideSessions is a backend whose read transactions offer none of the
// optional interfaces of ReadTx (SessionReader, UpdateReader, RankReader,
// MultiGetter), so that the engine keeps its own session index and scans.
type hideSessions struct{ core.Backend }

func (h hideSessions) View(ctx context.Context, fn func(core.ReadTx) error) error {
	return h.Backend.View(ctx, func(tx core.ReadTx) error { return fn(struct{ core.ReadTx }{tx}) })
}

// TestSessionReaderMatchesSessionIndex checks that session expansion served
// by the backend's session index (sqlite's SessionReader) gives the same
// results — ids, order, scores and origins — as the engine's own index
// built by scanning the store, on sessions with ties in event and ingest
// time, the same session name in two namespaces, memories moved between
// sessions, forgotten ones, and writes between searches.
func TestSessionReaderMatchesSessionIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	// One clock for both engines that stands still while they search, so
	// that recency weighs their candidates alike.
	var clockMu sync.Mutex
	clock, ticking := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), true
	now := func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		if ticking {
			clock = clock.Add(time.Second)
		}
		return clock
	}
	tick := func(on bool) {
		clockMu.Lock()
		defer clockMu.Unlock()
		ticking = on
	}
	open := func(hide bool) *core.Engine {
		b, err := sqlite.Open(ctx, sqlite.Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		emb, err := hash.Open(ctx, hash.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var bk core.Backend = b
		if hide {
			bk = hideSessions{b}
		}
		e, err := core.Open(ctx, core.Options{Backend: bk, Embedder: emb, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	indexed, scanned := open(false), open(true)

	words := []string{"zoo", "lion", "penguin", "garden", "violin", "recipe", "train", "museum"}
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	var ins []core.Input
	for i := range 120 {
		in := core.Input{
			Content: fmt.Sprintf("turn %d, small talk", i),
			Type:    core.TypeTurn,
			Session: fmt.Sprintf("chat-%d", i%7),
		}
		if i%5 == 0 {
			in.Content = fmt.Sprintf("turn %d about the %s", i, words[i/5%len(words)])
		}
		if i%3 != 0 { // some turns have no event time; some share one
			in.ValidFrom = day.Add(time.Duration(i%5) * time.Hour)
		}
		ins = append(ins, in)
	}
	ms, err := indexed.RememberBatch(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}
	other, err := indexed.In("project:other")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := other.Remember(ctx, core.Input{Content: fmt.Sprintf("other turn %d about the zoo", i), Type: core.TypeTurn, Session: "chat-1"}); err != nil {
			t.Fatal(err)
		}
	}
	compare := func(stage string) {
		t.Helper()
		tick(false)
		defer tick(true)
		expanded := 0
		for _, w := range words {
			for _, req := range []core.SearchRequest{{Query: w}, {Query: w + " " + words[0], Limit: 20}} {
				a, err := indexed.Search(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := scanned.Search(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if ra, rb := render(a), render(b); ra != rb {
					t.Fatalf("%s, %q: indexed sessions\n%s\nscanned sessions\n%s", stage, req.Query, ra, rb)
				}
				expanded += strings.Count(render(a), "session neighbour")
			}
		}
		if expanded < 20 {
			t.Fatalf("%s: %d session neighbours in all results; the comparison checks too little", stage, expanded)
		}
	}
	compare("after ingest")
	// Move a turn to another session, forget some, add more: both indexes
	// follow.
	moved := ms[10]
	if _, err := indexed.Update(ctx, moved.ID, core.Patch{Session: ptr("chat-3")}); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[20:24] {
		if _, err := indexed.Forget(ctx, m.ID, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := indexed.Remember(ctx, core.Input{Content: "a late turn about the zoo", Type: core.TypeTurn, Session: "chat-2", ValidFrom: day}); err != nil {
		t.Fatal(err)
	}
	compare("after changes")
}

func render(res *core.SearchResult) string {
	var b strings.Builder
	for _, h := range res.Hits {
		fmt.Fprintf(&b, "%d %.17g %q\n", h.Memory.ID, h.Score, h.Origin)
	}
	return b.String()
}
