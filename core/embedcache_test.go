package core_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// countingEmbedder records every text it is asked to embed. With nanOnce
// set, the first vector it makes for that text holds a NaN.
type countingEmbedder struct {
	core.Embedder
	mu      sync.Mutex
	texts   []string
	nanOnce string
	closed  bool
}

func newCounting(t *testing.T, dim int) *countingEmbedder {
	t.Helper()
	h, err := hash.Open(context.Background(), hash.Config{Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	return &countingEmbedder{Embedder: h}
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := c.Embedder.Embed(ctx, texts)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts = append(c.texts, texts...)
	for i, t := range texts {
		if err == nil && t == c.nanOnce {
			vs[i][0] = float32(math.NaN())
			c.nanOnce = ""
		}
	}
	return vs, err
}

func (c *countingEmbedder) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

// embedded returns the texts embedded since the last call.
func (c *countingEmbedder) embedded() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.texts
	c.texts = nil
	return out
}

func openCounting(t *testing.T, size int) (*core.Engine, *countingEmbedder) {
	t.Helper()
	ce := newCounting(t, 64)
	e := openAt(t, filepath.Join(t.TempDir(), "memory.db"), core.Options{Embedder: ce, EmbedCacheSize: size})
	t.Cleanup(func() { e.Close() })
	ce.embedded() // forget what Open did
	return e, ce
}

func TestEmbedCacheSkipsKnownTexts(t *testing.T) {
	ctx := context.Background()
	e, ce := openCounting(t, 0)
	remember(t, e, core.Input{Content: "Alice prefers open-source tools"})
	remember(t, e, core.Input{Content: "Alice prefers open-source tools"})
	if got := ce.embedded(); !slices.Equal(got, []string{"Alice prefers open-source tools"}) {
		t.Errorf("embedder saw %q; want the text once", got)
	}
	if _, err := e.RememberBatch(ctx, []core.Input{{Content: "b"}, {Content: "c"}, {Content: "b"}, {Content: "Alice prefers open-source tools"}}); err != nil {
		t.Fatal(err)
	}
	if got := ce.embedded(); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("embedder saw %q; want each new text once: [b c]", got)
	}
	for range 2 {
		if _, err := e.Search(ctx, core.SearchRequest{Query: "tools alice likes", Mode: core.ModeVector}); err != nil {
			t.Fatal(err)
		}
	}
	if got := ce.embedded(); !slices.Equal(got, []string{"tools alice likes"}) {
		t.Errorf("embedder saw %q; want the query once", got)
	}
	st := e.EmbedCacheStats()
	want := core.EmbedCacheStats{Entries: 4, Capacity: core.DefaultEmbedCacheSize, Hits: 3, Misses: 4}
	if st != want {
		t.Errorf("EmbedCacheStats = %+v, want %+v", st, want)
	}
}

func TestEmbedCacheIsBoundedLRU(t *testing.T) {
	e, ce := openCounting(t, 2)
	for _, s := range []string{"a", "b", "a", "c", "a", "b"} {
		remember(t, e, core.Input{Content: s})
	}
	// a, b: misses; a: hit (a is newest); c: miss, evicts b; a: hit; b: miss, evicts c.
	if got := ce.embedded(); !slices.Equal(got, []string{"a", "b", "c", "b"}) {
		t.Errorf("embedder saw %q; want [a b c b]", got)
	}
	if st := e.EmbedCacheStats(); st.Entries != 2 || st.Capacity != 2 || st.Hits != 2 || st.Misses != 4 {
		t.Errorf("EmbedCacheStats = %+v", st)
	}
}

func TestEmbedCacheOff(t *testing.T) {
	e, ce := openCounting(t, -1)
	remember(t, e, core.Input{Content: "a"})
	remember(t, e, core.Input{Content: "a"})
	if got := ce.embedded(); len(got) != 2 {
		t.Errorf("embedder saw %q; want the text twice without a cache", got)
	}
	if st := e.EmbedCacheStats(); st != (core.EmbedCacheStats{}) {
		t.Errorf("EmbedCacheStats = %+v, want zero", st)
	}
}

func TestEmbedCacheHandsOutCopies(t *testing.T) {
	e, _ := openCounting(t, 0)
	m1 := remember(t, e, core.Input{Content: "the same text"})
	want := slices.Clone(m1.Embedding.Vector)
	for i := range m1.Embedding.Vector {
		m1.Embedding.Vector[i] = 42
	}
	m2 := remember(t, e, core.Input{Content: "the same text"})
	if !slices.Equal(m2.Embedding.Vector, want) {
		t.Error("changing a returned vector changed the cached one")
	}
	got, err := e.Get(context.Background(), m1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Embedding.Vector, want) {
		t.Error("the stored vector differs from the one embedded")
	}
}

func TestEmbedCacheKeepsNoBrokenVector(t *testing.T) {
	e, ce := openCounting(t, 0)
	ce.nanOnce = "flaky"
	if _, err := e.Remember(context.Background(), core.Input{Content: "flaky"}); err == nil {
		t.Fatal("a NaN vector was accepted")
	}
	m := remember(t, e, core.Input{Content: "flaky"})
	if len(m.Embedding.Vector) != 64 {
		t.Fatalf("vector of %d dims", len(m.Embedding.Vector))
	}
	if got := ce.embedded(); len(got) != 2 {
		t.Errorf("embedder saw %q; the broken vector must not be served from the cache", got)
	}
}

func TestEmbedCacheClosesEmbedder(t *testing.T) {
	ce := newCounting(t, 64)
	e := openAt(t, filepath.Join(t.TempDir(), "memory.db"), core.Options{Embedder: ce})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if !ce.closed {
		t.Error("closing the engine did not close the embedder behind the cache")
	}
}

func TestEmbedCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	e, _ := openCounting(t, 8)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 8 {
				text := fmt.Sprintf("note %d", (g+i)%12)
				m, err := e.Remember(ctx, core.Input{Content: text})
				if err != nil {
					errs <- err
					return
				}
				if m.Embedding.Model != e.Model().ID {
					errs <- errors.New("wrong model recorded")
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := e.EmbedCacheStats(); st.Entries > 8 || st.Hits+st.Misses != 64 {
		t.Errorf("EmbedCacheStats = %+v: want at most 8 entries and 64 lookups", st)
	}
}
