package retrieve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// Explanation is how a search ranked every candidate; see Explain.
type Explanation struct {
	Query   string       `json:"query"`
	Mode    Mode         `json:"mode"`
	Keyword string       `json:"keyword,omitempty"` // the keyword query run, in FTS5 syntax
	ValidAt time.Time    `json:"valid_at"`          // the event time searched
	AsOf    time.Time    `json:"as_of,omitzero"`    // zero: current versions
	MMR     bool         `json:"mmr,omitempty"`
	Config  SearchConfig `json:"config"` // the weights and thresholds in force
	// Rerank says what the rerank stage did: how many candidates it
	// reordered, or why the fused order was kept ("": no reranker).
	Rerank string `json:"rerank,omitempty"`
	// Feedback lists the terms query feedback added to the keyword query
	// (empty: feedback did not run).
	Feedback []string `json:"feedback,omitempty"`
	// Candidates lists every memory a retriever or an expansion proposed:
	// the returned ones first, in rank order, then the rest by score, then
	// those left out before weighting.
	Candidates []CandidateExplanation `json:"candidates"`
	// Result is what Search returns for the same request.
	Result *SearchResult `json:"result"`
}

// CandidateExplanation is one candidate's path through the pipeline.
type CandidateExplanation struct {
	ID      int64       `json:"id"`
	Version int         `json:"version,omitempty"` // the version seen at the request's clocks
	Pool    driver.Pool `json:"pool,omitempty"`
	Type    driver.Type `json:"type,omitempty"`
	Content string      `json:"content,omitempty"`
	// KeywordRank and KeywordScore: rank (1-based, 0 if not found) and score
	// (higher is better) in the keyword index.
	KeywordRank  int     `json:"keyword_rank,omitempty"`
	KeywordScore float64 `json:"keyword_score,omitempty"`
	// HistoryRank: rank among old versions that matched the keyword query
	// in memory (AsOf searches).
	HistoryRank int `json:"history_rank,omitempty"`
	// FeedbackRank and FeedbackScore: rank and keyword score among the hits
	// of the query extended by query feedback (0: not found by it).
	FeedbackRank  int     `json:"feedback_rank,omitempty"`
	FeedbackScore float64 `json:"feedback_score,omitempty"`
	// VectorRank and Similarity: rank and cosine similarity in the vector index.
	VectorRank int     `json:"vector_rank,omitempty"`
	Similarity float64 `json:"similarity,omitempty"`
	// Fused is the reciprocal-rank-fusion score (for an expansion: the
	// score its seed passed on).
	Fused float64 `json:"fused"`
	// The factors weighting applied, and the resulting score.
	Significance float64 `json:"significance_factor,omitempty"`
	Trust        float64 `json:"trust_factor,omitempty"`
	Recency      float64 `json:"recency_factor,omitempty"`
	PoolFactor   float64 `json:"pool_factor,omitempty"`
	// LengthFactor is the long-turn factor (search.turn_length_weight).
	LengthFactor float64 `json:"length_factor,omitempty"`
	// Diversity is the session diversity factor the memory's place was
	// chosen with (search.session_diversity, on questions that count; 0: not
	// applied).
	Diversity float64 `json:"diversity_factor,omitempty"`
	// TimeFactor is the time stage's factor: the question names a time and
	// the memory's event time is in or near it, or the question asks for a
	// time and the memory mentions one (see SearchResult.Time).
	TimeFactor float64 `json:"time_factor,omitempty"`
	// EventTime is the memory's event time (valid_from, else created_at).
	EventTime time.Time `json:"event_time,omitzero"`
	Score     float64   `json:"score"`
	// RerankScore is the reranker's score (nil: not reranked); the
	// candidate's Score is then the score of its place in the reranked order.
	RerankScore *float64 `json:"rerank_score,omitempty"`
	// Filtered says why the memory was left out before weighting (not valid
	// at the requested time, inactive, outside the filters, created after
	// AsOf); "" when it was loaded.
	Filtered string `json:"filtered,omitempty"`
	// Gate is "kept", "dropped: <why>", "kept: keyword search alone returns
	// it (<why it would be dropped>)" (search.keep_keyword; with
	// search.keep_keyword_rank after or last, followed by where it ranks),
	// or "" when the gate did not run
	// (filtered candidates, expansions, fts mode).
	Gate string `json:"gate,omitempty"`
	// Origin is the expansion that added the memory ("" for retrieval).
	Origin string `json:"origin,omitempty"`
	// MMR is the MMR decision ("" without MMR).
	MMR string `json:"mmr,omitempty"`
	// Rank is the 1-based rank in the result, 0 when not returned.
	Rank int `json:"rank"`
	// Status is the memory's status (quarantined ones appear only with
	// IncludeQuarantined); Contradicts lists the memories joined to it by a
	// contradicts edge, in either direction.
	Status      driver.Status `json:"status,omitempty"`
	Contradicts []int64       `json:"contradicts,omitempty"`
}

// Explain runs the search req describes over d and reports every
// candidate before the gate — keyword rank and score, vector rank and
// similarity, fused score, each weight, gate verdict, expansion origin, MMR
// decision and final rank — with the result the search returns.
func Explain(ctx context.Context, d Deps, req SearchRequest) (*Explanation, error) {
	p, err := Run(ctx, d, req)
	if err != nil {
		return nil, err
	}
	x := &Explanation{Query: req.Query, Mode: p.mode, ValidAt: p.validAt, AsOf: p.asOf,
		MMR: req.MMR, Config: *p.cfg, Rerank: p.rerankNote, Feedback: p.feedback, Result: p.Result()}
	x.Keyword = x.Result.Keyword
	x.Candidates = make([]CandidateExplanation, 0, len(p.cands))
	for _, c := range p.hits {
		x.Candidates = append(x.Candidates, explainOne(p, c))
	}
	var filtered []CandidateExplanation
	for _, c := range p.cands {
		switch {
		case c.mem == nil:
			filtered = append(filtered, explainOne(p, c))
		case c.rank == 0:
			x.Candidates = append(x.Candidates, explainOne(p, c))
		}
	}
	x.Candidates = append(x.Candidates, filtered...)
	if err := d.Store.View(ctx, func(tx driver.ReadTx) error { return contradictions(tx, x.Candidates) }); err != nil {
		return nil, err
	}
	return x, nil
}

// contradictions fills in the memories joined to each loaded candidate by
// a contradicts edge.
func contradictions(tx driver.ReadTx, cands []CandidateExplanation) error {
	for i := range cands {
		c := &cands[i]
		if c.Version == 0 {
			continue
		}
		edges, err := tx.Edges(c.ID)
		if errors.Is(err, driver.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		for _, ed := range edges {
			if ed.Type == driver.EdgeContradicts {
				c.Contradicts = append(c.Contradicts, ed.From+ed.To-c.ID)
			}
		}
	}
	return nil
}

// explainOne describes one candidate.
func explainOne(p *Pipeline, c *candidate) CandidateExplanation {
	ce := CandidateExplanation{ID: c.id, KeywordRank: c.kwRank, KeywordScore: c.kwScore,
		HistoryRank: c.histRank, FeedbackRank: c.fbRank, FeedbackScore: c.fbScore, VectorRank: c.vecRank, Similarity: c.similarity, Fused: c.fused,
		Filtered: c.filtered, Origin: c.origin, MMR: c.mmr, Rank: c.rank}
	m := c.mem
	if m == nil {
		return ce
	}
	ce.Version, ce.Pool, ce.Type, ce.Content, ce.Status = m.Version, m.Pool, m.Type, m.Content, m.Status
	ce.Significance, ce.Trust, ce.Recency, ce.PoolFactor, ce.Score = c.significance, c.trust, c.recency, c.pool, c.score
	ce.TimeFactor, ce.EventTime = c.timeFactor, EventTime(m)
	ce.LengthFactor, ce.Diversity = c.length, c.diversity
	if c.reranked {
		ce.RerankScore = &c.rerank
	}
	switch {
	case p.mode == ModeFTS:
	case !c.retrieved(): // an expansion: not gated
	case c.dropped != "":
		ce.Gate = "dropped: " + c.dropped
	case c.spared != "":
		ce.Gate = "kept: keyword search alone returns it (" + c.spared + ")"
		switch {
		case c.after:
			ce.Gate += "; ranked after the others"
		case c.below > 0:
			ce.Gate += fmt.Sprintf("; ranked below what passed the gate (score ×%.3g)", c.below)
		}
	default:
		ce.Gate = "kept"
	}
	return ce
}
