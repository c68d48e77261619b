package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// TestMigrateSQLiteToPostgresAndBack copies a sqlite store with versions,
// edges, a forgotten id and an audit log into postgres (core.Migrate
// verifies the copy memory by memory), searches both alike, and copies it
// back into a new sqlite store.
func TestMigrateSQLiteToPostgresAndBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	open := func(b core.Backend) *core.Engine {
		e, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb, Search: core.SearchConfig{DisableAccessTracking: true}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	se := open(src)
	var ids []int64
	for i := range 30 {
		m, err := se.Remember(ctx, core.Input{Content: fmt.Sprintf("fact %d about the staging cluster", i), Session: "s1", Significance: 1 + i%10})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	four := "the staging cluster has four nodes"
	if _, err := se.Update(ctx, ids[1], core.Patch{Content: &four}); err != nil {
		t.Fatal(err)
	}
	if _, err := se.Link(ctx, core.Edge{From: ids[1], To: ids[2], Type: core.EdgeSupports, Weight: 0.5}); err != nil {
		t.Fatal(err)
	}
	if _, err := se.Forget(ctx, ids[29], "test"); err != nil {
		t.Fatal(err)
	}
	search := func(e *core.Engine) []int64 {
		return searchIDs(t, e, core.SearchRequest{Query: "staging cluster four", Limit: 20})
	}
	before := search(se)

	dsn := testDSN(t)
	dst, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schemaFor(t, dsn, t.Name())})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := core.Migrate(ctx, src, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories != 29 || rep.Versions != 30 || rep.Edges != 1 || rep.AuditEntries < 1 || rep.MaxID != ids[29] || !rep.Verified {
		t.Fatalf("sqlite → postgres: report %+v", rep)
	}
	if _, err := core.Migrate(ctx, src, dst, nil); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("a second copy into the now full store: %v, want ErrInvalid", err)
	}
	pe := open(dst)
	if after := search(pe); !slices.Equal(after, before) {
		t.Errorf("search on the postgres copy = %v, on sqlite %v", after, before)
	}
	if rep, err := pe.VerifyAudit(ctx); err != nil || rep.Entries < 1 || rep.BrokenEntry != 0 {
		t.Errorf("audit chain of the copy: %+v, %v", rep, err)
	}
	m, err := pe.Remember(ctx, core.Input{Content: "written after the copy"})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID <= ids[29] {
		t.Errorf("the copy gave id %d, reusing an id up to the forgotten %d", m.ID, ids[29])
	}
	se.Close()

	back, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "back.db")})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := core.Migrate(ctx, dst, back, nil); err != nil || rep.Memories != 30 || rep.Versions != 31 || !rep.Verified {
		t.Fatalf("postgres → sqlite: %+v, %v", rep, err)
	}
	if err := back.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pe.Close(); err != nil {
		t.Fatal(err)
	}
}
