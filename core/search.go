package core

import (
	"context"
	"time"

	"github.com/memos-go/memos/core/internal/retrieve"
)

// The retrieval pipeline lives in core/internal/retrieve; these are the
// names a user of the engine gives it.

// Requests, results and explanations of searches.
type (
	// Mode selects how Search reads a query.
	Mode = retrieve.Mode
	// SearchRequest is a query and its filters.
	SearchRequest = retrieve.SearchRequest
	// SearchResult is the answer to a SearchRequest.
	SearchResult = retrieve.SearchResult
	// Result is one memory in a SearchResult with how it ranked.
	Result = retrieve.Result
	// QueryTime is what a search read about time in its query.
	QueryTime = retrieve.QueryTime
	// TimeMention is a time expression with the interval it denotes.
	TimeMention = retrieve.TimeMention
	// SearchConfig holds the ranking weights and thresholds of the
	// retrieval pipeline (Options.Search).
	SearchConfig = retrieve.SearchConfig
	// Explanation is how a search ranked every candidate; see Engine.Explain.
	Explanation = retrieve.Explanation
	// CandidateExplanation is one candidate's path through the pipeline.
	CandidateExplanation = retrieve.CandidateExplanation
)

const (
	// Search modes: hybrid (the default), keyword, vector, and fts (the
	// query in FTS5 syntax, exactly; no gate, no expansion).
	ModeHybrid  = retrieve.ModeHybrid
	ModeKeyword = retrieve.ModeKeyword
	ModeVector  = retrieve.ModeVector
	ModeFTS     = retrieve.ModeFTS

	// Fusion methods (SearchConfig.Fusion).
	FusionRRF   = retrieve.FusionRRF
	FusionScore = retrieve.FusionScore

	// Which searches query feedback runs for (SearchConfig.FeedbackQueries).
	FeedbackDocuments = retrieve.FeedbackDocuments
	FeedbackShort     = retrieve.FeedbackShort
	FeedbackAll       = retrieve.FeedbackAll

	// Values of SearchConfig.SessionDiversityQueries.
	DiversityCounting = retrieve.DiversityCounting
	DiversityAll      = retrieve.DiversityAll
)

// ParseMode validates a search mode name.
func ParseMode(s string) (Mode, error) { return retrieve.ParseMode(s) }

// DefaultSearchConfig returns the configuration the engine uses when none
// is given: every field at its documented default.
func DefaultSearchConfig() SearchConfig { return retrieve.DefaultSearchConfig() }

// EventTime is when what m records happened: its valid_from, or when memos
// learned it when that is not set.
func EventTime(m *Memory) time.Time { return retrieve.EventTime(m) }

// Search runs the retrieval pipeline: keyword and vector candidates,
// weighted reciprocal rank fusion, validity, significance, trust, pool and
// recency weighting, a relevance gate, the reranker when one is configured,
// graph and session expansion and, on request, MMR. By default it returns current, active memories valid now,
// from this handle's namespace and the default one, best first with ties
// broken by id; see SearchRequest for the two clocks.
func (e *Engine) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	const op = "search"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	p, err := retrieve.Run(ctx, e.retrieval(), req)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	res := p.Result()
	e.access.touch(res.Hits, p.Now())
	return res, nil
}

// Explain runs the search req describes and reports every candidate before
// the gate — keyword rank and score, vector rank and similarity, fused
// score, each weight, gate verdict, expansion origin, MMR decision and final
// rank — with the result Search would return. Unlike Search it records no
// access statistics.
func (e *Engine) Explain(ctx context.Context, req SearchRequest) (*Explanation, error) {
	const op = "explain"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	x, err := retrieve.Explain(ctx, e.retrieval(), req)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	return x, nil
}

// retrieval is what a search of this handle reads.
func (e *Engine) retrieval() retrieve.Deps {
	d := retrieve.Deps{Config: &e.ret.Config, Store: e.b, Reranker: e.ret.Reranker, Breaker: &e.ret.Breaker,
		Sessions: &e.ret.Sessions, Scope: e.scope(), Now: e.now}
	if e.emb != nil {
		d.Vectors, d.Embed, d.Model = liveVectors{e.shared}, e.embed, e.model.ID
	}
	return d
}

// liveVectors is the engine's vector index, synced with the change log
// before each search.
type liveVectors struct{ s *shared }

func (v liveVectors) Sync(ctx context.Context) error { return v.s.vec.Sync(ctx) }

func (v liveVectors) Search(ctx context.Context, q []float32, k int, f VectorFilter) ([]Hit, error) {
	return v.s.vec.Search(ctx, q, k, f)
}

// touch records an access to the returned memories. Access statistics are
// a hint, not something the caller asked to store: they are written in the
// background, a batch at a time (see accessLog), and when they cannot be
// written (a full disk, a read-only file) the reads still succeed and the
// failure is logged as a warning. A nil log does not track them.
func (a *accessLog) touch(hits []Result, now time.Time) {
	if a == nil || len(hits) == 0 {
		return
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.Memory.ID
	}
	a.add(ids, now)
}
