package hnsw

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/vector"
)

func saveBytes(t testing.TB, ix *Index) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := ix.Save(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mustLoad(t testing.TB, b []byte) *Index {
	t.Helper()
	ix, err := Load(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestSaveLoad(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(31, 32))
	const dim = 24
	vecs, qs := clustered(rng, 1500, 30, dim, 15)
	es := entries(vecs, 4)
	cfg := Config{M: 10, EfConstruction: 80, EfSearch: 40, Seed: 99, RepairFraction: 0.3, ExactBelow: -1, Workers: 1}
	ix := newIndex(t, dim, cfg)
	mustAdd(t, ix, es[:1200]...)
	// Leave tombstones and free slots behind: Save repairs the tombstones,
	// the free slots are saved as such.
	if err := ix.Remove(ctx, 10, 20, 30, 40); err != nil {
		t.Fatal(err)
	}
	ix.Repair()
	if err := ix.Remove(ctx, 11, 21); err != nil {
		t.Fatal(err)
	}
	data := saveBytes(t, ix)
	if st := ix.Stats(); st.Tombstones != 0 || st.Free != 6 {
		t.Fatalf("after Save: %+v, want no tombstones and 6 free slots", st)
	}
	got := mustLoad(t, data)
	checkInvariants(t, got)
	if err := got.SetWorkers(1); err != nil { // not saved
		t.Fatal(err)
	}
	if got.Config() != cfg || got.Stats() != ix.Stats() {
		t.Fatalf("loaded %+v %+v, saved %+v %+v", got.Config(), got.Stats(), cfg, ix.Stats())
	}
	for _, f := range []driver.VectorFilter{{}, {Namespaces: []string{nsName(1)}}, {Pools: []driver.Pool{driver.PoolRaw}}} {
		for _, q := range qs {
			a, b := mustSearch(t, ix, q, 10, f), mustSearch(t, got, q, 10, f)
			if !slices.Equal(a, b) {
				t.Fatalf("loaded index answers %v, saved one %v", b, a)
			}
		}
	}
	// The random state is saved too: going on after a load builds what
	// going on without one builds.
	mustAdd(t, ix, es[1200:]...)
	mustAdd(t, got, es[1200:]...)
	if !bytes.Equal(saveBytes(t, ix), saveBytes(t, got)) {
		t.Fatal("inserts after Load built a different graph")
	}

	// Empty indexes round-trip too.
	empty := mustLoad(t, saveBytes(t, newIndex(t, dim, Config{})))
	if empty.Len() != 0 {
		t.Fatal("empty index loaded non-empty")
	}
	mustAdd(t, empty, es[:10]...)
	checkInvariants(t, empty)
}

// TestLoadLimited: from an *io.LimitedReader, Load allocates at once what
// the input holds and loads the same index; a limit that cuts the index
// short is a truncated index, whatever the counts say.
func TestLoadLimited(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ix := newIndex(t, 16, Config{Seed: 7})
	mustAdd(t, ix, entries(randomUnit(rng, 600, 16), 3)...)
	data := saveBytes(t, ix)
	got, err := Load(&io.LimitedReader{R: bytes.NewReader(data), N: int64(len(data))})
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, got)
	if !bytes.Equal(saveBytes(t, got), data) {
		t.Fatal("the index loaded from a limited reader saves other bytes")
	}
	if got.vecs.Len() != 600 {
		t.Fatalf("%d vectors", got.vecs.Len())
	}
	for _, cut := range []int{len(data) / 2, len(data) - 5} {
		_, err := Load(&io.LimitedReader{R: bytes.NewReader(data), N: int64(cut)})
		if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("cut at %d of %d: %v; want a truncated index", cut, len(data), err)
		}
	}
}

// TestLoadReadsOnlyItsBytes: Load stops at the end of the index, so indexes
// can be stored back to back or inside another stream.
func TestLoadReadsOnlyItsBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := newIndex(t, 8, Config{}), newIndex(t, 8, Config{Seed: 5})
	mustAdd(t, a, entries(randomUnit(rng, 50, 8), 1)...)
	mustAdd(t, b, entries(randomUnit(rng, 70, 8), 2)...)
	var buf bytes.Buffer
	buf.Write(saveBytes(t, a))
	buf.Write(saveBytes(t, b))
	buf.WriteString("trailer")
	la, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if la.Len() != 50 || lb.Len() != 70 || buf.String() != "trailer" {
		t.Fatalf("lens %d, %d, rest %q", la.Len(), lb.Len(), buf.String())
	}
}

func TestLoadCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	ix := newIndex(t, 8, Config{M: 4})
	mustAdd(t, ix, entries(randomUnit(rng, 300, 8), 3)...)
	good := saveBytes(t, ix)

	expect := func(name string, b []byte, msg string) {
		t.Helper()
		_, err := Load(bytes.NewReader(b))
		if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), msg) {
			t.Fatalf("%s: Load = %v, want ErrInvalid saying %q", name, err, msg)
		}
	}
	expect("empty", nil, "truncated")
	expect("text", []byte("hello, this is not an index at all"), "not an HNSW index")
	for _, n := range []int{8, 20, 100, len(good) / 2, len(good) - 4, len(good) - 1} {
		expect("truncated", good[:n], "truncated")
	}
	future := slices.Clone(good)
	binary.LittleEndian.PutUint32(future[8:], formatPrecision+1)
	expect("future version", future, "version 3 is not supported")

	// A flipped byte in the payload fails the checksum, or an earlier
	// structural check; never a panic, never a silently wrong index.
	for i := len(magic) + 4; i < len(good); i += 23 {
		b := slices.Clone(good)
		b[i] ^= 0x5a
		if _, err := Load(bytes.NewReader(b)); !errors.Is(err, driver.ErrInvalid) {
			t.Fatalf("byte %d flipped: Load = %v, want ErrInvalid", i, err)
		}
	}
	// Inside a vector only the checksum can tell.
	var first [4]byte
	binary.LittleEndian.PutUint32(first[:], math.Float32bits(ix.vec(0, new([]float32))[0]))
	at := bytes.Index(good, first[:])
	if at < 0 {
		t.Fatal("first vector not found in the saved bytes")
	}
	b := slices.Clone(good)
	b[at] ^= 1
	expect("flipped vector bit", b, "checksum mismatch")
}

// errReader fails after n bytes.
type errReader struct {
	r io.Reader
	n int
}

var errDisk = errors.New("disk on fire")

func (e *errReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, errDisk
	}
	p = p[:min(len(p), e.n)]
	n, err := e.r.Read(p)
	e.n -= n
	return n, err
}

func TestLoadReadError(t *testing.T) {
	ix := newIndex(t, 4, Config{})
	mustAdd(t, ix, entries(randomUnit(rand.New(rand.NewPCG(1, 1)), 20, 4), 1)...)
	good := saveBytes(t, ix)
	_, err := Load(&errReader{r: bytes.NewReader(good), n: 200})
	if !errors.Is(err, errDisk) || errors.Is(err, driver.ErrInvalid) {
		t.Fatalf("Load = %v, want the reader's error", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errDisk }

func TestSaveWriteError(t *testing.T) {
	ix := newIndex(t, 4, Config{})
	mustAdd(t, ix, entries(randomUnit(rand.New(rand.NewPCG(1, 1)), 20, 4), 1)...)
	if err := ix.Save(failWriter{}); !errors.Is(err, errDisk) {
		t.Fatalf("Save = %v, want the writer's error", err)
	}
}

// TestSaveLoadInt8: an index storing int8 vectors is saved in format
// version 2 with its precision, loads back at that precision answering as
// it did, and finds nearly the float32 exact top 10 on clustered data.
func TestSaveLoadInt8(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(51, 52))
	const dim = 64
	vecs, qs := clustered(rng, 3000, 50, dim, 30)
	es := entries(vecs, 3)
	cfg := Config{Precision: vector.Int8, Workers: 1}
	ix := newIndex(t, dim, cfg)
	mustAdd(t, ix, es...)
	if err := ix.Remove(ctx, 5, 6, 7); err != nil {
		t.Fatal(err)
	}
	data := saveBytes(t, ix)
	if v := binary.LittleEndian.Uint32(data[len(magic):]); v != formatPrecision {
		t.Fatalf("an int8 index was saved as format version %d", v)
	}
	got := mustLoad(t, data)
	checkInvariants(t, got)
	if got.Config().Precision != vector.Int8 || got.Len() != ix.Len() {
		t.Fatalf("loaded %+v with %d entries, saved %d at int8", got.Config(), got.Len(), ix.Len())
	}
	exact := vector.NewExact(dim)
	if err := exact.Add(ctx, es...); err != nil {
		t.Fatal(err)
	}
	if err := exact.Remove(ctx, 5, 6, 7); err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if a, b := mustSearch(t, ix, q, 10, driver.VectorFilter{}), mustSearch(t, got, q, 10, driver.VectorFilter{}); !slices.Equal(a, b) {
			t.Fatalf("loaded index answers %v, saved one %v", b, a)
		}
	}
	r := meanRecall(t, got, exact, qs, driver.VectorFilter{})
	t.Logf("int8 HNSW: recall@10 against the float32 exact index %.4f; %d bytes against %d at float32",
		r, got.MemoryBytes(), float32Bytes(t, dim, es))
	if r < 0.95 {
		t.Fatalf("recall@10 %.4f, want ≥ 0.95", r)
	}
	// A float32 index is still written as version 1.
	f := newIndex(t, dim, Config{})
	mustAdd(t, f, es[:20]...)
	if v := binary.LittleEndian.Uint32(saveBytes(t, f)[len(magic):]); v != formatVersion {
		t.Fatalf("a float32 index was saved as format version %d", v)
	}
}

func float32Bytes(t *testing.T, dim int, es []driver.VectorEntry) int64 {
	ix := newIndex(t, dim, Config{Workers: 1})
	mustAdd(t, ix, es...)
	return ix.MemoryBytes()
}
