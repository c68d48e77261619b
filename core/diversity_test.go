package core_test

import (
	"context"
	"slices"
	"testing"

	"github.com/memos-go/memos/core"
)

// TestCountingQuestionsSpreadOverSessions checks session diversity end to
// end on a store: by default a question that counts ("how many …") gets
// its first places from several sessions (b's weaker turn rises above a's
// third, discounted twice), while any other question, and a
// counting one with diversity off, keeps the score order, where one
// session takes the first places.
func TestCountingQuestionsSpreadOverSessions(t *testing.T) {
	ctx := context.Background()
	in := []core.Input{
		{Content: "the wedding at the vineyard was a lovely wedding, a wedding to remember", Session: "a"},
		{Content: "at the vineyard wedding the wedding cake was a wedding dream", Session: "a"},
		{Content: "the wedding band played all night at the vineyard wedding", Session: "a"},
		{Content: "my friend's wedding on the beach last month", Session: "b"},
	}
	search := func(e *core.Engine, q string) []string {
		t.Helper()
		res, err := e.Search(ctx, core.SearchRequest{Query: q, Mode: core.ModeKeyword, Limit: 4, NoExpand: true})
		if err != nil {
			t.Fatal(err)
		}
		var sess []string
		for _, h := range res.Hits {
			sess = append(sess, h.Memory.Session)
		}
		return sess
	}
	for _, tc := range []struct {
		name string
		cfg  core.SearchConfig
		q    string
		want []string
	}{
		{"counting", core.SearchConfig{}, "How many weddings have I been to?", []string{"a", "a", "b", "a"}},
		{"not counting", core.SearchConfig{}, "Which weddings have I been to?", []string{"a", "a", "a", "b"}},
		{"off", core.SearchConfig{SessionDiversity: -1}, "How many weddings have I been to?", []string{"a", "a", "a", "b"}},
		{"all", core.SearchConfig{SessionDiversityQueries: core.DiversityAll}, "Which weddings have I been to?", []string{"a", "a", "b", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := openAt(t, t.TempDir()+"/memory.db", core.Options{Search: tc.cfg})
			defer e.Close()
			for _, x := range in {
				x.Type = core.TypeTurn
				remember(t, e, x)
			}
			if got := search(e, tc.q); !slices.Equal(got, tc.want) {
				t.Fatalf("%q: sessions %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}
