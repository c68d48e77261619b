package bolt

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// How a keyword search works.
//
// The query AST is compiled (query.Compile) into a text.Query, a tree of
// phrases (a term is a phrase of one token, perhaps a prefix) combined by
// AND, OR, NOT and NEAR. bleve only
// generates candidates: every phrase becomes a conjunction of term (or
// prefix) queries, NEAR the conjunction of its groups, "a NOT b" the
// candidates of a with b as an optional clause, so the candidates are a
// superset of the matches and every candidate carries the positions of all
// the query's tokens that occur in it. A per-candidate callback then
// evaluates the tree on those positions with FTS5's semantics (package
// core/text: adjacency for phrases, FTS5's NEAR algorithm, NOT) to keep or
// drop the candidate, and scores the kept ones with FTS5's bm25 formula, so
// that both backends rank alike. User text never reaches bleve's query-string parser.
//
// An OR of plain terms and phrases that matches many documents scores the
// candidates of its rarest ones first, and more only until the result is
// proved exact (keyword_prune_rows, see prune.go).

// candidates returns a bleve query whose matches are a superset of e's.
func candidates(q *text.Query, e text.Expr) bq.Query {
	switch e.Op() {
	case text.OpPhrase:
		return phraseCandidates(q.Phrases()[e.Phrase()])
	case text.OpAnd, text.OpNear, text.OpOr:
		kids := e.Kids()
		qs := make([]bq.Query, len(kids))
		for i, k := range kids {
			qs[i] = candidates(q, k)
		}
		if e.Op() == text.OpOr {
			return bq.NewDisjunctionQuery(qs)
		}
		return bq.NewConjunctionQuery(qs)
	case text.OpNot:
		return candidates(q, e.Kids()[0])
	}
	return bq.NewMatchNoneQuery()
}

func phraseCandidates(p *text.Phrase) bq.Query {
	qs := make([]bq.Query, len(p.Tokens))
	for i, t := range p.Tokens {
		qs[i] = tokenQueryOf(t, p.Prefix && i == len(p.Tokens)-1)
	}
	if len(qs) == 1 {
		return qs[0]
	}
	return bq.NewConjunctionQuery(qs)
}

// tokenQuery matches the documents that contain any token of the query,
// so that every candidate carries the positions of all of them. Without a
// NOT, the candidates carry them already: a node of the query is positioned
// on a document (see text.Query.Freq) exactly when its candidate query
// matches it, and then reports the positions of all its tokens. The
// candidates of a NOT do not search its negative side.
func tokenQuery(q *text.Query) bq.Query {
	seen := map[string]bool{}
	var qs []bq.Query
	for _, p := range q.Phrases() {
		for i, t := range p.Tokens {
			prefix := p.Prefix && i == len(p.Tokens)-1
			if k := fmt.Sprint(prefix, t); !seen[k] {
				seen[k] = true
				qs = append(qs, tokenQueryOf(t, prefix))
			}
		}
	}
	return bq.NewDisjunctionQuery(qs)
}

func tokenQueryOf(t string, prefix bool) bq.Query {
	if prefix {
		q := bq.NewPrefixQuery(t)
		q.SetField(fieldContent)
		return q
	}
	q := bq.NewTermQuery(t)
	q.SetField(fieldContent)
	return q
}

// docOf returns the positions of the query's tokens in a candidate, which
// is length tokens long.
func docOf(d *search.DocumentMatch, length int) *text.Doc {
	pos := map[string][]int{}
	for _, ftl := range d.FieldTermLocations {
		if ftl.Field == fieldContent {
			pos[ftl.Term] = append(pos[ftl.Term], int(ftl.Location.Pos))
		}
	}
	for term, locs := range d.Locations[fieldContent] {
		for _, l := range locs {
			pos[term] = append(pos[term], int(l.Pos))
		}
	}
	for t, ps := range pos {
		slices.Sort(ps)
		pos[t] = slices.Compact(ps)
	}
	return text.DocOf(pos, length)
}

// filterQuery restricts candidates to f; it returns ok false when f matches
// nothing.
func filterQuery(f driver.Filter) (qs []bq.Query, ok bool) {
	add := func(field string, vals []string) bool {
		if vals == nil {
			return true
		}
		if len(vals) == 0 {
			return false
		}
		ds := make([]bq.Query, len(vals))
		for i, v := range vals {
			t := bq.NewTermQuery(v)
			t.SetField(field)
			ds[i] = t
		}
		qs = append(qs, unscored{bq.NewDisjunctionQuery(ds)})
		return true
	}
	ok = add(fieldNS, f.Namespaces) &&
		add(fieldPool, strs(f.Pools)) &&
		add(fieldStatus, strs(f.Statuses)) &&
		add(fieldType, strs(f.Types))
	return qs, ok
}

// unscored is a filter's query: it decides which documents may match and
// adds nothing to their scores (SearchKeyword scores them itself), so its
// term searchers read neither frequencies nor norms nor positions. A
// postings list read with them can only be advanced one document at a
// time (zap walks its frequency chunks); without them it skips through its
// bitmap. That matters because a filter's terms ("status active") hold
// most of the store: at 1M memories, advancing them to the query terms'
// documents was most of a search's time.
type unscored struct{ bq.Query }

// Searcher implements bleve's query.Query.
func (u unscored) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, o search.SearcherOptions) (search.Searcher, error) {
	o.Score, o.IncludeTermVectors, o.Explain = "none", false, false
	return u.Query.Searcher(ctx, r, m, o)
}

func strs[T ~string](vs []T) []string {
	if vs == nil {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// SearchKeyword returns up to limit memories that match q and f, best first
// (FTS5's bm25, negated: higher is better; ties broken by ascending id). A
// query that query.Validate rejects, or a limit that is not positive, is
// driver.ErrInvalid.
func (d *DB) SearchKeyword(ctx context.Context, q query.Node, f driver.Filter, limit int) ([]driver.Hit, error) {
	if err := d.enter("search"); err != nil {
		return nil, err
	}
	defer d.leave()
	if err := driver.CheckSearch(ctx, q, limit); err != nil {
		return nil, fmt.Errorf("bolt: %w", err)
	}
	cq, err := query.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("bolt: search: %w: %v", driver.ErrInvalid, err)
	}
	hits := []driver.Hit{}
	fqs, ok := filterQuery(f)
	if !ok || cq.None() {
		return hits, nil
	}

	d.vis.RLock()
	defer d.vis.RUnlock()
	if d.idx == nil {
		// The index could not be opened or repaired (see degraded.go).
		return d.scanSearch(ctx, cq, f, limit)
	}
	corpus := text.Corpus{Docs: d.kstats.docs, Tokens: d.kstats.tokens}
	if corpus.Docs == 0 {
		return hits, nil
	}
	idfs, dfs, err := d.idfs(ctx, cq, corpus)
	if err != nil {
		return nil, err
	}
	stranded, err := cq.Stranded(func(e text.Expr, from int64) (int64, *text.Doc, bool, error) { return d.first(ctx, cq, e, from) })
	if err != nil {
		return nil, err
	}

	var eval searcher.CustomFilterFunc = func(_ context.Context, dm *search.DocumentMatch) (bool, error) {
		dl, err := docLen(dm.Fields[fieldLen])
		if err != nil {
			return false, fmt.Errorf("document %s: %w", dm.ID, err)
		}
		ok, freq := cq.Freq(docOf(dm, dl))
		if ok && stranded != nil {
			id, err := parseDocID(dm.ID)
			if err != nil {
				return false, fmt.Errorf("keyword index document %q has a malformed id; reopen the store to rebuild the index", dm.ID)
			}
			stranded.Add(id, freq)
		}
		if ok {
			dm.Score = corpus.Score(freq, idfs, dl)
		}
		return ok, nil
	}
	cands := []bq.Query{candidates(cq, cq.Root())}
	if cq.HasNot() {
		cands = append(cands, tokenQuery(cq))
	}
	cands = append(cands, fqs...)
	size := int(min(uint64(limit), corpus.Docs))
	outcome := pruneNotTried
	if d.pruneRows > 0 && stranded == nil {
		if plan, ok := cq.PlanPrune(dfs, d.pruneRows); !ok {
			if plan.Rare != nil {
				outcome = pruneExact
			}
		} else {
			hits, o, err := d.searchPruned(ctx, cq, plan, cands, fqs, eval, size, idfs)
			if err != nil {
				return nil, err
			}
			if outcome = o; outcome != pruneExact {
				d.pruneCounts[outcome].Add(1)
				return hits, nil
			}
		}
	}
	d.pruneCounts[outcome].Add(1)
	return d.scored(ctx, bq.NewConjunctionQuery(cands), eval, size)
}

// scored runs the candidate query cand, keeping and scoring its matches
// with eval, and returns the best size of them, best first (ties by
// ascending id).
func (d *DB) scored(ctx context.Context, cand bq.Query, eval searcher.CustomFilterFunc, size int) ([]driver.Hit, error) {
	req := bleve.NewSearchRequestOptions(bq.NewCustomFilterQueryWithFilter(cand, eval, []string{fieldLen}, nil), size, 0, false)
	req.IncludeLocations = true
	req.SortBy([]string{"-_score", "_id"})
	res, err := d.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("bolt: search: %w", err)
	}
	hits := make([]driver.Hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		id, err := parseDocID(h.ID)
		if err != nil {
			return nil, fmt.Errorf("bolt: search: keyword index document %q has a malformed id; reopen the store to rebuild the index", h.ID)
		}
		hits = append(hits, driver.Hit{ID: id, Score: h.Score})
	}
	// bleve sorts by score then id already; sorting again guards the
	// contract against float formatting of ties in its sort keys.
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	return hits, nil
}

// docLen decodes the document length doc value.
func docLen(v any) (int, error) {
	switch v := v.(type) {
	case string:
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("malformed length %q", v)
		}
		return n, nil
	case float64:
		return int(v), nil
	}
	return 0, fmt.Errorf("no length (%T)", v)
}

// idfs returns the inverse document frequency of every phrase of cq, from the
// number of documents that contain it (whatever else the query says), as
// FTS5's bm25 computes it, and that number. The caller holds d.vis.
func (d *DB) idfs(ctx context.Context, cq *text.Query, corpus text.Corpus) ([]float64, []int64, error) {
	out := make([]float64, len(cq.Phrases()))
	dfs := make([]int64, len(cq.Phrases()))
	seen := map[string]int{}
	var r index.IndexReader
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	for i, p := range cq.Phrases() {
		k := p.Key()
		if j, ok := seen[k]; ok {
			out[i], dfs[i] = out[j], dfs[j]
			continue
		}
		var n uint64
		var err error
		if len(p.Tokens) == 1 && !p.Prefix {
			// A term's document count is its postings list's length.
			if r == nil {
				if r, err = d.indexReader(); err != nil {
					return nil, nil, err
				}
			}
			n, err = termCount(ctx, r, p.Tokens[0])
		} else {
			n, err = d.countPhrase(ctx, p)
		}
		if err != nil {
			return nil, nil, err
		}
		out[i], dfs[i] = corpus.IDF(n), int64(n)
		seen[k] = i
	}
	return out, dfs, nil
}

func (d *DB) indexReader() (index.IndexReader, error) {
	adv, err := d.idx.Advanced()
	if err != nil {
		return nil, err
	}
	return adv.Reader()
}

// termCount returns the number of live documents that contain term.
func termCount(ctx context.Context, r index.IndexReader, term string) (uint64, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(term), fieldContent, false, false, false)
	if err != nil {
		return 0, fmt.Errorf("bolt: search: count %q: %w", term, err)
	}
	defer tfr.Close()
	return tfr.Count(), nil
}

// first returns the document with the lowest id not below from on which cq
// positions e (see text.FirstFunc). The caller holds d.vis.
func (d *DB) first(ctx context.Context, cq *text.Query, e text.Expr, from int64) (int64, *text.Doc, bool, error) {
	var (
		mu    sync.Mutex
		best  int64 = -1
		bestD *text.Doc
	)
	filter := func(_ context.Context, dm *search.DocumentMatch) (bool, error) {
		id, err := parseDocID(dm.ID)
		if err != nil {
			return false, fmt.Errorf("keyword index document %q has a malformed id; reopen the store to rebuild the index", dm.ID)
		}
		doc := docOf(dm, 0)
		if id < from || !cq.Positioned(e, doc) {
			return false, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if best < 0 || id < best {
			best, bestD = id, doc
		}
		return false, nil
	}
	cand := bq.NewConjunctionQuery([]bq.Query{candidates(cq, e), tokenQuery(cq)})
	req := bleve.NewSearchRequestOptions(bq.NewCustomFilterQueryWithFilter(cand, filter, nil, nil), 0, 0, false)
	req.IncludeLocations = true
	if _, err := d.idx.SearchInContext(ctx, req); err != nil {
		return 0, nil, false, fmt.Errorf("bolt: search: %w", err)
	}
	return best, bestD, best >= 0, nil
}

// countPhrase returns the number of documents that contain p.
func (d *DB) countPhrase(ctx context.Context, p *text.Phrase) (uint64, error) {
	q := phraseCandidates(p)
	locations := len(p.Tokens) > 1
	if locations {
		q = bq.NewCustomFilterQueryWithFilter(q, func(_ context.Context, dm *search.DocumentMatch) (bool, error) {
			return docOf(dm, 0).Contains(p), nil
		}, nil, nil)
	}
	req := bleve.NewSearchRequestOptions(q, 0, 0, false)
	req.IncludeLocations = locations
	res, err := d.idx.SearchInContext(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("bolt: search: count %q: %w", p.Key(), err)
	}
	return res.Total, nil
}
