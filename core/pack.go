package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/memos-go/memos/core/internal/retrieve"
)

// PackRequest asks for a context pack: the memories that matter for Query
// (or, with Bootstrap, for the start of a session), fitted to a token budget.
type PackRequest struct {
	// Query is what the agent is about to work on; required unless Bootstrap.
	Query string `json:"query,omitempty"`
	// Bootstrap packs the namespace's highest-significance, most-used
	// memories instead of searching (Query must then be empty).
	Bootstrap bool `json:"bootstrap,omitempty"`
	// Budget is the most tokens (cl100k_base) the Markdown rendering may
	// take (default 800, at most 100,000).
	Budget int `json:"budget,omitempty"`
	// Limit is the most memories considered (default 20, at most 200).
	Limit int `json:"limit,omitempty"`
	// Lessons is the most lessons (type lesson) included (default 3;
	// negative: none). Neighbours is the most graph neighbours of the
	// selected memories included (default 5; negative: none).
	Lessons    int `json:"lessons,omitempty"`
	Neighbours int `json:"neighbours,omitempty"`
	// Pools, Types, ValidAt, AsOf, MMR and MMRLambda filter and rank as in
	// SearchRequest. A bootstrap pack reads current versions (no AsOf).
	Pools     []Pool    `json:"pools,omitempty"`
	Types     []Type    `json:"types,omitempty"`
	ValidAt   time.Time `json:"valid_at,omitzero"`
	AsOf      time.Time `json:"as_of,omitzero"`
	MMR       bool      `json:"mmr,omitempty"`
	MMRLambda float64   `json:"mmr_lambda,omitempty"`
	// IncludeQuarantined also packs memories waiting in the review queue.
	IncludeQuarantined bool `json:"include_quarantined,omitempty"`
	// ReferenceTime is the question's "now", as in SearchRequest.
	ReferenceTime time.Time `json:"reference_time,omitzero"`
}

// Pack is a context pack: what an agent injects into a prompt. The same
// store and request give the same pack, byte for byte, whatever the backend.
type Pack struct {
	Query     string `json:"query,omitempty"`
	Bootstrap bool   `json:"bootstrap,omitempty"`
	Namespace string `json:"namespace"`
	// Budget is the token budget; Tokens what the Markdown rendering takes
	// (never more than Budget), counted with Tokenizer.
	Budget    int    `json:"budget"`
	Tokens    int    `json:"tokens"`
	Tokenizer string `json:"tokenizer"`
	// Memories are the selected memories, best first.
	Memories []PackItem `json:"memories"`
	// Neighbours are memories joined by an edge to a selected one.
	Neighbours []PackItem `json:"neighbours"`
	// Lessons are procedural guidance that applies.
	Lessons []PackItem `json:"lessons"`
	// Omitted counts the memories, neighbours and lessons that were found
	// but did not fit the budget.
	Omitted int `json:"omitted"`
	// Time is what the query says about time, as in SearchResult; the
	// Markdown header states the intervals it names.
	Time *QueryTime `json:"time,omitempty"`
}

// PackItem is one memory in a pack with its citation.
type PackItem struct {
	Citation
	Type    Type   `json:"type"`
	Pool    Pool   `json:"pool"`
	Content string `json:"content"`
	// Via says why a memory that no retriever found is here: the expansion
	// or edge that brought it, such as "12 supports it".
	Via string `json:"via,omitempty"`
	// Mentions are, when the query asks for a time, the dates the content
	// mentions, resolved against the memory's event time.
	Mentions []TimeMention `json:"time_mentions,omitempty"`
	// Tokens is what the item's Markdown line takes.
	Tokens int `json:"tokens"`
}

// Citation says where a memory in a pack comes from, precisely enough to
// fetch that very version again.
type Citation struct {
	ID        int64     `json:"id"`
	Version   int       `json:"version"`
	Source    string    `json:"source,omitempty"`
	Session   string    `json:"session,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	ValidFrom time.Time `json:"valid_from,omitzero"`
	ValidTo   time.Time `json:"valid_to,omitzero"`
	Trust     Trust     `json:"trust"`
}

func (r *PackRequest) defaults() error {
	if r.Budget == 0 {
		r.Budget = 800
	}
	if r.Limit == 0 {
		r.Limit = 20
	}
	if r.Lessons == 0 {
		r.Lessons = 3
	}
	if r.Neighbours == 0 {
		r.Neighbours = 5
	}
	switch {
	case r.Budget < 0 || r.Budget > 100_000:
		return invalidf("budget %d is outside 1–100000 tokens", r.Budget)
	case r.Limit < 0 || r.Limit > 200:
		return invalidf("limit %d is outside 1–200", r.Limit)
	case r.Bootstrap && r.Query != "":
		return invalidf("a bootstrap pack takes no query")
	case r.Bootstrap && !r.AsOf.IsZero():
		return invalidf("a bootstrap pack reads the current versions; it takes no as-of time")
	case !r.Bootstrap && r.Query == "":
		return invalidf("a pack needs a query, or bootstrap for the namespace's most significant memories")
	}
	return nil
}

// ContextPack builds a context pack for req: the search pipeline's result
// (memories, best first, with the lessons among the candidates set apart),
// the graph neighbours of the selected memories, each with its citation,
// fitted greedily in that order of priority to the token budget — an item
// that does not fit is left out and later, smaller ones still considered.
// The budget is checked against the cl100k_base token count of the
// Markdown rendering, which never exceeds it. A query pack records an
// access to what it includes; a bootstrap pack does not (it would reinforce
// itself).
func (e *Engine) ContextPack(ctx context.Context, req PackRequest) (*Pack, error) {
	const op = "context pack"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	pk, now, err := e.contextPack(ctx, req)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	if !req.Bootstrap {
		var hits []Result
		for _, items := range [][]PackItem{pk.Memories, pk.Lessons, pk.Neighbours} {
			for _, it := range items {
				hits = append(hits, Result{Memory: &Memory{ID: it.ID}})
			}
		}
		e.access.touch(hits, now)
	}
	return pk, nil
}

func (e *Engine) contextPack(ctx context.Context, req PackRequest) (*Pack, time.Time, error) {
	if err := req.defaults(); err != nil {
		return nil, time.Time{}, err
	}
	var mems, lessons, neighbours []packCand
	var now time.Time
	var qt *QueryTime
	var err error
	if req.Bootstrap {
		now = e.clock()
		mems, lessons, err = e.bootstrapCands(ctx, req, now)
	} else {
		var p *retrieve.Pipeline
		p, err = retrieve.Run(ctx, e.retrieval(), SearchRequest{Query: req.Query, Limit: req.Limit, Pools: req.Pools, Types: req.Types,
			ValidAt: req.ValidAt, AsOf: req.AsOf, MMR: req.MMR, MMRLambda: req.MMRLambda, IncludeQuarantined: req.IncludeQuarantined,
			ReferenceTime: req.ReferenceTime})
		if err != nil {
			return nil, now, err
		}
		now, qt = p.Now(), p.Time()
		mems, lessons = picked(p)
		if req.Neighbours > 0 {
			neighbours, err = pickedNeighbours(ctx, p, mems, req.Neighbours)
		}
	}
	if err != nil {
		return nil, now, err
	}
	rankLessons(lessons)
	if req.Lessons < 0 {
		lessons = nil
	} else if len(lessons) > req.Lessons {
		lessons = lessons[:req.Lessons]
	}
	pk := &Pack{Query: req.Query, Bootstrap: req.Bootstrap, Namespace: e.ns, Budget: req.Budget,
		Tokenizer: TokenizerName, Memories: []PackItem{}, Neighbours: []PackItem{}, Lessons: []PackItem{}, Time: qt}
	if err := pk.fit(mems, lessons, neighbours); err != nil {
		return nil, now, err
	}
	return pk, now, nil
}

// rankLessons orders the lessons that apply by their score — the trust
// score lesson outcomes move (see LessonScore) — then by id: a lesson that
// keeps working comes first.
func rankLessons(ls []packCand) {
	sort.SliceStable(ls, func(i, j int) bool {
		a, b := ls[i].m, ls[j].m
		if a.Trust.Score != b.Trust.Score {
			return a.Trust.Score > b.Trust.Score
		}
		return a.ID < b.ID
	})
}

// packCand is a memory proposed for a pack.
type packCand struct {
	m        *Memory
	via      string
	mentions []TimeMention
}

// picked takes the search's result as the pack's memories, with the
// dates they mention, and the lessons that apply apart (see
// retrieve.Pipeline.Picks).
func picked(p *retrieve.Pipeline) (mems, lessons []packCand) {
	ms, ls := p.Picks()
	for _, pk := range ms {
		mems = append(mems, packCand{m: pk.Memory, via: pk.Via, mentions: p.Mentions(pk.Memory)})
	}
	for _, pk := range ls {
		lessons = append(lessons, packCand{m: pk.Memory, via: pk.Via})
	}
	return mems, lessons
}

// pickedNeighbours returns up to n memories joined by an edge to one of
// sel and not in the search's result (see retrieve.Pipeline.Neighbours).
func pickedNeighbours(ctx context.Context, p *retrieve.Pipeline, sel []packCand, n int) ([]packCand, error) {
	ids := make([]int64, len(sel))
	for i, s := range sel {
		ids[i] = s.m.ID
	}
	nbs, err := p.Neighbours(ctx, ids, n)
	var out []packCand
	for _, pk := range nbs {
		out = append(out, packCand{m: pk.Memory, via: pk.Via})
	}
	return out, err
}

// bootstrapCands lists the scope's active memories valid at ValidAt (default
// now), in rank order (driver.CompareRank: most significant first, then
// most used, most recently used, lowest id), up to the limit; and every
// such lesson apart. A backend that indexes rank order (RankReader) reads
// the first memories and stops, and the lessons alone; for any other, the
// whole scope is read and sorted: O(n).
func (e *Engine) bootstrapCands(ctx context.Context, req PackRequest, now time.Time) (mems, lessons []packCand, err error) {
	e.flushAccesses() // "most used" ranks by the stored access counts
	at := now
	if !req.ValidAt.IsZero() {
		at = utc(req.ValidAt)
	}
	statuses := []Status{StatusActive}
	if req.IncludeQuarantined {
		statuses = append(statuses, StatusQuarantined)
	}
	f := Filter{Namespaces: e.scope(), Pools: req.Pools, Types: req.Types, Statuses: statuses}
	err = e.b.View(ctx, func(tx ReadTx) error {
		if rr, ok := tx.(RankReader); ok {
			mems, lessons, err = rankedCands(ctx, rr, f, at, req.Limit)
			return err
		}
		var all []*Memory
		err := tx.Scan(ScanOptions{Filter: f}, func(m *Memory) error {
			if m.ValidAt(at) {
				m.Embedding.Vector = nil
				all = append(all, m)
			}
			return ctx.Err()
		})
		if err != nil {
			return err
		}
		slices.SortFunc(all, CompareRank)
		for _, m := range all {
			if m.Type == TypeLesson {
				lessons = append(lessons, packCand{m: m})
			} else if len(mems) < req.Limit {
				mems = append(mems, packCand{m: m})
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("bootstrap candidates: %w", err)
	}
	return mems, lessons, nil
}

// errEnough stops a read that has found what it needs.
var errEnough = errors.New("enough")

// rankedCands is bootstrapCands for a backend that reads in rank order:
// the memories other than lessons up to limit, then every lesson.
func rankedCands(ctx context.Context, rr RankReader, f Filter, at time.Time, limit int) (mems, lessons []packCand, err error) {
	types := f.Types
	if types == nil {
		types = Types
	}
	var others []Type
	withLessons := false
	for _, t := range types {
		if t == TypeLesson {
			withLessons = true
		} else if !slices.Contains(others, t) {
			others = append(others, t)
		}
	}
	read := func(types []Type, fn func(*Memory) error) error {
		g := f
		g.Types = types
		err := rr.Ranked(g, func(m *Memory) error {
			if m.ValidAt(at) {
				m.Embedding.Vector = nil
				if err := fn(m); err != nil {
					return err
				}
			}
			return ctx.Err()
		})
		if errors.Is(err, errEnough) {
			return nil
		}
		return err
	}
	if limit > 0 && len(others) > 0 {
		err := read(others, func(m *Memory) error {
			if mems = append(mems, packCand{m: m}); len(mems) == limit {
				return errEnough
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	if withLessons {
		err := read([]Type{TypeLesson}, func(m *Memory) error {
			lessons = append(lessons, packCand{m: m})
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return mems, lessons, nil
}

// fit adds the proposals to the pack in priority order — memories, then
// lessons, then neighbours — skipping any that would take the Markdown
// rendering over the budget, and then checks the whole rendering's count.
func (pk *Pack) fit(mems, lessons, neighbours []packCand) error {
	used, err := CountTokens(pk.header())
	if err != nil {
		return err
	}
	type section struct {
		cands []packCand
		dst   *[]PackItem
		title string
	}
	for _, s := range []section{{mems, &pk.Memories, memoriesTitle}, {lessons, &pk.Lessons, lessonsTitle}, {neighbours, &pk.Neighbours, neighboursTitle}} {
		for _, c := range s.cands {
			it := newPackItem(c)
			line := it.markdown()
			n, err := CountTokens(line)
			if err != nil {
				return err
			}
			it.Tokens = n
			if len(*s.dst) == 0 {
				h, err := CountTokens(sectionHeader(s.title))
				if err != nil {
					return err
				}
				n += h
			}
			if used+n > pk.Budget {
				pk.Omitted++
				continue
			}
			used += n
			*s.dst = append(*s.dst, it)
		}
	}
	// Token counts of concatenated pieces can differ from the sum of their
	// counts; the whole rendering is what must fit, so count it and drop
	// items from the end until it does.
	for {
		n, err := CountTokens(pk.Markdown())
		if err != nil {
			return err
		}
		if n <= pk.Budget {
			pk.Tokens = n
			return nil
		}
		switch {
		case len(pk.Neighbours) > 0:
			pk.Neighbours = pk.Neighbours[:len(pk.Neighbours)-1]
		case len(pk.Lessons) > 0:
			pk.Lessons = pk.Lessons[:len(pk.Lessons)-1]
		case len(pk.Memories) > 0:
			pk.Memories = pk.Memories[:len(pk.Memories)-1]
		default:
			return invalidf("a budget of %d tokens cannot hold even the pack's header (%d tokens); raise the budget", pk.Budget, n)
		}
		pk.Omitted++
	}
}

func newPackItem(c packCand) PackItem {
	m := c.m
	return PackItem{
		Citation: Citation{ID: m.ID, Version: m.Version, Source: m.Source, Session: m.Session,
			CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, ValidFrom: m.ValidFrom, ValidTo: m.ValidTo, Trust: m.Trust},
		Type: m.Type, Pool: m.Pool, Content: m.Content, Via: c.via, Mentions: c.mentions,
	}
}
