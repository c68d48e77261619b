package core_test

import (
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/core"
)

// TestStatsFootprint: Stats counts the whole store for the per-memory
// figures, and reports the vector index's memory and the snapshot's size.
func TestStatsFootprint(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "memory.db")
	opts := core.Options{VectorSnapshot: path + ".vectors"}
	e := openAt(t, path, opts)
	remember(t, e, core.Input{Content: "shared note"})
	alice, err := e.In("user:alice")
	if err != nil {
		t.Fatal(err)
	}
	remember(t, alice, core.Input{Content: "alice's note"})
	remember(t, alice, core.Input{Content: "another of alice's notes"})
	st, err := e.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories != 1 || st.StoreMemories != 3 {
		t.Fatalf("memories %d in scope, %d in the store; want 1 and 3", st.Memories, st.StoreMemories)
	}
	if dim := int64(st.Embedder.Dim); st.VectorIndexBytes < 3*dim*4 {
		t.Fatalf("vector index %d bytes for 3 vectors of %d dimensions", st.VectorIndexBytes, dim)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, path, opts)
	defer e.Close()
	st, err = e.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(3 * st.Embedder.Dim * 4); st.VectorSnapshotBytes < want {
		t.Fatalf("snapshot %d bytes, want at least the 3 vectors' %d", st.VectorSnapshotBytes, want)
	}
}
