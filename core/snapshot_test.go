package core_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/core/vector/hnsw"
	"github.com/memos-go/memos/embedders/hash"
)

// copyFile copies src to dst (a store file, for backup-and-restore tests).
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// An older memory.db restored beside a newer snapshot, then written to
// without a snapshot until its change counter passes the snapshot's, must
// not make the next open trust the snapshot: vector search would find a
// memory by words it no longer contains.
func TestStaleVectorSnapshotAfterRestore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.db")
	backup := filepath.Join(dir, "backup.db")
	opts := core.Options{VectorSnapshot: path + ".vectors"}

	e := openAt(t, path, opts)
	m := remember(t, e, core.Input{Content: "the orchard grows apples and pears"})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	copyFile(t, path, backup) // the backup knows m as apples and pears

	e = openAt(t, path, opts)
	zebra := "zebras graze on the savanna at dawn"
	if _, err := e.Update(ctx, m.ID, core.Patch{Content: &zebra}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil { // the snapshot now holds m's zebra vector
		t.Fatal(err)
	}

	copyFile(t, backup, path) // restore the older store beside the newer snapshot
	e = openAt(t, path, core.Options{})
	for _, c := range []string{"one note about ferries", "two notes about trains", "three notes about buses", "four notes about bikes"} {
		remember(t, e, core.Input{Content: c})
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openAt(t, path, opts)
	defer e.Close()
	res, err := e.Search(ctx, core.SearchRequest{Query: zebra, Mode: core.ModeVector})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) > 0 && res.Hits[0].Memory.ID == m.ID {
		t.Fatalf("vector search for %q finds memory %d (%q) first: the stale snapshot was trusted",
			zebra, m.ID, res.Hits[0].Memory.Content)
	}
	res, err = e.Search(ctx, core.SearchRequest{Query: "the orchard grows apples and pears", Mode: core.ModeVector})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Memory.ID != m.ID {
		t.Fatalf("vector search for the restored content does not find memory %d first: %v, %v", m.ID, res, err)
	}
}

// snapshotHeaderLen returns the length of a snapshot's header: magic, store
// id, model, dimension, index kind, seq, generation, and the precision in a
// MEMOSVS3 header.
func snapshotHeaderLen(t *testing.T, b []byte) int {
	t.Helper()
	n := 8
	str := func() {
		if len(b) < n+2 {
			t.Fatal("short snapshot")
		}
		n += 2 + int(binary.LittleEndian.Uint16(b[n:]))
	}
	str()  // store
	str()  // model
	n += 4 // dim
	str()  // index
	n += 8 // seq
	str()  // generation
	if string(b[:8]) == "MEMOSVS3" {
		str() // precision
	}
	return n
}

// A snapshot whose header matches the store but whose vectors do not (here
// rewritten by hand) is caught by the sample check on open, for both
// indexes (they answer it by lookup, driver.VectorHolder).
func TestVectorSnapshotSampleCheck(t *testing.T) {
	for _, kind := range []string{"exact", "hnsw"} {
		t.Run(kind, func(t *testing.T) { testVectorSnapshotSampleCheck(t, kind) })
	}
}

func testVectorSnapshotSampleCheck(t *testing.T, kind string) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	opts := core.Options{VectorSnapshot: path + ".vectors", VectorIndex: kind}
	e := openAt(t, path, opts)
	m := remember(t, e, core.Input{Content: "the orchard grows apples and pears"})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	zebra := "zebras graze on the savanna at dawn"
	vs, err := emb.Embed(ctx, []string{zebra})
	if err != nil {
		t.Fatal(err)
	}
	var idx core.PersistentVectorIndex = vector.NewExact(len(vs[0]))
	if kind == "hnsw" {
		if idx, err = hnsw.New(len(vs[0]), hnsw.Config{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Add(ctx, core.VectorEntry{ID: m.ID, Namespace: m.Namespace, Pool: m.Pool, Vector: vs[0]}); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(opts.VectorSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.Write(old[:snapshotHeaderLen(t, old)])
	if err := idx.Save(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(opts.VectorSnapshot, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	e = openAt(t, path, opts)
	defer e.Close()
	res, err := e.Search(ctx, core.SearchRequest{Query: zebra, Mode: core.ModeVector})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) > 0 && res.Hits[0].Memory.ID == m.ID {
		t.Fatalf("vector search for %q finds memory %d (%q): the tampered snapshot was trusted", zebra, m.ID, m.Content)
	}
}

// The vector snapshot records its precision (Options.VectorPrecision): a
// store reopened at another precision rebuilds its index from the store
// instead of reading the snapshot, and one reopened at the same precision
// loads it. A float32 snapshot keeps the format of before precisions.
func TestVectorSnapshotPrecision(t *testing.T) {
	for _, kind := range []string{"exact", "hnsw"} {
		t.Run(kind, func(t *testing.T) { testVectorSnapshotPrecision(t, kind) })
	}
}

func testVectorSnapshotPrecision(t *testing.T, kind string) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	snap := path + ".vectors"
	contents := []string{"the orchard grows apples and pears", "zebras graze on the savanna at dawn", "the ferry leaves at nine"}
	var ids []int64
	e := openAt(t, path, core.Options{VectorSnapshot: snap, VectorIndex: kind})
	for _, c := range contents {
		ids = append(ids, remember(t, e, core.Input{Content: c}).ID)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for i, prec := range []string{"int8", "int8", "float32", "int8"} {
		before, err := os.ReadFile(snap)
		if err != nil {
			t.Fatal(err)
		}
		e := openAt(t, path, core.Options{VectorSnapshot: snap, VectorIndex: kind, VectorPrecision: prec})
		st, err := e.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.VectorPrecision != prec || st.Vectors != len(contents) {
			t.Fatalf("open %d at %s: the index holds %d vectors at %s", i, prec, st.Vectors, st.VectorPrecision)
		}
		for j, c := range contents {
			res, err := e.Search(ctx, core.SearchRequest{Query: c, Mode: core.ModeVector})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].Memory.ID != ids[j] || res.Hits[0].Similarity < 0.99 {
				t.Fatalf("open %d at %s: vector search for %q: %+v", i, prec, c, res.Hits)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		after, err := os.ReadFile(snap)
		if err != nil {
			t.Fatal(err)
		}
		magic, inner := string(after[:8]), string(after[snapshotHeaderLen(t, after):][:8])
		switch prec {
		case "float32":
			// The file reads as before precisions existed.
			if magic != "MEMOSVS2" || (kind == "exact" && inner != "MEMOSEX1") || (kind == "hnsw" && inner != "MEMOSHNW") {
				t.Fatalf("float32 snapshot starts %q, its index %q", magic, inner)
			}
		default:
			if magic != "MEMOSVS3" {
				t.Fatalf("%s snapshot starts %q", prec, magic)
			}
		}
		// Opened at the precision it was saved at, the snapshot is loaded
		// and, with nothing changed, not written again; at another it is
		// rebuilt and rewritten.
		if same := bytes.Equal(before, after); same != (i == 1) {
			t.Fatalf("open %d at %s: snapshot rewritten = %v", i, prec, !same)
		}
	}
}

func TestVectorPrecisionUnknown(t *testing.T) {
	ctx := context.Background()
	b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = core.Open(ctx, core.Options{Backend: b, Embedder: emb, VectorPrecision: "float16"})
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), `"float16"`) || !strings.Contains(err.Error(), "float32, int8") {
		t.Fatalf("Open with precision float16: %v, want ErrInvalid naming it and the known precisions", err)
	}
}

// An engine opened without an embedder holds no vectors, but the snapshot
// file a run with one left beside the store still holds the forgotten
// memory's vector: Stats reports its size and Forget removes it.
func TestForgetWithoutEmbedderRemovesVectorSnapshot(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	snap := path + ".vectors"
	e := openAt(t, path, core.Options{VectorSnapshot: snap})
	m := remember(t, e, core.Input{Content: "the lighthouse keeper's private diary"})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("no snapshot after Close: %v", err)
	}

	b, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	e, err = core.Open(ctx, core.Options{Backend: b, VectorSnapshot: snap, AllowModelChange: true})
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	defer e.Close()
	st, err := e.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Vectors != 0 || st.VectorIndex != "" || st.VectorSnapshotBytes == 0 {
		t.Fatalf("without an embedder: %d vectors, index %q, snapshot %d bytes; want 0, \"\" and the file's size",
			st.Vectors, st.VectorIndex, st.VectorSnapshotBytes)
	}
	if _, err := e.Forget(ctx, m.ID, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snap); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the snapshot outlives the forget of memory %d: %v", m.ID, err)
	}
}
