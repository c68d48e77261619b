package core_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memos-go/memos/core"
)

// Query feedback finds a memory written in the words of the best hits
// rather than of the question, and only when it is on.
func TestQueryFeedbackFindsTheAnswersWords(t *testing.T) {
	ctx := context.Background()
	contents := []string{
		"Caroline paints sunsets on canvas",
		"Caroline paints lakes on a big canvas",
		"a new canvas arrived for Caroline today",
		"the train to Lisbon was late again",
		"Bob fixed the kitchen sink",
		"the weather was cold and grey",
		"we ordered pizza for dinner",
		"the meeting moved to Thursday",
		"my phone battery died",
		"the garden needs water",
	}
	run := func(q string, cfg core.SearchConfig) (*core.Explanation, []int64) {
		e := openAt(t, filepath.Join(t.TempDir(), "m.db"), core.Options{Search: cfg})
		defer e.Close()
		var ins []core.Input
		for _, c := range contents {
			ins = append(ins, core.Input{Content: c})
		}
		ms, err := e.RememberBatch(ctx, ins)
		if err != nil {
			t.Fatal(err)
		}
		x, err := e.Explain(ctx, core.SearchRequest{Query: q, NoExpand: true})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
		return x, ids
	}
	x, ids := run("who paints", core.SearchConfig{FeedbackTerms: 2})
	if !slices.Equal(x.Feedback, []string{"canvas", "caroline"}) {
		t.Fatalf("feedback terms = %v, want [canvas caroline]", x.Feedback)
	}
	got := hitIDs(x.Result)
	if len(got) < 3 || !slices.Equal(got[:2], ids[:2]) || !slices.Contains(got, ids[2]) {
		t.Fatalf("with feedback: %v; want %v first, then %d", got, ids[:2], ids[2])
	}
	for _, c := range x.Candidates {
		if c.ID == ids[2] && (c.FeedbackRank == 0 || c.KeywordRank != 0 || c.Gate != "kept") {
			t.Fatalf("memory found by feedback explained as %+v", c)
		}
	}
	x, _ = run("who paints", core.SearchConfig{})
	if x.Feedback != nil || slices.Contains(hitIDs(x.Result), ids[2]) {
		t.Fatalf("feedback off by default: terms %v, hits %v", x.Feedback, hitIDs(x.Result))
	}
	// A query over the term limit is left alone, unless its first pass is weak.
	x, _ = run("who paints canvas", core.SearchConfig{FeedbackTerms: 2, FeedbackMaxQueryTerms: 1, FeedbackDocs: 2})
	if x.Feedback != nil {
		t.Fatalf("feedback ran for a query over its term limit: %v", x.Feedback)
	}
	x, _ = run("who paints lakes", core.SearchConfig{FeedbackTerms: 2, FeedbackMaxQueryTerms: 1, FeedbackDocs: 3})
	if x.Feedback == nil {
		t.Fatalf("feedback did not run after a weak first pass")
	}
}
