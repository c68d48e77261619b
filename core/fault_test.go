package core_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
)

// TestCloseWithoutSnapshotSpace checks that a vector snapshot that cannot be
// written (here: its directory is a file; on a full disk: ENOSPC) does not
// make Close fail: the write before it committed, and the snapshot is only a
// cache. A caller that saw Close fail would retry the write and store it twice.
func TestCloseWithoutSnapshotSpace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	notDir := filepath.Join(dir, "not-a-dir")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "memory.db")
	e := openAt(t, path, core.Options{VectorSnapshot: filepath.Join(notDir, "memory.db.vectors")})
	m := remember(t, e, core.Input{Content: "stored before a snapshot that cannot be saved"})
	if err := e.Close(); err != nil {
		t.Fatalf("Close after a committed write = %v; a snapshot that cannot be saved must not fail it", err)
	}
	e = openAt(t, path, core.Options{})
	defer e.Close()
	if got, err := e.Get(ctx, m.ID); err != nil || got.Content != m.Content {
		t.Fatalf("after reopen, get %d = %v, %v; want the stored memory", m.ID, got, err)
	}
	res, err := e.Search(ctx, core.SearchRequest{Query: m.Content, Mode: core.ModeVector})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Memory.ID != m.ID {
		t.Fatalf("vector search after reopen without a snapshot: %v, %v", res, err)
	}
}

// noSpaceBackend is a real backend whose Touch fails as on a full disk.
type noSpaceBackend struct{ core.Backend }

func (b noSpaceBackend) Update(ctx context.Context, fn func(core.Tx) error) error {
	return b.Backend.Update(ctx, func(tx core.Tx) error { return fn(noSpaceTx{tx}) })
}

type noSpaceTx struct{ core.Tx }

func (noSpaceTx) Touch([]int64, time.Time) error {
	return &os.PathError{Op: "write", Path: "memory.db-wal", Err: syscall.ENOSPC}
}

// TestReadsSurviveFailedAccessCounts checks that search and context packs
// answer when their access statistics cannot be written: they are
// read-only commands for the user, and must keep working on a full disk.
func TestReadsSurviveFailedAccessCounts(t *testing.T) {
	ctx := context.Background()
	b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := core.Open(ctx, core.Options{Backend: noSpaceBackend{b}})
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	defer e2.Close()
	m := remember(t, e2, core.Input{Content: "the deploy key rotates every ninety days"})
	res, err := e2.Search(ctx, core.SearchRequest{Query: "deploy key", Mode: core.ModeKeyword})
	if err != nil {
		t.Fatalf("search with access counts failing = %v; want the results", err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Memory.ID != m.ID {
		t.Fatalf("search hits = %v, want memory %d", ids(res), m.ID)
	}
	if _, err := e2.ContextPack(ctx, core.PackRequest{Query: "deploy key"}); err != nil {
		t.Fatalf("context pack with access counts failing = %v; want the pack", err)
	}
	// Until the batch is written, this process sees its accesses; the
	// write fails, and they are dropped (with a warning), not retried.
	if got, err := e2.Get(ctx, m.ID); err != nil || got.AccessCount != 2 {
		t.Fatalf("get before the write = %+v, %v; want the two pending accesses", got, err)
	}
	core.FlushAccesses(e2)
	if got, err := e2.Get(ctx, m.ID); err != nil || got.AccessCount != 0 {
		t.Fatalf("get = %+v, %v; want the memory with no recorded access", got, err)
	}
}
