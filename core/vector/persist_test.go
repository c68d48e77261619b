package vector

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/fmap"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	for _, p := range []Precision{Float32, Int8} {
		t.Run(p.String(), func(t *testing.T) { testSaveLoadRoundTrip(t, p) })
	}
}

func testSaveLoadRoundTrip(t *testing.T, p Precision) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	x := NewExactPrecision(16, p)
	var entries []driver.VectorEntry
	for i := range 300 {
		v := make([]float32, 16)
		for j := range v {
			v[j] = rng.Float32() - 0.5
		}
		entries = append(entries, driver.VectorEntry{ID: int64(i + 1), Namespace: fmt.Sprintf("project:p%d", i%3), Pool: driver.Pools[i%3], Vector: v})
	}
	if err := x.Add(ctx, entries...); err != nil {
		t.Fatal(err)
	}
	// Removing every entry of one namespace leaves a free interner slot.
	var gone []int64
	for _, e := range entries {
		if e.Namespace == "project:p1" {
			gone = append(gone, e.ID)
		}
	}
	if err := x.Remove(ctx, gone...); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := x.Save(&buf); err != nil {
		t.Fatal(err)
	}
	y, err := LoadExact(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if y.Len() != x.Len() || y.Dim() != 16 || y.Precision() != p {
		t.Fatalf("loaded %d×%d at %v, saved %d×16 at %v", y.Len(), y.Dim(), y.Precision(), x.Len(), p)
	}
	// Every precision is written in version 3, with the vectors aligned.
	if magic := string(buf.Bytes()[:len(exactMagic)]); magic != exactMagicV3 {
		t.Fatalf("a %v index was saved with magic %q", p, magic)
	}
	for _, f := range []driver.VectorFilter{{}, {Namespaces: []string{"project:p2"}}, {Pools: []driver.Pool{driver.PoolRaw}}, {Namespaces: []string{"project:p1"}}} {
		want, _ := x.Search(ctx, entries[7].Vector, 10, f)
		got, _ := y.Search(ctx, entries[7].Vector, 10, f)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("filter %+v: loaded index answers %v, saved one %v", f, got, want)
		}
	}
	// The loaded index keeps working: add into the freed namespace, remove.
	if err := y.Add(ctx, driver.VectorEntry{ID: 1000, Namespace: "project:new", Pool: driver.PoolRaw, Vector: entries[0].Vector}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := y.Search(ctx, entries[0].Vector, 1, driver.VectorFilter{Namespaces: []string{"project:new"}}); len(hits) != 1 || hits[0].ID != 1000 {
		t.Fatalf("search after add on a loaded index: %v", hits)
	}

	// Corruption anywhere is detected.
	for _, at := range []int{0, 20, buf.Len() / 2, buf.Len() - 1} {
		bad := bytes.Clone(buf.Bytes())
		bad[at] ^= 0x40
		if _, err := LoadExact(bytes.NewReader(bad)); !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("byte %d flipped: err = %v, want ErrInvalid", at, err)
		}
	}
	if _, err := LoadExact(bytes.NewReader(buf.Bytes()[:buf.Len()/3])); !errors.Is(err, driver.ErrInvalid) {
		t.Errorf("truncated snapshot: err = %v, want ErrInvalid", err)
	}
}

// exact100k is an exact index of 100,000 random 256-dimension vectors.
func exact100k(b *testing.B) *Exact {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	x := NewExact(256)
	batch := make([]driver.VectorEntry, 0, 1000)
	for i := range 100_000 {
		v := make([]float32, 256)
		for j := range v {
			v[j] = rng.Float32() - 0.5
		}
		batch = append(batch, driver.VectorEntry{ID: int64(i + 1), Namespace: "default", Pool: driver.PoolMemory, Vector: v})
		if len(batch) == cap(batch) {
			if err := x.Add(ctx, batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return x
}

func BenchmarkLoadExact100k(b *testing.B) {
	x := exact100k(b)
	var buf bytes.Buffer
	if err := x.Save(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := LoadExact(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveExact100k writes a snapshot to a discarding writer: what it
// allocates is the cost of Save itself (engine Close pays it).
func BenchmarkSaveExact100k(b *testing.B) {
	x := exact100k(b)
	n := &countWriter{w: io.Discard}
	if err := x.Save(n); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(n.n)
	b.ReportAllocs()
	for b.Loop() {
		if err := x.Save(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSnapshotByteOrderPaths checks that the chunked encoding a big-endian
// machine takes writes the same bytes as the straight copy a little-endian
// one does (the file format is little endian either way), and reads them
// back to the same index; the first 20,000 entries are more than one chunk.
func TestSnapshotByteOrderPaths(t *testing.T) {
	if !littleEndian {
		t.Skip("the straight-copy path runs on little-endian machines only")
	}
	for _, p := range []Precision{Float32, Int8} {
		t.Run(p.String(), func(t *testing.T) {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(3, 4))
			x := NewExactPrecision(4, p)
			for i := range 20_000 {
				v := []float32{rng.Float32() - 0.5, rng.Float32(), -rng.Float32(), 1}
				if err := x.Add(ctx, driver.VectorEntry{ID: int64(i + 1), Namespace: "default", Pool: driver.PoolMemory, Vector: v}); err != nil {
					t.Fatal(err)
				}
			}
			var straight, chunked bytes.Buffer
			if err := x.Save(&straight); err != nil {
				t.Fatal(err)
			}
			littleEndian = false
			defer func() { littleEndian = true }()
			if err := x.Save(&chunked); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(straight.Bytes(), chunked.Bytes()) {
				t.Fatalf("the chunked encoding differs from the straight copy (%d and %d bytes)", chunked.Len(), straight.Len())
			}
			y, err := LoadExact(bytes.NewReader(chunked.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			var again bytes.Buffer
			littleEndian = true
			if err := y.Save(&again); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(straight.Bytes(), again.Bytes()) {
				t.Fatal("the index read by the chunked decoding saves other bytes")
			}
		})
	}
}

// TestLoadExactLimited: from an *io.LimitedReader a whole snapshot loads
// (the buffered read-ahead does not count against it), and a header whose
// count the snapshot cannot hold is refused before anything is allocated
// for it.
func TestLoadExactLimited(t *testing.T) {
	for _, p := range []Precision{Float32, Int8} {
		x := NewExactPrecision(8, p)
		for i := range 3000 {
			v := []float32{float32(i), 1, 2, 3, 4, 5, 6, 7}
			if err := x.Add(context.Background(), driver.VectorEntry{ID: int64(i + 1), Namespace: "default", Pool: driver.PoolMemory, Vector: v}); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := x.Save(&buf); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		y, err := LoadExact(&io.LimitedReader{R: bytes.NewReader(data), N: int64(len(data))})
		if err != nil || y.Len() != 3000 {
			t.Fatalf("%s: limited load: %v", p, err)
		}
		// The count follows the magic, the precision byte and the
		// dimension: claim a billion vectors.
		at := len(exactMagic) + 1 + 4
		bad := bytes.Clone(data)
		binary.LittleEndian.PutUint64(bad[at:], 1<<30)
		_, err = LoadExact(&io.LimitedReader{R: bytes.NewReader(bad), N: int64(len(bad))})
		if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "do not fit") {
			t.Fatalf("%s: a billion vectors claimed: %v; want ErrInvalid, do not fit", p, err)
		}
	}
}

// TestLoadExactMapped: an index loaded from a snapshot file mapped into
// memory (the engine's open) searches the file's vectors where they are,
// answers as the index that was saved, and copies them at its first write
// — the mapping is read-only, so a write to it would crash the test —
// releasing the mapping then and not before. The file is never changed.
func TestLoadExactMapped(t *testing.T) {
	for _, p := range []Precision{Float32, Int8} {
		t.Run(p.String(), func(t *testing.T) {
			ctx := context.Background()
			x, entries := randomExact(t, p, 2000, 24)
			y, released, path, saved := loadMapped(t, x)
			if fmap.Mapped && littleEndian && (!y.rows.borrowed || *released != 0) {
				t.Fatalf("the vectors were copied (borrowed %v) or the mapping released (%d) at load", y.rows.borrowed, *released)
			}
			sameSearches(t, x, y, entries)
			// Writes: replace, add, remove.
			more := []driver.VectorEntry{
				{ID: entries[5].ID, Namespace: "project:new", Pool: driver.PoolRaw, Vector: entries[9].Vector},
				{ID: 99_999, Namespace: "project:p0", Pool: driver.PoolMemory, Vector: entries[11].Vector},
			}
			for _, z := range []*Exact{x, y} {
				if err := z.Add(ctx, more...); err != nil {
					t.Fatal(err)
				}
				if err := z.Remove(ctx, entries[0].ID, entries[1].ID); err != nil {
					t.Fatal(err)
				}
			}
			if y.rows.borrowed || (fmap.Mapped && littleEndian && *released != 1) {
				t.Fatalf("after a write: borrowed %v, mapping released %d times, want once", y.rows.borrowed, *released)
			}
			sameSearches(t, x, y, entries)
			if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, saved) {
				t.Fatalf("the snapshot file changed under the index (%v)", err)
			}
		})
	}
}

// TestLoadExactBytesCorrupt: a snapshot truncated anywhere, torn (its end
// zeroed) or with any one byte flipped is refused with ErrInvalid, and the
// release function is called.
func TestLoadExactBytesCorrupt(t *testing.T) {
	x, _ := randomExact(t, Float32, 50, 8)
	var buf bytes.Buffer
	if err := x.Save(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	var cases [][]byte
	for n := 0; n < len(good); n += 7 {
		cases = append(cases, good[:n])
	}
	for at := range good {
		bad := bytes.Clone(good)
		bad[at] ^= 0x10
		cases = append(cases, bad)
	}
	torn := bytes.Clone(good)
	clear(torn[len(torn)-512:])
	cases = append(cases, torn)
	for i, b := range cases {
		released := 0
		if _, err := LoadExactBytes(b, func() { released++ }); !errors.Is(err, driver.ErrInvalid) || released != 1 {
			t.Fatalf("case %d (%d bytes): err = %v, released %d times; want ErrInvalid, once", i, len(b), err, released)
		}
	}
}

// randomExact returns an index of n random vectors of dim dimensions in
// three namespaces and pools, and its entries.
func randomExact(t *testing.T, p Precision, n, dim int) (*Exact, []driver.VectorEntry) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	x := NewExactPrecision(dim, p)
	var entries []driver.VectorEntry
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = rng.Float32() - 0.5
		}
		entries = append(entries, driver.VectorEntry{ID: int64(i + 1), Namespace: fmt.Sprintf("project:p%d", i%3), Pool: driver.Pools[i%3], Vector: v})
	}
	if err := x.Add(context.Background(), entries...); err != nil {
		t.Fatal(err)
	}
	return x, entries
}

// sameSearches checks that y answers as x, with filters, for a few of the
// entries' vectors.
func sameSearches(t *testing.T, x, y *Exact, entries []driver.VectorEntry) {
	t.Helper()
	ctx := context.Background()
	if x.Len() != y.Len() {
		t.Fatalf("%d entries, want %d", y.Len(), x.Len())
	}
	for i := 0; i < len(entries); i += len(entries) / 7 {
		for _, f := range []driver.VectorFilter{{}, {Namespaces: []string{"project:p2"}}, {Pools: []driver.Pool{driver.PoolRaw}}, {Namespaces: []string{"project:new"}}} {
			want, err1 := x.Search(ctx, entries[i].Vector, 10, f)
			got, err2 := y.Search(ctx, entries[i].Vector, 10, f)
			if err1 != nil || err2 != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("query %d, filter %+v: %v (%v), want %v (%v)", i, f, got, err2, want, err1)
			}
		}
	}
}

// TestCloseReleasesTheMapping: Close gives back a snapshot read in place
// at once (a mapped file keeps its file system busy until then) and leaves
// the index empty; an index that owns its vectors keeps them.
func TestCloseReleasesTheMapping(t *testing.T) {
	ctx := context.Background()
	x, entries := randomExact(t, Float32, 200, 16)
	y, released, _, _ := loadMapped(t, x)
	if !y.rows.borrowed {
		t.Skip("this platform copies the snapshot at load: nothing to release")
	}
	for range 2 {
		if err := y.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if *released != 1 {
		t.Fatalf("Close released the mapping %d times, want once", *released)
	}
	if hits, err := y.Search(ctx, entries[0].Vector, 5, driver.VectorFilter{}); err != nil || len(hits) != 0 || y.Len() != 0 {
		t.Fatalf("after Close: %d hits (%v), Len %d; want an empty index", len(hits), err, y.Len())
	}
	if err := x.Close(); err != nil || x.Len() != len(entries) {
		t.Fatalf("Close of an index that owns its vectors: %v, Len %d, want %d", err, x.Len(), len(entries))
	}
}

// loadMapped saves x to a file, path, and loads it back in place
// (LoadExactBytes over the mapped file); *released counts the releases of
// the mapping, and saved is what the file holds.
func loadMapped(t *testing.T, x *Exact) (y *Exact, released *int, path string, saved []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "snap")
	var buf bytes.Buffer
	if err := x.Save(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	data, unmap, err := fmap.Map(path)
	if err != nil {
		t.Fatal(err)
	}
	released = new(int)
	y, err = LoadExactBytes(data, func() { *released++; unmap() })
	if err != nil {
		t.Fatal(err)
	}
	return y, released, path, buf.Bytes()
}
