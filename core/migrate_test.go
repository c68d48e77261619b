package core_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

func TestMigrateBetweenBackends(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Migrate's contract is that nothing writes to the source during the
	// copy; the engine's background writer of access statistics would
	// (AccessFlush after a search), landing between the copy and its
	// verification. So the statistics wait for FlushAccesses below.
	src := openAt(t, filepath.Join(dir, "memory.db"), core.Options{Search: core.SearchConfig{AccessFlush: time.Hour}})
	infra, _ := src.In("project:infra")
	var ms []*core.Memory
	for i := range 30 {
		e := src
		if i%3 == 0 {
			e = infra
		}
		ms = append(ms, remember(t, e, core.Input{Content: fmt.Sprintf("fact %d about the staging cluster", i), Session: "s1", Significance: 1 + i%10}))
	}
	four := "the staging cluster has four nodes"
	if _, err := src.Update(ctx, ms[1].ID, core.Patch{Content: &four}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Link(ctx, core.Edge{From: ms[1].ID, To: ms[2].ID, Type: core.EdgeSupports, Weight: 0.5}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Forget(ctx, ms[29].ID, "test"); err != nil { // the highest id
		t.Fatal(err)
	}
	if _, err := src.Search(ctx, core.SearchRequest{Query: "staging cluster"}); err != nil { // access stats
		t.Fatal(err)
	}
	before, err := src.Search(ctx, core.SearchRequest{Query: "staging cluster four", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	core.FlushAccesses(src)
	srcB := src.Backend()

	dst, err := bolt.Open(ctx, bolt.Config{Path: filepath.Join(dir, "memory.bolt")})
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	rep, err := core.Migrate(ctx, srcB, dst, func(done, total int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	srcLog, err := src.Audit(ctx, core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories != 29 || rep.Versions != 30 || rep.Edges != 1 || rep.AuditEntries != len(srcLog) || rep.MaxID != ms[29].ID || !rep.Verified || calls == 0 {
		t.Fatalf("report = %+v (progress calls %d)", rep, calls)
	}
	// A second copy into the same, now full, store is refused.
	if _, err := core.Migrate(ctx, srcB, dst, nil); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("migrate into a non-empty store: %v", err)
	}
	emb, _ := hash.Open(ctx, hash.Config{})
	copyEng, err := core.Open(ctx, core.Options{Backend: dst, Embedder: emb, Now: newClock().now, Search: core.SearchConfig{DisableAccessTracking: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer copyEng.Close()
	after, err := copyEng.Search(ctx, core.SearchRequest{Query: "staging cluster four", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(after)) != fmt.Sprint(ids(before)) {
		t.Fatalf("search on the copy = %v, on the source %v", ids(after), ids(before))
	}
	if rep, err := copyEng.VerifyAudit(ctx); err != nil || rep.Versions == 0 {
		t.Fatalf("audit chain of the copy: %+v, %v", rep, err)
	}
	m := remember(t, copyEng, core.Input{Content: "written after the copy"})
	if m.ID <= ms[29].ID {
		t.Fatalf("the copy reused forgotten id %d", m.ID)
	}
	src.Close()

	// And back: bolt → a new sqlite store.
	back, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "back.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if rep, err := core.Migrate(ctx, dst, back, nil); err != nil || rep.Memories != 30 || !rep.Verified {
		t.Fatalf("bolt → sqlite: %+v, %v", rep, err)
	}
}
