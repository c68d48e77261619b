package retrieve

import (
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// Query feedback (pseudo-relevance feedback, after RM3): a short question
// often misses the words its answer is written in ("what does Caroline
// paint?" against "I finished another sunset landscape"). The best keyword
// hits of the first pass are taken as relevant; the content words they
// share, weighted by how well each hit matched and how much of it the word
// makes up (RM1), extend the query; and the extended query's keyword hits
// form one more ranked list in fusion, weighted by FeedbackWeight, so that
// the original query's own ranking keeps the upper hand — the interpolation
// RM3 does with term weights, done with ranks, since the keyword index has
// no per-term weights. It is offline and deterministic (ties are broken by
// the term), and runs only in hybrid searches of current versions, and of
// those by default only where the first pass's best hits are mostly
// documents (FeedbackQueries). Conversation turns, and short memories
// generally, share speakers' names and chit-chat more than topic words, so
// the words feedback adds pull in turns of the wrong topic: on LoCoMo it
// costs recall whatever the query, and on SciFact's abstracts it gains (see
// the README's "Quality (measured)").

// Which searches query feedback runs for (SearchConfig.FeedbackQueries).
const (
	// FeedbackDocuments: those whose first pass's best hits are mostly
	// documents (type document).
	FeedbackDocuments = "documents"
	// FeedbackShort: those whose query is short (at most
	// FeedbackMaxQueryTerms content terms) or whose first pass found fewer
	// than FeedbackDocs hits, whatever the memories.
	FeedbackShort = "short"
	// FeedbackAll: every hybrid search.
	FeedbackAll = "all"
)

// feedbackHits returns the keyword hits of the query extended by feedback
// over kw, the first pass, and the terms it added; nil when feedback does
// not apply to this search.
func (p *Pipeline) feedbackHits(ctx context.Context, kw []driver.Hit, n int) ([]driver.Hit, []string, error) {
	cfg := p.cfg
	if cfg.FeedbackTerms <= 0 || p.mode != ModeHybrid || !p.asOf.IsZero() || p.kwq == nil || len(kw) == 0 {
		return nil, nil, nil
	}
	qterms := query.PositiveTerms(p.kwq)
	if cfg.FeedbackQueries == FeedbackShort && len(qterms) > cfg.FeedbackMaxQueryTerms && len(kw) >= cfg.FeedbackDocs {
		return nil, nil, nil
	}
	first := kw[:min(len(kw), cfg.FeedbackDocs)]
	ids := make([]int64, len(first))
	score := make(map[int64]float64, len(first))
	for i, h := range first {
		ids[i], score[h.ID] = h.ID, h.Score
	}
	// The best hits in one read where the backend can (a database server a
	// round trip away); one forgotten since the first pass is left out.
	top := make([]driver.Hit, 0, len(first))
	docs := make([]string, 0, len(first))
	ndoc := 0
	err := p.d.Store.View(ctx, func(tx driver.ReadTx) error {
		return driver.EachMemory(tx, ids, func(m *driver.Memory) error {
			top = append(top, driver.Hit{ID: m.ID, Score: score[m.ID]})
			docs = append(docs, m.Content)
			if m.Type == driver.TypeDocument {
				ndoc++
			}
			return nil
		})
	})
	if err != nil {
		return nil, nil, err
	}
	if len(top) == 0 || cfg.FeedbackQueries == FeedbackDocuments && 2*ndoc <= len(top) {
		return nil, nil, nil
	}
	terms := feedbackTerms(qterms, top, docs, cfg.FeedbackTerms)
	if len(terms) == 0 {
		return nil, nil, nil
	}
	children := []query.Node{p.kwq}
	if or, ok := p.kwq.(*query.Or); ok {
		children = slices.Clone(or.Children)
	}
	for _, t := range terms {
		children = append(children, &query.Term{Text: t})
	}
	if len(query.PositiveTerms(&query.Or{Children: children})) > query.MaxTerms {
		return nil, nil, nil
	}
	hits, err := p.d.Store.SearchKeyword(ctx, &query.Or{Children: children}, p.filter, n)
	return hits, terms, err
}

// feedbackTerms picks the k best expansion terms from docs, the contents
// of the first pass's best hits (scores in hits): content words (no stop
// words, no numbers, at least three letters) not already in the query,
// found in at least two of the documents when there are several, weighted
// by Σ_d P(d)·tf(t,d)/|d| with P(d) the hit's share of the hits' scores.
// Words that share a porter stem count as one term, spelled as first seen.
func feedbackTerms(qterms []string, hits []driver.Hit, docs []string, k int) []string {
	inQuery := map[string]bool{}
	for _, t := range qterms {
		inQuery[text.Stem(t)] = true
	}
	total := 0.0
	for _, h := range hits {
		total += h.Score
	}
	type stat struct {
		spell  string
		weight float64
		docs   int
	}
	stats := map[string]*stat{}
	var toks []string
	for i, d := range docs {
		toks = text.AppendTokens(toks[:0], d)
		if len(toks) == 0 {
			continue
		}
		pd := 1 / float64(len(hits))
		if total > 0 {
			pd = hits[i].Score / total
		}
		tf := map[string]int{}
		spell := map[string]string{}
		for _, t := range toks {
			if len(t) < 3 || query.IsStopWord(t) || strings.IndexFunc(t, unicode.IsLetter) < 0 {
				continue
			}
			s := text.Stem(t)
			if inQuery[s] {
				continue
			}
			tf[s]++
			if _, ok := spell[s]; !ok {
				spell[s] = t
			}
		}
		for s, n := range tf {
			st := stats[s]
			if st == nil {
				st = &stat{spell: spell[s]}
				stats[s] = st
			}
			st.weight += pd * float64(n) / float64(len(toks))
			st.docs++
		}
	}
	minDocs := 1
	if len(docs) > 1 {
		minDocs = 2
	}
	var cands []*stat
	for _, st := range stats {
		if st.docs >= minDocs {
			cands = append(cands, st)
		}
	}
	slices.SortFunc(cands, func(a, b *stat) int {
		if a.weight != b.weight {
			if a.weight > b.weight {
				return -1
			}
			return 1
		}
		return strings.Compare(a.spell, b.spell)
	})
	out := make([]string, 0, k)
	for _, st := range cands[:min(k, len(cands))] {
		out = append(out, st.spell)
	}
	return out
}

// fuseFeedback adds the feedback list to the fused candidates, weighted by
// FeedbackWeight, like the other lists. New candidates are
// appended in list order.
func fuseFeedback(cands []*candidate, byID map[int64]*candidate, fb []driver.Hit, c *SearchConfig) []*candidate {
	contrib := c.contributions(fb, c.FeedbackWeight, false)
	for i, h := range fb {
		x := byID[h.ID]
		if x == nil {
			x = &candidate{id: h.ID}
			byID[h.ID] = x
			cands = append(cands, x)
		}
		x.fbRank, x.fbScore = i+1, h.Score
		x.fused += contrib[i]
	}
	return cands
}
