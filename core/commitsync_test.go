package core_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// readsFailAfterWrite is a real backend whose reads fail as an unreachable
// database's do from the moment a write commits (once armed) until the
// test resets fail: a PostgreSQL restart right after a COMMIT, as the
// multi-host test (cmd/memos/internal/multihost) met it.
type readsFailAfterWrite struct {
	core.Backend
	armed, fail *atomic.Bool
}

func (b readsFailAfterWrite) Update(ctx context.Context, fn func(core.Tx) error) error {
	err := b.Backend.Update(ctx, fn)
	if err == nil && b.armed.Load() {
		b.fail.Store(true)
	}
	return err
}

func (b readsFailAfterWrite) View(ctx context.Context, fn func(core.ReadTx) error) error {
	if b.fail.Load() {
		return fmt.Errorf("read change sequence: the database is not available; retry shortly: %w", core.ErrUnavailable)
	}
	return b.Backend.View(ctx, fn)
}

// TestCommittedWriteIsAcknowledged checks that a write whose transaction
// committed reports success although bringing the vector index up to date
// afterwards fails: the next search syncs the index first, while a caller
// told that its remember failed retries it and stores the memory twice.
func TestCommittedWriteIsAcknowledged(t *testing.T) {
	ctx := context.Background()
	b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var armed, fail atomic.Bool
	e, err := core.Open(ctx, core.Options{Backend: readsFailAfterWrite{b, &armed, &fail}, Embedder: emb})
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	defer e.Close()
	armed.Store(true)

	m, err := e.Remember(ctx, core.Input{Content: "the staging database moved to the new rack"})
	if err != nil {
		t.Fatalf("remember that committed = %v; want the stored memory", err)
	}
	fail.Store(false)
	content := "the staging database moved to the east rack"
	if _, err := e.Update(ctx, m.ID, core.Patch{Content: &content}); err != nil {
		t.Fatalf("update that committed = %v; want the new version", err)
	}
	fail.Store(false)
	next, err := e.Supersede(ctx, m.ID, core.Input{Content: "the staging database moved to the west rack"})
	if err != nil {
		t.Fatalf("supersede that committed = %v; want the new memory", err)
	}
	fail.Store(false)
	armed.Store(false)
	// The next search catches the index up.
	res, err := e.Search(ctx, core.SearchRequest{Query: next.Content, Mode: core.ModeVector})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Memory.ID != next.ID {
		t.Fatalf("vector search after the failed syncs = %v, %v; want memory %d first", ids(res), err, next.ID)
	}
	if got, err := e.Get(ctx, m.ID); err != nil || got.Content != content {
		t.Errorf("get %d = %v, %v; want the updated version", m.ID, got, err)
	}
}
