package core_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
)

// wordReranker scores a text by the position of the first of its words
// found in the text: words[0] best; texts with none score 0.
type wordReranker struct {
	words []string
	calls atomic.Int32
	texts atomic.Int32 // texts in the last call
}

func (r *wordReranker) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	r.calls.Add(1)
	r.texts.Store(int32(len(texts)))
	out := make([]float64, len(texts))
	for i, t := range texts {
		for j, w := range r.words {
			if strings.Contains(t, w) {
				out[i] = float64(len(r.words) - j)
				break
			}
		}
	}
	return out, nil
}

// brokenReranker fails in the way its field says.
type brokenReranker struct{ how string }

func (r brokenReranker) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	switch r.how {
	case "hang":
		<-ctx.Done() // honours its deadline, as the contract asks
		return nil, ctx.Err()
	case "short":
		return make([]float64, len(texts)-1), nil
	}
	return nil, errors.New("model not loaded")
}

var appleNotes = []string{
	"apple apple apple pie recipe with cinnamon",
	"apple apple crumble for dessert",
	"the apple orchard visit in autumn",
	"apple stock price fell",
}

func openWithReranker(t *testing.T, r core.Reranker, cfg core.SearchConfig) (*core.Engine, []*core.Memory) {
	t.Helper()
	e := openAt(t, filepath.Join(t.TempDir(), "memory.db"), core.Options{Reranker: r, Search: cfg})
	t.Cleanup(func() { e.Close() })
	var ms []*core.Memory
	for _, s := range appleNotes {
		ms = append(ms, remember(t, e, core.Input{Content: s}))
	}
	return e, ms
}

func TestRerankerOrdersTheTopCandidates(t *testing.T) {
	ctx := context.Background()
	plain, ms := openWithReranker(t, nil, core.SearchConfig{})
	req := core.SearchRequest{Query: "apple", NoExpand: true}
	base, err := plain.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Hits) != len(appleNotes) || base.Hits[0].Memory.ID == ms[2].ID || base.Hits[1].Memory.ID == ms[3].ID {
		t.Fatalf("without a reranker: %v, want all four, not already in the reranker's order", ids(base))
	}

	r := &wordReranker{words: []string{"orchard", "stock"}}
	e, ms := openWithReranker(t, r, core.SearchConfig{})
	res, err := e.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	got := ids(res)
	if got[0] != ms[2].ID || got[1] != ms[3].ID {
		t.Fatalf("reranked = %v, want %d (orchard) then %d (stock) first", got, ms[2].ID, ms[3].ID)
	}
	for i := 1; i < len(res.Hits); i++ {
		if res.Hits[i].Score >= res.Hits[i-1].Score {
			t.Fatalf("scores do not fall with rank: %v", res.Hits)
		}
	}

	x, err := e.Explain(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.Rerank, "reranked the top 4") {
		t.Fatalf("explain rerank note = %q", x.Rerank)
	}
	for _, c := range x.Candidates {
		if c.RerankScore == nil {
			t.Fatalf("candidate %d has no reranker score in explain", c.ID)
		}
		want := map[int64]float64{ms[2].ID: 2, ms[3].ID: 1}[c.ID]
		if *c.RerankScore != want {
			t.Fatalf("candidate %d: reranker score %v, want %v", c.ID, *c.RerankScore, want)
		}
	}
}

func TestRerankTopBoundsWhatTheRerankerSees(t *testing.T) {
	ctx := context.Background()
	req := core.SearchRequest{Query: "apple", NoExpand: true}
	plain, _ := openWithReranker(t, nil, core.SearchConfig{})
	base, err := plain.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	first, last := base.Hits[0].Memory, base.Hits[len(base.Hits)-1].Memory
	// The reranker prefers the fused order's last memory most, its first least.
	r := &wordReranker{words: []string{last.Content}}
	e, _ := openWithReranker(t, r, core.SearchConfig{RerankTop: 2})
	res, err := e.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r.texts.Load() != 2 {
		t.Fatalf("the reranker saw %d texts, want 2", r.texts.Load())
	}
	// The last one is outside the top 2: the reranker cannot lift it.
	if got := ids(res); fmt.Sprint(got) != fmt.Sprint(ids(base)) || got[0] != first.ID {
		t.Fatalf("result = %v, want the fused order %v", got, ids(base))
	}

	off, _ := openWithReranker(t, r, core.SearchConfig{RerankTop: -1})
	calls := r.calls.Load()
	if _, err := off.Search(ctx, req); err != nil {
		t.Fatal(err)
	}
	if r.calls.Load() != calls {
		t.Fatal("search.rerank_top -1 still called the reranker")
	}
}

func TestFailingRerankerKeepsTheFusedOrder(t *testing.T) {
	ctx := context.Background()
	plain, _ := openWithReranker(t, nil, core.SearchConfig{})
	req := core.SearchRequest{Query: "apple"}
	base, err := plain.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ how, note string }{
		{"error", "model not loaded"},
		{"hang", "no answer within search.rerank_timeout (50ms)"},
		{"short", "3 scores for 4 texts"},
	} {
		t.Run(tc.how, func(t *testing.T) {
			e, _ := openWithReranker(t, brokenReranker{tc.how}, core.SearchConfig{RerankTimeout: 50 * time.Millisecond})
			res, err := e.Search(ctx, req)
			if err != nil {
				t.Fatalf("a failing reranker made the search fail: %v", err)
			}
			if fmt.Sprint(ids(res)) != fmt.Sprint(ids(base)) {
				t.Fatalf("result %v, want the fused order %v", ids(res), ids(base))
			}
			x, err := e.Explain(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(x.Rerank, "kept the fused order") || !strings.Contains(x.Rerank, tc.note) {
				t.Fatalf("explain rerank note = %q, want the failure (%q)", x.Rerank, tc.note)
			}
			for _, c := range x.Candidates {
				if c.RerankScore != nil {
					t.Fatalf("candidate %d shows a reranker score after a failure", c.ID)
				}
			}
		})
	}
}

func TestSearchConfigRejectsBadRerankSettings(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []core.SearchConfig{{RerankTop: 1001}, {RerankTimeout: -time.Second}} {
		b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "memory.db")})
		if err != nil {
			t.Fatal(err)
		}
		e, err := core.Open(ctx, core.Options{Backend: b, Search: cfg})
		if err == nil {
			e.Close()
		}
		b.Close()
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "search.rerank_") {
			t.Fatalf("open with %+v: %v, want ErrInvalid naming the key", cfg, err)
		}
	}
}

// flakyReranker fails while down is set, and counts its calls.
type flakyReranker struct {
	wordReranker
	down atomic.Bool
}

func (r *flakyReranker) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	if r.down.Load() {
		r.calls.Add(1)
		return nil, errors.New("connection refused")
	}
	return r.wordReranker.Rerank(ctx, query, texts)
}

func TestFailingRerankerIsPaused(t *testing.T) {
	ctx := context.Background()
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).UnixNano())
	r := &flakyReranker{wordReranker: wordReranker{words: []string{"orchard"}}}
	r.down.Store(true)
	path := filepath.Join(t.TempDir(), "memory.db")
	e := openAt(t, path, core.Options{Reranker: r, Now: func() time.Time { return time.Unix(0, now.Load()) },
		Search: core.SearchConfig{RerankPauseAfter: 2, RerankPause: time.Minute}})
	defer e.Close()
	for _, s := range appleNotes {
		remember(t, e, core.Input{Content: s})
	}
	req := core.SearchRequest{Query: "apple", NoExpand: true}
	note := func() string {
		t.Helper()
		x, err := e.Explain(ctx, req)
		if err != nil {
			t.Fatalf("explain: %v", err)
		}
		return x.Rerank
	}
	search := func() {
		t.Helper()
		if _, err := e.Search(ctx, req); err != nil {
			t.Fatalf("search with a failing reranker: %v", err)
		}
	}
	search()
	if n := note(); !strings.Contains(n, "reranker failed") || !strings.Contains(n, "connection refused") {
		t.Fatalf("after one failure the note is %q, want the failure", n)
	}
	// Two failures in a row: the next searches skip it.
	for range 3 {
		search()
	}
	if got := r.calls.Load(); got != 2 {
		t.Fatalf("the reranker was called %d times, want 2 (then paused)", got)
	}
	if n := note(); !strings.Contains(n, "reranker skipped") || !strings.Contains(n, "paused after 2 failures") ||
		!strings.Contains(n, "2026-12-01T09:01:00Z") {
		t.Fatalf("while paused the note is %q, want the pause and when it ends", n)
	}
	// After the pause one search tries again; still down: paused again at once.
	now.Add(int64(61 * time.Second))
	search()
	search()
	if got := r.calls.Load(); got != 3 {
		t.Fatalf("after the pause the reranker was called %d times in total, want 3 (one probe)", got)
	}
	// It comes back: after the next pause the probe succeeds and it stays on.
	r.down.Store(false)
	now.Add(int64(61 * time.Second))
	search()
	if n := note(); !strings.Contains(n, "reranked the top") {
		t.Fatalf("after the reranker came back the note is %q, want it reranked", n)
	}
	// The count starts again: one new failure does not pause it.
	r.down.Store(true)
	search()
	r.down.Store(false)
	if n := note(); !strings.Contains(n, "reranked the top") {
		t.Fatalf("one failure after recovering paused the reranker: note %q", n)
	}
}

func TestRerankPauseCanBeTurnedOff(t *testing.T) {
	ctx := context.Background()
	r := &flakyReranker{}
	r.down.Store(true)
	e, _ := openWithReranker(t, r, core.SearchConfig{RerankPauseAfter: -1})
	for range 5 {
		if _, err := e.Search(ctx, core.SearchRequest{Query: "apple"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.calls.Load(); got != 5 {
		t.Fatalf("rerank_pause_after -1: the reranker was called %d times in 5 searches, want 5", got)
	}
}
