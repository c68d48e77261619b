package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memos-go/memos/core/query"
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
	// prefix*, NEAR) and returns exactly the memories that match it.
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

// SearchConfig holds the ranking weights and thresholds. Zero fields take
// the defaults documented on each field.
type SearchConfig struct {
	// Candidates is how many candidates each retriever contributes (default 50).
	Candidates int `koanf:"candidates" json:"candidates"`
	// RRFK is reciprocal rank fusion's k (default 60).
	RRFK float64 `koanf:"rrf_k" json:"rrf_k"`
	// KeywordWeight and VectorWeight weight the two retrievers in fusion (default 1).
	KeywordWeight float64 `koanf:"keyword_weight" json:"keyword_weight"`
	VectorWeight  float64 `koanf:"vector_weight" json:"vector_weight"`
	// SignificanceBoost scales the score by 1 + boost·(significance−5)/5 (default 0.2).
	SignificanceBoost float64 `koanf:"significance_boost" json:"significance_boost"`
	// TrustWeight scales the score by 1 − w·(1 − trust score) (default 0.5).
	TrustWeight float64 `koanf:"trust_weight" json:"trust_weight"`
	// RecencyHalfLife: the recency factor halves its bonus every half-life of
	// age since the version was written (default 720h = 30 days).
	RecencyHalfLife time.Duration `koanf:"recency_half_life" json:"recency_half_life"`
	// RecencyWeight is the most recency can add: score·(1 − w + w·2^(−age/half-life)) (default 0.1).
	RecencyWeight float64 `koanf:"recency_weight" json:"recency_weight"`
	// MinSimilarity: a candidate found only by the vector index is dropped
	// below this cosine similarity, divided by its trust score so that a
	// low-trust memory needs a stronger match (default 0.3).
	MinSimilarity float64 `koanf:"min_similarity" json:"min_similarity"`
	// RelativeSimilarity: a vector-only candidate is also dropped below this
	// share of the best similarity in the result (default 0.6).
	RelativeSimilarity float64 `koanf:"relative_similarity" json:"relative_similarity"`
	// TrackAccess records access statistics for returned memories (default
	// true; set DisableAccessTracking to turn it off).
	DisableAccessTracking bool `koanf:"disable_access_tracking" json:"disable_access_tracking"`
}

func (c SearchConfig) withDefaults() SearchConfig {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Candidates == 0 {
		c.Candidates = 50
	}
	def(&c.RRFK, 60)
	def(&c.KeywordWeight, 1)
	def(&c.VectorWeight, 1)
	def(&c.SignificanceBoost, 0.2)
	def(&c.TrustWeight, 0.5)
	def(&c.RecencyWeight, 0.1)
	def(&c.MinSimilarity, 0.3)
	def(&c.RelativeSimilarity, 0.6)
	if c.RecencyHalfLife == 0 {
		c.RecencyHalfLife = 30 * 24 * time.Hour
	}
	return c
}

func (c SearchConfig) validate() error {
	switch {
	case c.Candidates < 1 || c.Candidates > 10000:
		return invalidf("search.candidates %d is outside 1–10000", c.Candidates)
	case c.RRFK <= 0:
		return invalidf("search.rrf_k must be positive")
	case c.KeywordWeight < 0 || c.VectorWeight < 0:
		return invalidf("search weights must not be negative")
	case c.TrustWeight < 0 || c.TrustWeight > 1 || c.RecencyWeight < 0 || c.RecencyWeight > 1:
		return invalidf("search.trust_weight and search.recency_weight must be within [0,1]")
	case c.RecencyHalfLife < 0:
		return invalidf("search.recency_half_life must be positive")
	case c.MinSimilarity < 0 || c.MinSimilarity > 1 || c.RelativeSimilarity < 0 || c.RelativeSimilarity > 1:
		return invalidf("search.min_similarity and search.relative_similarity must be within [0,1]")
	}
	return nil
}

// SearchRequest is a query and its filters.
type SearchRequest struct {
	Query string `json:"query"`
	Mode  Mode   `json:"mode,omitempty"`
	// Limit caps the results (default 10, at most 1000).
	Limit int    `json:"limit,omitempty"`
	Pools []Pool `json:"pools,omitempty"` // nil: every pool
	Types []Type `json:"types,omitempty"` // nil: every type
}

// SearchResult is the answer to a SearchRequest.
type SearchResult struct {
	Query string `json:"query"`
	Mode  Mode   `json:"mode"`
	// Keyword is the keyword query actually run, in canonical FTS5 syntax
	// ("" when the keyword index was not used).
	Keyword string   `json:"keyword,omitempty"`
	Hits    []Result `json:"hits"`
}

// Result is one memory in a SearchResult with how it ranked.
type Result struct {
	Memory *Memory `json:"memory"`
	Score  float64 `json:"score"`
	// KeywordRank and VectorRank are 1-based ranks in each retriever (0: not found by it).
	KeywordRank int     `json:"keyword_rank,omitempty"`
	VectorRank  int     `json:"vector_rank,omitempty"`
	Similarity  float64 `json:"similarity,omitempty"`
}

// Search runs the retrieval pipeline: keyword and vector candidates,
// reciprocal rank fusion, significance/trust/recency weighting and a
// relevance gate. It returns current, active memories valid now, from this
// handle's namespace and the default one, best first with ties broken by id.
func (e *Engine) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	const op = "search"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	res, err := e.search(ctx, req)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	return res, nil
}

// candidate is one memory moving through the pipeline stages.
type candidate struct {
	id           int64
	mem          *Memory
	kwRank       int
	kwScore      float64
	vecRank      int
	similarity   float64
	fused        float64
	significance float64 // factors applied in weighting
	trust        float64
	recency      float64
	score        float64
	dropped      string // why the gate dropped it ("" if kept)
}

func (e *Engine) search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
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
	for _, p := range req.Pools {
		if _, err := ParsePool(string(p)); err != nil {
			return nil, err
		}
	}
	for _, t := range req.Types {
		if _, err := ParseType(string(t)); err != nil {
			return nil, err
		}
	}
	res := &SearchResult{Query: req.Query, Mode: mode, Hits: []Result{}}
	var kwq query.Node
	switch mode {
	case ModeFTS:
		if kwq, err = query.Parse(req.Query); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	case ModeHybrid, ModeKeyword:
		kwq = query.Natural(req.Query)
	}
	if mode == ModeVector && e.emb == nil {
		return nil, invalidf("vector search needs an embedder, and none is configured")
	}
	n := max(e.cfg.Candidates, req.Limit)
	if mode == ModeFTS {
		n = req.Limit
	}
	var kw, vec []Hit
	filter := Filter{Namespaces: e.scope(), Pools: req.Pools, Types: req.Types, Statuses: []Status{StatusActive}}
	if kwq != nil {
		res.Keyword = kwq.String()
		if kw, err = e.b.SearchKeyword(ctx, kwq, filter, n*2); err != nil {
			return nil, err
		}
	}
	if (mode == ModeHybrid || mode == ModeVector) && e.emb != nil {
		if vec, err = e.vectorCandidates(ctx, req.Query, filter, n*2); err != nil {
			return nil, err
		}
	}
	cands := fuse(kw, vec, e.cfg)
	now := e.clock()
	if err := e.load(ctx, cands, now, filter); err != nil {
		return nil, err
	}
	kept := cands[:0]
	for _, c := range cands {
		if c.mem != nil {
			kept = append(kept, c)
		}
	}
	cands = kept
	for _, c := range cands {
		weigh(c, now, e.cfg)
	}
	if mode != ModeFTS {
		gate(cands, e.cfg)
	}
	sortCandidates(cands)
	for _, c := range cands {
		if c.dropped != "" {
			continue
		}
		if len(res.Hits) == req.Limit {
			break
		}
		res.Hits = append(res.Hits, Result{Memory: c.mem, Score: c.score, KeywordRank: c.kwRank, VectorRank: c.vecRank, Similarity: c.similarity})
	}
	if err := e.touch(ctx, res.Hits, now); err != nil {
		return nil, err
	}
	return res, nil
}

func (e *Engine) vectorCandidates(ctx context.Context, text string, f Filter, n int) ([]Hit, error) {
	if err := e.syncVectors(ctx); err != nil {
		return nil, err
	}
	vs, err := e.embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return e.vec.Search(ctx, vs[0], n, VectorFilter{Namespaces: f.Namespaces, Pools: f.Pools})
}

// fuse merges the keyword and vector lists by weighted reciprocal rank
// fusion: score = Σ w / (k + rank).
func fuse(kw, vec []Hit, c SearchConfig) []*candidate {
	byID := make(map[int64]*candidate, len(kw)+len(vec))
	var out []*candidate
	get := func(id int64) *candidate {
		if x := byID[id]; x != nil {
			return x
		}
		x := &candidate{id: id}
		byID[id] = x
		out = append(out, x)
		return x
	}
	for i, h := range kw {
		x := get(h.ID)
		x.kwRank, x.kwScore = i+1, h.Score
		x.fused += c.KeywordWeight / (c.RRFK + float64(i+1))
	}
	for i, h := range vec {
		x := get(h.ID)
		x.vecRank, x.similarity = i+1, h.Score
		x.fused += c.VectorWeight / (c.RRFK + float64(i+1))
	}
	return out
}

// load fetches each candidate's current version and drops (mem = nil) those
// that are gone, out of scope, filtered out, inactive or not valid at now.
func (e *Engine) load(ctx context.Context, cands []*candidate, now time.Time, f Filter) error {
	return e.b.View(ctx, func(tx ReadTx) error {
		for _, c := range cands {
			m, err := tx.Get(c.id, 0)
			if err != nil {
				if errors.Is(err, ErrNotFound) {
					continue // forgotten since the index was read
				}
				return err
			}
			if m.Status != StatusActive || !contains(f.Namespaces, m.Namespace) ||
				(f.Pools != nil && !contains(f.Pools, m.Pool)) ||
				(f.Types != nil && !contains(f.Types, m.Type)) || !m.ValidAt(now) {
				continue
			}
			c.mem = m
		}
		return nil
	})
}

// weigh applies significance, trust and recency to the fused score.
func weigh(c *candidate, now time.Time, cfg SearchConfig) {
	m := c.mem
	c.significance = 1 + cfg.SignificanceBoost*float64(m.Significance-5)/5
	c.trust = 1 - cfg.TrustWeight*(1-m.Trust.Score)
	age := now.Sub(m.UpdatedAt)
	if age < 0 {
		age = 0
	}
	c.recency = 1 - cfg.RecencyWeight + cfg.RecencyWeight*math.Exp2(-float64(age)/float64(cfg.RecencyHalfLife))
	c.score = c.fused * c.significance * c.trust * c.recency
}

// gate drops weak candidates instead of letting them pad the result: a
// memory found only by the vector index must be similar enough in absolute
// terms (more so when its trust is low) and relative to the best match.
func gate(cands []*candidate, cfg SearchConfig) {
	best := 0.0
	for _, c := range cands {
		best = math.Max(best, c.similarity)
	}
	for _, c := range cands {
		if c.kwRank > 0 {
			continue
		}
		need := cfg.MinSimilarity / math.Max(c.mem.Trust.Score, 0.05)
		switch {
		case c.similarity < need:
			c.dropped = fmt.Sprintf("similarity %.3f below %.3f", c.similarity, need)
		case c.similarity < cfg.RelativeSimilarity*best:
			c.dropped = fmt.Sprintf("similarity %.3f below %.0f%% of the best (%.3f)", c.similarity, cfg.RelativeSimilarity*100, best)
		}
	}
}

// sortCandidates orders by score, then id: deterministic for equal scores.
func sortCandidates(cands []*candidate) {
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return cands[i].id < cands[j].id
	})
}

// touch records an access to the returned memories.
func (e *Engine) touch(ctx context.Context, hits []Result, now time.Time) error {
	if e.cfg.DisableAccessTracking || len(hits) == 0 {
		return nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.Memory.ID
	}
	return e.b.Update(ctx, func(tx Tx) error { return tx.Touch(ids, now) })
}
