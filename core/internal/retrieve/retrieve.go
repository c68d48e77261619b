// Package retrieve is memos' retrieval pipeline: keyword and vector
// candidates, fusion, the validity stage and the two clocks, weighting, the
// time stage, the relevance gate, the reranker, graph and session
// expansion, MMR and session diversity, and explain. Package core calls Run
// (Engine.Search, ContextPack) and Explain (Engine.Explain) and re-exports
// the types a user names (SearchRequest, SearchResult, SearchConfig,
// Explanation, ...); it fills Deps from its own state for each search.
//
// Every stage is a function over candidates or a method of the pipeline,
// which reads the store only through Deps: none holds the engine, and a
// stage can be tested over an in-memory Store. This package does not import
// core.
package retrieve

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/timeexpr"
)

// Deps are what a search reads, each named apart so that a test can give
// in-memory ones. The engine fills them for every search from its state.
type Deps struct {
	// Config is the ranking configuration, defaults applied and validated
	// (see NewState).
	Config *SearchConfig
	// Store is the store of record: keyword search, and read transactions
	// for memories, versions, edges and sessions.
	Store Store
	// Vectors is the vector index and Embed the embedder of the query,
	// whose model Model names (stored embeddings of another model are not
	// compared); nil Embed: no embedder, keyword search only.
	Vectors Vectors
	Embed   func(ctx context.Context, texts []string) ([][]float32, error)
	Model   string
	// Reranker reorders the best candidates (nil: no rerank stage);
	// Breaker pauses it when it keeps failing.
	Reranker driver.Reranker
	Breaker  *Breaker
	// Sessions orders the members of sessions for a backend that does not
	// (no SessionReader).
	Sessions *Sessions
	// Scope is the namespaces the search reads.
	Scope []string
	// Now is the clock.
	Now func() time.Time
}

// Store is what retrieval reads from the store of record.
type Store interface {
	driver.KeywordIndex
	View(ctx context.Context, fn func(tx driver.ReadTx) error) error
}

// Vectors is the vector index, which Sync brings up to date with the store
// before a search.
type Vectors interface {
	Sync(ctx context.Context) error
	Search(ctx context.Context, q []float32, k int, f driver.VectorFilter) ([]driver.Hit, error)
}

// State is the retrieval state of one store that outlives a search: the
// configuration, the reranker and its Breaker, and the session index.
type State struct {
	Config   SearchConfig
	Reranker driver.Reranker // nil: no rerank stage
	Breaker  Breaker
	Sessions Sessions
}

// NewState applies cfg's defaults, validates it, and returns the state of
// a store whose searches rerank with r (nil: none).
func NewState(cfg SearchConfig, r driver.Reranker) (*State, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &State{Config: cfg, Reranker: r}, nil
}

// candidate is one memory moving through the pipeline stages.
type candidate struct {
	id         int64
	mem        *driver.Memory // the version seen at the request's clocks; nil until loaded
	kwRank     int
	kwScore    float64
	histRank   int // rank among old versions matched in memory (AsOf searches)
	fbRank     int // rank in the keyword hits of the query extended by feedback
	fbScore    float64
	vecRank    int
	similarity float64
	fused      float64
	kwFused    float64 // the keyword and history lists' share of fused: what a keyword search fuses
	// Factors applied in weighting.
	significance, trust, recency, pool, length float64
	score                                      float64
	filtered                                   string  // why loading left it out ("" if loaded)
	dropped                                    string  // why the gate dropped it ("" if kept)
	spared                                     string  // why the gate would have dropped it, had keyword search alone not returned it (see keywordResult)
	after                                      bool    // ranks after every other live candidate (KeepRankLast; see rankKept)
	below                                      float64 // the factor that put it below the gate's own result (KeepRankAfter; 0: none)
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

// Pipeline is the state of one search, which Run returns for the caller
// to read the result (and Explain the rest).
type Pipeline struct {
	d       Deps
	req     SearchRequest
	mode    Mode
	cfg     *SearchConfig
	now     time.Time // the clock reading of this search
	ref     time.Time // recency reference: AsOf, or now
	validAt time.Time
	asOf    time.Time // zero: current versions
	filter  driver.Filter
	kwq     query.Node
	cands   []*candidate
	byID    map[int64]*candidate
	// views caches memories resolved at the request's clocks (nil: not visible).
	views map[int64]view
	// changed lists, for AsOf searches, the memories whose current version
	// was written after AsOf, with their version at AsOf (nil: created later).
	changed map[int64]*driver.Memory
	// current holds the current versions prefetched (see prefetch); a nil
	// value is a memory that does not exist.
	current map[int64]*driver.Memory
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

// Run runs the retrieval pipeline for req over d: keyword and vector
// candidates, fusion, validity at the request's clocks, weighting, the time
// stage, the relevance gate, the reranker, graph and session expansion and
// the choice of hits (MMR or session diversity).
func Run(ctx context.Context, d Deps, req SearchRequest) (*Pipeline, error) {
	p, err := newPipeline(d, req)
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
		gate(p.cands, p.cfg, p.mode == ModeHybrid, p.req.Limit)
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

// Now is the clock reading the search ran at.
func (p *Pipeline) Now() time.Time { return p.now }

// Time is what the query says about time (nil: nothing).
func (p *Pipeline) Time() *QueryTime { return p.qt }

// newPipeline validates req and fills in the defaults.
func newPipeline(d Deps, req SearchRequest) (*Pipeline, error) {
	mode, err := ParseMode(string(req.Mode))
	if err != nil {
		return nil, err
	}
	if req.Limit == 0 {
		req.Limit = 10
	}
	if req.Limit < 0 || req.Limit > 1000 {
		return nil, driver.Invalidf("limit %d is outside 1–1000", req.Limit)
	}
	if !utf8.ValidString(req.Query) {
		return nil, driver.Invalidf("query is not valid UTF-8")
	}
	if strings.TrimSpace(req.Query) == "" {
		return nil, driver.Invalidf("query is empty")
	}
	for _, pl := range req.Pools {
		if _, err := driver.ParsePool(string(pl)); err != nil {
			return nil, err
		}
	}
	for _, t := range req.Types {
		if _, err := driver.ParseType(string(t)); err != nil {
			return nil, err
		}
	}
	if req.MMRLambda < 0 || req.MMRLambda > 1 {
		return nil, driver.Invalidf("MMR lambda %v is outside [0,1]", req.MMRLambda)
	}
	if mode == ModeVector && d.Embed == nil {
		return nil, driver.Invalidf("vector search needs an embedder, and none is configured")
	}
	p := &Pipeline{d: d, req: req, mode: mode, cfg: d.Config, now: d.Now().UTC().Round(0),
		byID: map[int64]*candidate{}, views: map[int64]view{}}
	p.asOf = utc(req.AsOf)
	p.ref, p.validAt = p.now, p.now
	if !p.asOf.IsZero() {
		p.ref, p.validAt = p.asOf, p.asOf
	}
	if !req.ValidAt.IsZero() {
		p.validAt = utc(req.ValidAt)
	}
	p.filter = driver.Filter{Namespaces: d.Scope, Pools: req.Pools, Types: req.Types, Statuses: []driver.Status{driver.StatusActive}}
	if req.IncludeQuarantined {
		p.filter.Statuses = append(p.filter.Statuses, driver.StatusQuarantined)
	}
	switch mode {
	case ModeFTS:
		if p.kwq, err = query.Parse(req.Query); err != nil {
			return nil, fmt.Errorf("%w: %w", driver.ErrInvalid, err)
		}
	case ModeHybrid, ModeKeyword:
		p.kwq = query.Natural(req.Query)
	}
	p.readTime()
	return p, nil
}

// retrieve gathers keyword and vector candidates and fuses them.
func (p *Pipeline) retrieve(ctx context.Context) error {
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
	var kw, vec, fb []driver.Hit
	var kwErr error
	var wg sync.WaitGroup
	if p.kwq != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if kw, kwErr = p.d.Store.SearchKeyword(ctx, p.kwq, p.filter, n); kwErr == nil {
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
	var hist []driver.Hit
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
// mode uses it and there is an embedder.
func (p *Pipeline) vectorHits(ctx context.Context, n int) ([]float32, []driver.Hit, error) {
	if (p.mode != ModeHybrid && p.mode != ModeVector) || p.d.Embed == nil {
		return nil, nil, nil
	}
	if err := p.d.Vectors.Sync(ctx); err != nil {
		return nil, nil, err
	}
	vs, err := p.d.Embed(ctx, []string{p.req.Query})
	if err != nil {
		return nil, nil, err
	}
	hits, err := p.d.Vectors.Search(ctx, vs[0], n, driver.VectorFilter{Namespaces: p.filter.Namespaces, Pools: p.filter.Pools})
	if err != nil || !p.req.IncludeQuarantined {
		return vs[0], hits, err
	}
	// The vector index holds active memories only; the review queue is
	// small, so its vectors are compared one by one. A backend that indexes
	// memories by status (RankReader) reads the queue alone; any other
	// scans the scope.
	err = p.d.Store.View(ctx, func(tx driver.ReadTx) error {
		f := driver.Filter{Namespaces: p.filter.Namespaces, Pools: p.filter.Pools, Statuses: []driver.Status{driver.StatusQuarantined}}
		add := func(m *driver.Memory) error {
			if m.Embedding.Model == p.d.Model && m.Embedding.Dim() == len(vs[0]) {
				hits = append(hits, driver.Hit{ID: m.ID, Score: dot(vs[0], m.Embedding.Vector)})
			}
			return ctx.Err()
		}
		if rr, ok := tx.(driver.RankReader); ok {
			f.Types = driver.Types
			return rr.Ranked(f, add)
		}
		return tx.Scan(driver.ScanOptions{Filter: f}, add)
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
func (p *Pipeline) selectHits() {
	var live, after []*candidate
	for _, c := range p.cands {
		switch {
		case !c.live():
		case c.after:
			after = append(after, c) // only fills the places left (see rankKept)
		default:
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
	p.hits = append(p.hits, after[:min(len(after), p.req.Limit-len(p.hits))]...)
	for i, c := range p.hits {
		c.rank = i + 1
	}
}

// Result is the answer to the search.
func (p *Pipeline) Result() *SearchResult {
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
// Candidates marked to rank after the others (see rankKept) follow them;
// candidates that were not loaded go last.
func sortCandidates(cands []*candidate) {
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if (a.mem == nil) != (b.mem == nil) {
			return a.mem != nil
		}
		if a.after != b.after {
			return b.after
		}
		if a.score != b.score {
			return a.score > b.score
		}
		return a.id < b.id
	})
}
