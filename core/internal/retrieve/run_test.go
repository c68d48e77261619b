package retrieve

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// These tests run the pipeline over in-memory dependencies: no store is
// opened, no engine exists.

// memStore is a store of record in memory: current versions only, a
// keyword index that ranks by how many of the query's terms a memory
// contains, edges, and no session index (expansion then uses Sessions).
type memStore struct {
	mems  map[int64]*driver.Memory
	edges map[int64][]driver.Edge
}

func (s *memStore) SearchKeyword(ctx context.Context, q query.Node, f driver.Filter, n int) ([]driver.Hit, error) {
	cq, err := query.Compile(q)
	if err != nil {
		return nil, err
	}
	var hits []driver.Hit
	err = s.View(ctx, func(tx driver.ReadTx) error {
		return tx.Scan(driver.ScanOptions{Filter: f}, func(m *driver.Memory) error {
			if d := text.NewDoc(m.Content); cq.Match(d) {
				hits = append(hits, driver.Hit{ID: m.ID, Score: float64(len(cq.Leaves(d)))})
			}
			return nil
		})
	})
	slices.SortStableFunc(hits, func(a, b driver.Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return int(a.ID - b.ID)
	})
	return hits[:min(n, len(hits))], err
}

func (s *memStore) View(ctx context.Context, fn func(tx driver.ReadTx) error) error {
	return fn(memTx{s})
}

type memTx struct{ s *memStore }

func (t memTx) Get(id int64, v int) (*driver.Memory, error) {
	m, ok := t.s.mems[id]
	if !ok || (v != 0 && v != m.Version) {
		return nil, driver.ErrNotFound
	}
	c := *m
	return &c, nil
}

func (t memTx) History(id int64) ([]*driver.Memory, error) {
	m, err := t.Get(id, 0)
	if err != nil {
		return nil, err
	}
	return []*driver.Memory{m}, nil
}

func (t memTx) Scan(opts driver.ScanOptions, fn func(*driver.Memory) error) error {
	ids := make([]int64, 0, len(t.s.mems))
	for id := range t.s.mems {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	f := opts.Filter
	for _, id := range ids {
		m, _ := t.Get(id, 0)
		switch {
		case f.Namespaces != nil && !slices.Contains(f.Namespaces, m.Namespace),
			f.Statuses != nil && !slices.Contains(f.Statuses, m.Status):
			continue
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

func (t memTx) Edges(id int64) ([]driver.Edge, error) {
	if _, ok := t.s.mems[id]; !ok {
		return nil, driver.ErrNotFound
	}
	return t.s.edges[id], nil
}

func (t memTx) Seq() (uint64, error)                                     { return 1, nil }
func (t memTx) Changes(since uint64, fn func(driver.Change) error) error { return nil }
func (t memTx) Meta(key string) (string, error)                          { return "", driver.ErrNotFound }

// kitten is a conversation about a kitten (memories 1–5, one session, in
// order) and a fact (10) that memory 1 supports.
func kitten(t *testing.T, cfg SearchConfig, r driver.Reranker) (Deps, time.Time) {
	t.Helper()
	now := time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)
	s := &memStore{mems: map[int64]*driver.Memory{}, edges: map[int64][]driver.Edge{}}
	add := func(id int64, session, content string) {
		at := now.Add(time.Duration(id-100) * time.Minute)
		s.mems[id] = &driver.Memory{ID: id, Namespace: driver.DefaultNamespace, Pool: driver.PoolRaw, Type: driver.TypeTurn,
			Content: content, Significance: 5, Trust: driver.Trust{Level: driver.TrustInferred, Score: 0.8},
			Status: driver.StatusActive, Session: session, CreatedAt: at, UpdatedAt: at, Version: 1}
	}
	add(1, "s1", "Ann: we adopted a kitten called Miso")
	add(2, "s1", "Bob: lovely!")
	add(3, "s1", "Bob: what colour is she?")
	add(4, "s1", "Ann: grey with white paws")
	add(5, "s1", "Ann: anyway, how was the train?")
	add(10, "", "Miso sees the vet on Elm Street")
	e := driver.Edge{From: 1, To: 10, Type: driver.EdgeSupports, Weight: 1, CreatedAt: now}
	s.edges[1], s.edges[10] = []driver.Edge{e}, []driver.Edge{e}
	st, err := NewState(cfg, r)
	if err != nil {
		t.Fatal(err)
	}
	return Deps{Config: &st.Config, Store: s, Reranker: st.Reranker, Breaker: &st.Breaker, Sessions: &st.Sessions,
		Scope: []string{driver.DefaultNamespace}, Now: func() time.Time { return now }}, now
}

func hitIDs(res *SearchResult) []int64 {
	var ids []int64
	for _, h := range res.Hits {
		ids = append(ids, h.Memory.ID)
	}
	return ids
}

// TestExpandOverMemory: the one memory the keyword search finds brings its
// session neighbours (from the session index: this store has no
// SessionReader) and the memory its edge supports, scored from the seed.
func TestExpandOverMemory(t *testing.T) {
	d, _ := kitten(t, SearchConfig{}, nil)
	p, err := Run(context.Background(), d, SearchRequest{Query: "kitten", Mode: ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	res := p.Result()
	// seed s; session +1: s·0.6, the edge: s·0.5, session +2: s·0.6/2.
	if got, want := hitIDs(res), []int64{1, 2, 10, 3}; !slices.Equal(got, want) {
		t.Fatalf("hits %v, want %v", got, want)
	}
	origins := []string{"", "session neighbour of 1 (+1)", "1 supports it", "session neighbour of 1 (+2)"}
	for i, h := range res.Hits {
		if h.Origin != origins[i] {
			t.Errorf("hit %d (memory %d): origin %q, want %q", i+1, h.Memory.ID, h.Origin, origins[i])
		}
	}
	if res.Hits[1].Score >= res.Hits[0].Score || res.Hits[3].Score >= res.Hits[2].Score {
		t.Errorf("expansions must score below their seed, in order: %+v", res.Hits)
	}

	// No expansion asked: the keyword hit alone.
	p, err = Run(context.Background(), d, SearchRequest{Query: "kitten", Mode: ModeKeyword, NoExpand: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(p.Result()); !slices.Equal(got, []int64{1}) {
		t.Fatalf("without expansion: hits %v, want [1]", got)
	}
}

// reverser scores texts in reverse order, or fails with err.
type reverser struct {
	calls int
	err   error
}

func (r *reverser) Rerank(ctx context.Context, q string, texts []string) ([]float64, error) {
	r.calls++
	if r.err != nil {
		return nil, r.err
	}
	out := make([]float64, len(texts))
	for i := range texts {
		out[i] = float64(i)
	}
	return out, nil
}

// TestRerankOverMemory: the reranker decides the order of the best
// candidates; one that keeps failing is paused by the breaker and the
// search keeps the fused order.
func TestRerankOverMemory(t *testing.T) {
	ctx := context.Background()
	req := SearchRequest{Query: "Ann", Mode: ModeKeyword, NoExpand: true}
	d, _ := kitten(t, SearchConfig{}, nil)
	plain, err := Explain(ctx, d, req)
	if err != nil {
		t.Fatal(err)
	}
	fused := hitIDs(plain.Result)
	if len(fused) < 2 || plain.Rerank != "" {
		t.Fatalf("without a reranker: hits %v, note %q", fused, plain.Rerank)
	}

	d, _ = kitten(t, SearchConfig{}, &reverser{})
	x, err := Explain(ctx, d, req)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(fused)
	slices.Reverse(want)
	if got := hitIDs(x.Result); !slices.Equal(got, want) || !strings.HasPrefix(x.Rerank, "reranked the top") {
		t.Fatalf("reranked: hits %v (note %q), want %v", got, x.Rerank, want)
	}

	down := &reverser{err: errors.New("connection refused")}
	d, _ = kitten(t, SearchConfig{RerankPauseAfter: 1, RerankPause: time.Hour}, down)
	for i, note := range []string{"reranker failed", "reranker skipped"} {
		x, err := Explain(ctx, d, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := hitIDs(x.Result); !slices.Equal(got, fused) || !strings.HasPrefix(x.Rerank, note) {
			t.Fatalf("search %d with a failing reranker: hits %v (note %q), want %v (%s…)", i+1, got, x.Rerank, fused, note)
		}
	}
	if down.calls != 1 {
		t.Fatalf("the paused reranker was called %d times, want 1", down.calls)
	}
}
