package retrieve

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

func TestFeedbackTermsWeighsSharedContentWords(t *testing.T) {
	docs := []string{
		"Melanie paints the lake at sunrise, the lake again",
		"Melanie went to the lake with her kids",
		"sunrise pottery class",
	}
	hits := []driver.Hit{{ID: 1, Score: 3}, {ID: 2, Score: 2}, {ID: 3, Score: 1}}
	// "lake" (two docs, three times, the best hits) first; "sunrise" makes
	// up more of its documents than "melanie"; query terms, their stems
	// ("paint"), stop words, short and one-document words never come back.
	got := feedbackTerms([]string{"paints"}, hits, docs, 3)
	if want := []string{"lake", "sunrise", "melanie"}; !slices.Equal(got, want) {
		t.Fatalf("feedbackTerms = %v, want %v", got, want)
	}
	if got := feedbackTerms(nil, hits[:1], docs[:1], 1); !slices.Equal(got, []string{"lake"}) {
		t.Fatalf("one document: %v", got)
	}
	if got := feedbackTerms([]string{"lake", "melanie", "sunrise"}, hits, docs, 5); len(got) != 0 {
		t.Fatalf("no shared new words: %v", got)
	}
}

func TestScoreFusionNormalisesEachList(t *testing.T) {
	cfg := SearchConfig{Fusion: FusionScore, KeywordWeight: 1, VectorWeight: 0.5, RRFK: 20}
	kw := []driver.Hit{{ID: 1, Score: 8}, {ID: 2, Score: 2}}
	vec := []driver.Hit{{ID: 2, Score: 0.9}, {ID: 3, Score: 0.7}, {ID: 1, Score: 0.5}}
	by := map[int64]*candidate{}
	for _, c := range fuse(kw, vec, nil, &cfg) {
		by[c.id] = c
	}
	// keyword: share of the best; vector: place between the lowest and 1.
	if !near(by[1].fused, 1+0) || !near(by[2].fused, 0.25+0.5*0.8) || !near(by[3].fused, 0.5*0.4) {
		t.Fatalf("fused 1 = %v, 2 = %v, 3 = %v", by[1].fused, by[2].fused, by[3].fused)
	}
	// A flat vector list adds nothing; a flat keyword list counts fully.
	if got := cfg.contributions([]driver.Hit{{ID: 1, Score: 0.4}, {ID: 2, Score: 0.4}}, 0.5, true); got[0] != 0 || got[1] != 0 {
		t.Fatalf("flat vector list: %v", got)
	}
	if got := cfg.contributions([]driver.Hit{{ID: 1, Score: 3}, {ID: 2, Score: 3}}, 1, false); got[0] != 1 || got[1] != 1 {
		t.Fatalf("flat keyword list: %v", got)
	}
}

func TestFeedbackDefaultsAndValidation(t *testing.T) {
	c := DefaultSearchConfig()
	if c.FeedbackTerms != 5 || c.FeedbackQueries != FeedbackDocuments || c.FeedbackDocs != 5 || c.FeedbackMaxQueryTerms != 4 {
		t.Fatalf("defaults: terms %d for %q, docs %d, max query terms %d", c.FeedbackTerms, c.FeedbackQueries, c.FeedbackDocs, c.FeedbackMaxQueryTerms)
	}
	for _, ok := range []string{FeedbackDocuments, FeedbackShort, FeedbackAll} {
		if err := (SearchConfig{FeedbackQueries: ok}).withDefaults().validate(); err != nil {
			t.Errorf("feedback_queries %q: %v", ok, err)
		}
	}
	err := (SearchConfig{FeedbackQueries: "documnets"}).withDefaults().validate()
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), `search.feedback_queries "documnets" is not documents, short or all`) {
		t.Errorf("bad feedback_queries: %v", err)
	}
	if c := (SearchConfig{FeedbackTerms: -1}).withDefaults(); c.FeedbackTerms != -1 || c.validate() != nil {
		t.Errorf("feedback_terms -1 (off) kept as %d, valid: %v", c.FeedbackTerms, c.validate())
	}
}
