package core_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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
// id, model, dimension, index kind, seq, generation, the precision in a
// MEMOSVS3 or MEMOSVS4 header, and the padding of a MEMOSVS4 one.
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
	if string(b[:8]) != "MEMOSVS2" {
		str() // precision
	}
	if string(b[:8]) == "MEMOSVS4" {
		n += 1 + int(b[n]) // padding
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
// loads it. Every precision is saved in the aligned format (MEMOSVS4).
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
		// Every precision is saved in the aligned format, the exact
		// index's serialisation starting at a multiple of 64 bytes.
		if magic != "MEMOSVS4" || (kind == "exact" && inner != "MEMOSEX3") || (kind == "hnsw" && inner != "MEMOSHNW") ||
			snapshotHeaderLen(t, after)%64 != 0 {
			t.Fatalf("%s snapshot starts %q, its index %q at byte %d", prec, magic, inner, snapshotHeaderLen(t, after))
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

// A damaged snapshot — truncated, torn (its end zeroed, as a crash between
// the write and the rename can leave it), with a flipped byte among the
// vectors, or empty — is refused at open, although it is read in place (a
// mapped file): the index is rebuilt from the store and answers as the
// intact snapshot did, and Close writes a whole snapshot again.
func TestVectorSnapshotDamaged(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	snap := path + ".vectors"
	opts := core.Options{VectorSnapshot: snap}
	e := openAt(t, path, opts)
	var ins []core.Input
	for i := range 40 {
		ins = append(ins, core.Input{Content: fmt.Sprintf("note %d about the %s", i, []string{"ferry", "train", "bus", "bike"}[i%4])})
	}
	if _, err := e.RememberBatch(ctx, ins); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	answers := func() string {
		e := openAt(t, path, opts)
		defer e.Close()
		st, err := e.Stats(ctx)
		if err != nil || st.Vectors != len(ins) {
			t.Fatalf("%d vectors (%v), want %d", st.Vectors, err, len(ins))
		}
		var out []int64
		for _, q := range []string{"note 3 about the bike", "ferry", "note 17"} {
			res, err := e.Search(ctx, core.SearchRequest{Query: q, Mode: core.ModeVector})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				out = append(out, h.Memory.ID)
			}
		}
		return fmt.Sprint(out)
	}
	want := answers()
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	head := snapshotHeaderLen(t, good)
	torn, flipped := bytes.Clone(good), bytes.Clone(good)
	clear(torn[len(torn)-1024:])
	flipped[len(flipped)-100] ^= 0x08
	for name, b := range map[string][]byte{
		"truncated in the header":  good[:head-3],
		"truncated in the vectors": good[:len(good)/2],
		"without its checksum":     good[:len(good)-4],
		"torn":                     torn,
		"flipped":                  flipped,
		"empty":                    {},
	} {
		if err := os.WriteFile(snap, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := answers(); got != want {
			t.Fatalf("%s snapshot: vector search answers %s, want %s", name, got, want)
		}
		after, err := os.ReadFile(snap)
		if err != nil {
			t.Fatal(err)
		}
		if x, err := vector.LoadExactBytes(after[snapshotHeaderLen(t, after):], nil); err != nil || x.Len() != len(ins) {
			t.Fatalf("%s snapshot: the snapshot saved after the rebuild does not load: %v", name, err)
		}
	}
}

// A snapshot of the format before the aligned one (MEMOSVS2 around
// MEMOSEX1, as the last release wrote) is still loaded, and rewritten in
// the aligned format at Close so that later opens read it in place.
func TestVectorSnapshotOldFormat(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	snap := path + ".vectors"
	opts := core.Options{VectorSnapshot: snap}
	e := openAt(t, path, opts)
	m := remember(t, e, core.Input{Content: "the snapshot keeps this vector"})
	remember(t, e, core.Input{Content: "and this one about ferries"})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	cur, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snap, oldSnapshot(t, cur), 0o600); err != nil {
		t.Fatal(err)
	}
	e = openAt(t, path, opts)
	res, err := e.Search(ctx, core.SearchRequest{Query: m.Content, Mode: core.ModeVector})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Memory.ID != m.ID {
		t.Fatalf("vector search from an old snapshot: %v, %v", res, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	if magic := string(after[:8]); magic != "MEMOSVS4" {
		t.Fatalf("the old snapshot was not rewritten at Close: it starts %q", magic)
	}
}

// oldSnapshot turns a float32 exact snapshot of the aligned format
// (MEMOSVS4, MEMOSEX3) into the format before it (MEMOSVS2, MEMOSEX1):
// no precision, no padding.
func oldSnapshot(t *testing.T, b []byte) []byte {
	t.Helper()
	head := snapshotHeaderLen(t, b)
	// The VS2 header ends before the precision: magic, store, model, dim,
	// index, seq, generation.
	n := 8
	str := func() { n += 2 + int(binary.LittleEndian.Uint16(b[n:])) }
	str()
	str()
	n += 4
	str()
	n += 8
	str()
	out := append([]byte("MEMOSVS2"), b[8:n]...)
	in := b[head:]
	if string(in[:8]) != "MEMOSEX3" || in[8] != 0 {
		t.Fatalf("not a float32 MEMOSEX3 snapshot: %q %d", in[:8], in[8])
	}
	dim := int(binary.LittleEndian.Uint32(in[9:]))
	count := int(binary.LittleEndian.Uint64(in[13:]))
	p := 21 + 8*count // past the ids
	for range 2 {     // namespace and pool names
		k := int(binary.LittleEndian.Uint32(in[p:]))
		p += 4
		for range k {
			p += 2 + int(binary.LittleEndian.Uint16(in[p:]))
		}
	}
	p += 8 * count // namespace and pool of each entry
	inner := append([]byte("MEMOSEX1"), in[9:p]...)
	p += -p & 63 // the padding
	inner = append(inner, in[p:p+4*dim*count]...)
	inner = binary.LittleEndian.AppendUint32(inner, crc32.ChecksumIEEE(inner))
	return append(out, inner...)
}
