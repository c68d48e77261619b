package core

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/timeexpr"
)

// Mode selects how Search reads a query.
type Mode string

const (
	// ModeHybrid (the default) reads the query as natural language and fuses
	// keyword and vector candidates.
	ModeHybrid Mode = "hybrid"
	// ModeKeyword reads natural language and uses the keyword index only.
	ModeKeyword Mode = "keyword"
	// ModeVector uses the vector index only.
	ModeVector Mode = "vector"
	// ModeFTS reads the query in FTS5 syntax (AND, OR, NOT, "phrases",
	// prefix*, NEAR) and returns exactly the memories that match it: no
	// relevance gate, no expansion.
	ModeFTS Mode = "fts"
)

// ParseMode validates a search mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeHybrid, ModeKeyword, ModeVector, ModeFTS:
		return m, nil
	case "":
		return ModeHybrid, nil
	}
	return "", invalidf("unknown search mode %q (want hybrid, keyword, vector or fts)", s)
}

// SearchRequest is a query and its filters.
type SearchRequest struct {
	Query string `json:"query"`
	Mode  Mode   `json:"mode,omitempty"`
	// Limit caps the results (default 10, at most 1000).
	Limit int    `json:"limit,omitempty"`
	Pools []Pool `json:"pools,omitempty"` // nil: every pool
	Types []Type `json:"types,omitempty"` // nil: every type
	// ValidAt asks what was true at that time: only memories whose
	// valid_from/valid_to interval contains it. Zero means AsOf when AsOf is
	// set (what the store believed was true then), else now.
	ValidAt time.Time `json:"valid_at,omitzero"`
	// AsOf asks what the store believed at that time: every memory is seen
	// at the version that was current then (by UpdatedAt), and memories
	// created later are left out. Zero means the current versions.
	AsOf time.Time `json:"as_of,omitzero"`
	// MMR re-ranks the result by maximal marginal relevance so that
	// paraphrases do not take every slot; MMRLambda (0: the configured
	// search.mmr_lambda) balances relevance against novelty.
	MMR       bool    `json:"mmr,omitempty"`
	MMRLambda float64 `json:"mmr_lambda,omitempty"`
	// NoExpand turns off graph and session expansion for this search.
	NoExpand bool `json:"no_expand,omitempty"`
	// IncludeQuarantined also returns memories waiting in the review queue
	// (status quarantined), which are otherwise invisible to recall.
	IncludeQuarantined bool `json:"include_quarantined,omitempty"`
	// ReferenceTime is the question's "now": what the time words of the
	// query ("yesterday", "last weekend", "in May", "two weeks ago") are
	// read against (zero: the search's clock). It is not a third clock: it
	// filters nothing by itself (ValidAt and AsOf do), it says when the
	// question was asked; see stage_time.go.
	ReferenceTime time.Time `json:"reference_time,omitzero"`
}

// SearchResult is the answer to a SearchRequest.
type SearchResult struct {
	Query string `json:"query"`
	Mode  Mode   `json:"mode"`
	// Keyword is the keyword query actually run, in canonical FTS5 syntax
	// ("" when the keyword index was not used).
	Keyword string   `json:"keyword,omitempty"`
	Hits    []Result `json:"hits"`
	// Time is what the query says about time (nil when it names none and
	// does not ask for one): the reference time, the expressions found and
	// their intervals.
	Time *QueryTime `json:"time,omitempty"`
}

// Result is one memory in a SearchResult with how it ranked.
type Result struct {
	Memory *Memory `json:"memory"`
	Score  float64 `json:"score"`
	// KeywordRank and VectorRank are 1-based ranks in each retriever (0: not found by it).
	KeywordRank int     `json:"keyword_rank,omitempty"`
	VectorRank  int     `json:"vector_rank,omitempty"`
	Similarity  float64 `json:"similarity,omitempty"`
	// Origin says how the memory entered the result: "" when a retriever
	// found it, else the expansion that added it, such as "session of 12"
	// or "supports from 12".
	Origin string `json:"origin,omitempty"`
	// Mentions are, when the query asks for a time ("when…"), the dates
	// the memory's content mentions, resolved against its event time
	// ("yesterday" in a turn of 8 May 2023 is 7 May 2023).
	Mentions []TimeMention `json:"time_mentions,omitempty"`
	// EventTime is, when the query names or asks for a time, when what the
	// memory records happened: its valid_from, else its created_at.
	EventTime time.Time `json:"event_time,omitzero"`
}

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
	p, err := e.runPipeline(ctx, req)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	res := p.result()
	e.touch(res.Hits, p.now)
	return res, nil
}

// candidate is one memory moving through the pipeline stages.
type candidate struct {
	id         int64
	mem        *Memory // the version seen at the request's clocks; nil until loaded
	kwRank     int
	kwScore    float64
	histRank   int // rank among old versions matched in memory (AsOf searches)
	fbRank     int // rank in the keyword hits of the query extended by feedback
	fbScore    float64
	vecRank    int
	similarity float64
	fused      float64
	// Factors applied in weighting.
	significance, trust, recency, pool, length float64
	score                                      float64
	filtered                                   string  // why loading left it out ("" if loaded)
	dropped                                    string  // why the gate dropped it ("" if kept)
	origin                                     string  // expansion that added it ("" for retrieval)
	expanded                                   bool    // added by expansion
	mmr                                        string  // MMR decision ("" without MMR)
	rerank                                     float64 // the reranker's score, when reranked
	reranked                                   bool
	rank                                       int     // 1-based final rank, 0 if not returned
	timeFactor                                 float64 // the time stage's factor (see stage_time.go)
	diversity                                  float64 // the session diversity factor (see stage_diversity.go; 0: not applied)
}

// retrieved reports whether a retriever found c (rather than expansion).
func (c *candidate) retrieved() bool {
	return c.kwRank > 0 || c.vecRank > 0 || c.histRank > 0 || c.fbRank > 0
}

// live reports whether c is loaded and passed the gate (or was added by
// expansion).
func (c *candidate) live() bool { return c.mem != nil && (c.dropped == "" || c.expanded) }

// pipeline is the state of one search.
type pipeline struct {
	e       *Engine
	req     SearchRequest
	mode    Mode
	cfg     *SearchConfig
	now     time.Time // the clock reading of this search
	ref     time.Time // recency reference: AsOf, or now
	validAt time.Time
	asOf    time.Time // zero: current versions
	filter  Filter
	kwq     query.Node
	cands   []*candidate
	byID    map[int64]*candidate
	// views caches memories resolved at the request's clocks (nil: not visible).
	views map[int64]view
	// changed lists, for AsOf searches, the memories whose current version
	// was written after AsOf, with their version at AsOf (nil: created later).
	changed map[int64]*Memory
	// current holds the current versions prefetched (see prefetch); a nil
	// value is a memory that does not exist.
	current map[int64]*Memory
	hits    []*candidate // the returned candidates, in order
	// rerankNote says what the rerank stage did ("" when it did not run).
	rerankNote string
	// tq and qt are what the query says about time (nil: nothing); head
	// is how many hits of each retriever are candidates whatever their time.
	tq   *timeexpr.Question
	qt   *QueryTime
	head int
	// feedback lists the terms query feedback added (nil: it did not run).
	feedback []string
}

func (e *Engine) runPipeline(ctx context.Context, req SearchRequest) (*pipeline, error) {
	p, err := e.newPipeline(req)
	if err != nil {
		return nil, err
	}
	if err := p.retrieve(ctx); err != nil {
		return nil, err
	}
	if err := p.load(ctx); err != nil {
		return nil, err
	}
	p.keepDeep(p.head)
	for _, c := range p.cands {
		if c.mem != nil {
			weigh(c, p.ref, p.cfg)
			p.weighTime(c)
		}
	}
	if p.mode != ModeFTS {
		gate(p.cands, p.cfg, p.mode == ModeHybrid)
	}
	sortCandidates(p.cands)
	if err := p.rerank(ctx); err != nil {
		return nil, err
	}
	if p.mode != ModeFTS && !req.NoExpand {
		if err := p.expand(ctx); err != nil {
			return nil, err
		}
		sortCandidates(p.cands)
	}
	p.selectHits()
	return p, nil
}

// newPipeline validates req and fills in the defaults.
func (e *Engine) newPipeline(req SearchRequest) (*pipeline, error) {
	mode, err := ParseMode(string(req.Mode))
	if err != nil {
		return nil, err
	}
	if req.Limit == 0 {
		req.Limit = 10
	}
	if req.Limit < 0 || req.Limit > 1000 {
		return nil, invalidf("limit %d is outside 1–1000", req.Limit)
	}
	if !utf8.ValidString(req.Query) {
		return nil, invalidf("query is not valid UTF-8")
	}
	if strings.TrimSpace(req.Query) == "" {
		return nil, invalidf("query is empty")
	}
	for _, pl := range req.Pools {
		if _, err := ParsePool(string(pl)); err != nil {
			return nil, err
		}
	}
	for _, t := range req.Types {
		if _, err := ParseType(string(t)); err != nil {
			return nil, err
		}
	}
	if req.MMRLambda < 0 || req.MMRLambda > 1 {
		return nil, invalidf("MMR lambda %v is outside [0,1]", req.MMRLambda)
	}
	if mode == ModeVector && e.emb == nil {
		return nil, invalidf("vector search needs an embedder, and none is configured")
	}
	p := &pipeline{e: e, req: req, mode: mode, cfg: &e.cfg, now: e.clock(),
		byID: map[int64]*candidate{}, views: map[int64]view{}}
	p.asOf = utc(req.AsOf)
	p.ref, p.validAt = p.now, p.now
	if !p.asOf.IsZero() {
		p.ref, p.validAt = p.asOf, p.asOf
	}
	if !req.ValidAt.IsZero() {
		p.validAt = utc(req.ValidAt)
	}
	p.filter = Filter{Namespaces: e.scope(), Pools: req.Pools, Types: req.Types, Statuses: []Status{StatusActive}}
	if req.IncludeQuarantined {
		p.filter.Statuses = append(p.filter.Statuses, StatusQuarantined)
	}
	switch mode {
	case ModeFTS:
		if p.kwq, err = query.Parse(req.Query); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	case ModeHybrid, ModeKeyword:
		p.kwq = query.Natural(req.Query)
	}
	p.readTime()
	return p, nil
}

// retrieve gathers keyword and vector candidates and fuses them.
func (p *pipeline) retrieve(ctx context.Context) error {
	e := p.e
	n := max(p.cfg.Candidates, p.req.Limit)
	if p.mode == ModeFTS {
		n = p.req.Limit
	}
	if !p.asOf.IsZero() {
		n *= 2 // some hits are replaced by the versions current at AsOf
	}
	p.head = n
	n = p.timeDepth(n)
	// The two retrievers run side by side: the keyword index waits on the
	// store, the vector index on the CPU.
	var kw, vec, fb []Hit
	var kwErr error
	var wg sync.WaitGroup
	if p.kwq != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if kw, kwErr = e.b.SearchKeyword(ctx, p.kwq, p.filter, n); kwErr == nil {
				// Feedback waits on the first pass, alongside the vector search.
				fb, p.feedback, kwErr = p.feedbackHits(ctx, kw, n)
			}
		}()
	}
	qvec, vec, err := p.vectorHits(ctx, n)
	wg.Wait()
	if err = errors.Join(kwErr, err); err != nil {
		return err
	}
	var hist []Hit
	if !p.asOf.IsZero() {
		if kw, vec, hist, err = p.rewind(ctx, kw, vec, qvec, n); err != nil {
			return err
		}
	}
	p.cands = fuse(kw, vec, hist, p.cfg)
	for _, c := range p.cands {
		p.byID[c.id] = c
	}
	p.cands = fuseFeedback(p.cands, p.byID, fb, p.cfg)
	return nil
}

// vectorHits embeds the query and searches the vector index, when the
// mode uses it and the engine has an embedder.
func (p *pipeline) vectorHits(ctx context.Context, n int) ([]float32, []Hit, error) {
	e := p.e
	if (p.mode != ModeHybrid && p.mode != ModeVector) || e.emb == nil {
		return nil, nil, nil
	}
	if err := e.syncVectors(ctx); err != nil {
		return nil, nil, err
	}
	vs, err := e.embed(ctx, []string{p.req.Query})
	if err != nil {
		return nil, nil, err
	}
	hits, err := e.vec.Search(ctx, vs[0], n, VectorFilter{Namespaces: p.filter.Namespaces, Pools: p.filter.Pools})
	if err != nil || !p.req.IncludeQuarantined {
		return vs[0], hits, err
	}
	// The vector index holds active memories only; the review queue is
	// small, so its vectors are compared one by one. A backend that indexes
	// memories by status (RankReader) reads the queue alone; any other
	// scans the scope.
	err = e.b.View(ctx, func(tx ReadTx) error {
		f := Filter{Namespaces: p.filter.Namespaces, Pools: p.filter.Pools, Statuses: []Status{StatusQuarantined}}
		add := func(m *Memory) error {
			if m.Embedding.Model == e.model.ID && m.Embedding.Dim() == len(vs[0]) {
				hits = append(hits, Hit{ID: m.ID, Score: dot(vs[0], m.Embedding.Vector)})
			}
			return ctx.Err()
		}
		if rr, ok := tx.(RankReader); ok {
			f.Types = Types
			return rr.Ranked(f, add)
		}
		return tx.Scan(ScanOptions{Filter: f}, add)
	})
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	return vs[0], hits[:min(len(hits), n)], err
}

// selectHits picks the returned candidates: the best live ones up to the
// limit, re-ranked by MMR when the request asks for it.
func (p *pipeline) selectHits() {
	var live []*candidate
	for _, c := range p.cands {
		if c.live() {
			live = append(live, c)
		}
	}
	if p.req.MMR && p.mode != ModeFTS {
		lambda := p.req.MMRLambda
		if lambda == 0 {
			lambda = p.cfg.MMRLambda
		}
		p.hits = mmr(live, p.req.Limit, lambda)
	} else if p.diversifies() {
		p.hits = diversify(live, p.req.Limit, p.cfg.SessionDiversityTop, p.cfg.SessionDiversity)
	} else {
		p.hits = live[:min(len(live), p.req.Limit)]
	}
	for i, c := range p.hits {
		c.rank = i + 1
	}
}

func (p *pipeline) result() *SearchResult {
	res := &SearchResult{Query: p.req.Query, Mode: p.mode, Hits: make([]Result, 0, len(p.hits)), Time: p.qt}
	if p.kwq != nil {
		res.Keyword = p.kwq.String()
	}
	for _, c := range p.hits {
		r := Result{Memory: c.mem, Score: c.score, KeywordRank: c.kwRank,
			VectorRank: c.vecRank, Similarity: c.similarity, Origin: c.origin, Mentions: p.timeMentions(c.mem)}
		if p.qt != nil {
			r.EventTime = EventTime(c.mem)
		}
		res.Hits = append(res.Hits, r)
	}
	return res
}

// sortCandidates orders by score, then id: deterministic for equal scores.
// Candidates that were not loaded go last.
func sortCandidates(cands []*candidate) {
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if (a.mem == nil) != (b.mem == nil) {
			return a.mem != nil
		}
		if a.score != b.score {
			return a.score > b.score
		}
		return a.id < b.id
	})
}

// touch records an access to the returned memories. Access statistics are
// a hint, not something the caller asked to store: they are written in the
// background, a batch at a time (see accessLog), and when they cannot be
// written (a full disk, a read-only file) the reads still succeed and the
// failure is logged as a warning.
func (e *Engine) touch(hits []Result, now time.Time) {
	if e.access == nil || len(hits) == 0 {
		return
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.Memory.ID
	}
	e.access.add(ids, now)
}
