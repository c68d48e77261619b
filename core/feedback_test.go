package core_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memos-go/memos/core"
)

// Query feedback finds a memory written in the words of the best hits
// rather than of the question: by default only over documents, and over
// other memories when feedback_queries says so.
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
	run := func(q string, cfg core.SearchConfig, typ ...core.Type) (*core.Explanation, []int64) {
		e := openAt(t, filepath.Join(t.TempDir(), "m.db"), core.Options{Search: cfg})
		defer e.Close()
		var ins []core.Input
		for i, c := range contents {
			in := core.Input{Content: c, Type: core.TypeDocument}
			if i < len(typ) {
				in.Type = typ[i]
			}
			ins = append(ins, in)
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
	x, _ = run("who paints", core.SearchConfig{FeedbackTerms: -1})
	if x.Feedback != nil || slices.Contains(hitIDs(x.Result), ids[2]) {
		t.Fatalf("feedback_terms -1 turns it off: terms %v, hits %v", x.Feedback, hitIDs(x.Result))
	}
	// By default it runs over documents, and not when most of the best
	// hits are other memories (two of the three here are turns).
	x, _ = run("who paints", core.SearchConfig{})
	if len(x.Feedback) == 0 {
		t.Fatalf("feedback did not run by default over documents")
	}
	turns := []core.Type{core.TypeTurn, core.TypeDocument, core.TypeTurn}
	x, _ = run("who paints", core.SearchConfig{FeedbackTerms: 2}, turns...)
	if x.Feedback != nil || slices.Contains(hitIDs(x.Result), ids[2]) {
		t.Fatalf("feedback ran over turns: terms %v, hits %v", x.Feedback, hitIDs(x.Result))
	}
	x, _ = run("who paints", core.SearchConfig{FeedbackTerms: 2, FeedbackQueries: core.FeedbackAll}, turns...)
	if !slices.Equal(x.Feedback, []string{"canvas", "caroline"}) {
		t.Fatalf("feedback_queries all over turns: terms %v", x.Feedback)
	}
	// With feedback_queries short, a query over the term limit is left
	// alone, unless its first pass is weak; the memories' type does not
	// matter.
	short := core.SearchConfig{FeedbackTerms: 2, FeedbackQueries: core.FeedbackShort, FeedbackMaxQueryTerms: 1}
	x, _ = run("who paints", short, turns...)
	if len(x.Feedback) == 0 {
		t.Fatalf("feedback_queries short did not run for a short query over turns")
	}
	short.FeedbackDocs = 2
	x, _ = run("who paints canvas", short)
	if x.Feedback != nil {
		t.Fatalf("feedback ran for a query over its term limit: %v", x.Feedback)
	}
	short.FeedbackDocs = 3
	x, _ = run("who paints lakes", short)
	if x.Feedback == nil {
		t.Fatalf("feedback did not run after a weak first pass")
	}
}
