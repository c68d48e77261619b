package bolt

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	bq "github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/match"
	"github.com/memos-go/memos/core/query"
)

// How a keyword search works.
//
// The query AST is compiled into a tree of phrases (a term is a phrase of
// one token, perhaps a prefix) combined by AND, OR, NOT and NEAR. bleve only
// generates candidates: every phrase becomes a conjunction of term (or
// prefix) queries, NEAR the conjunction of its groups, "a NOT b" the
// candidates of a with b as an optional clause, so the candidates are a
// superset of the matches and every candidate carries the positions of all
// the query's tokens that occur in it. A per-candidate callback then
// evaluates the tree on those positions with FTS5's semantics (adjacency for
// phrases, FTS5's NEAR algorithm, NOT) to keep or drop the candidate, and
// scores the kept ones with FTS5's bm25 formula, so that both backends rank
// alike. User text never reaches bleve's query-string parser.

// phrase is a phrase of the compiled query: stemmed tokens, the last of them
// a prefix when prefix is set.
type phrase struct {
	idx    int // position in the query, which orders the bm25 sum as FTS5 does
	toks   []string
	prefix bool
}

func (p *phrase) key() string {
	k := strings.Join(p.toks, " ")
	if p.prefix {
		k += "*"
	}
	return k
}

type nodeKind int

const (
	kindPhrase nodeKind = iota
	kindAnd
	kindOr
	kindNot  // kids[0] NOT kids[1]
	kindNear // kids are phrases
	kindNone // matches nothing
)

type qnode struct {
	kind nodeKind
	ph   *phrase
	kids []*qnode
	dist int
}

// compiled is a query ready to run.
type compiled struct {
	root    *qnode
	phrases []*phrase
	hasNot  bool
}

func compileQuery(n query.Node) (*compiled, error) {
	c := &compiled{}
	root, err := c.compile(n, 0)
	if err != nil {
		return nil, err
	}
	c.root = root
	return c, nil
}

const maxQueryDepth = 200

func (c *compiled) newPhrase(words []string, prefix bool) *qnode {
	var toks []string
	for _, w := range words {
		// AST terms are already tokens; tokenizing again makes a term that
		// is not one token behave as FTS5 treats the quoted string.
		toks = append(toks, query.Tokenize(w)...)
	}
	if len(toks) == 0 {
		return &qnode{kind: kindNone}
	}
	for i, t := range toks {
		toks[i] = match.Stem(t)
	}
	p := &phrase{idx: len(c.phrases), toks: toks, prefix: prefix}
	c.phrases = append(c.phrases, p)
	return &qnode{kind: kindPhrase, ph: p}
}

func (c *compiled) compile(n query.Node, depth int) (*qnode, error) {
	if depth > maxQueryDepth {
		return nil, driver.Invalidf("query nests deeper than %d levels", maxQueryDepth)
	}
	switch n := n.(type) {
	case *query.Term:
		if n == nil {
			break
		}
		return c.newPhrase([]string{n.Text}, n.Prefix), nil
	case *query.Phrase:
		if n == nil {
			break
		}
		return c.newPhrase(n.Terms, false), nil
	case *query.And, *query.Or:
		var kids []query.Node
		kind := kindAnd
		if a, ok := n.(*query.And); ok {
			if a == nil {
				break
			}
			kids = a.Children
		} else {
			o := n.(*query.Or)
			if o == nil {
				break
			}
			kids, kind = o.Children, kindOr
		}
		if len(kids) == 0 {
			return nil, driver.Invalidf("query has an AND or OR without operands")
		}
		out := &qnode{kind: kind}
		for _, k := range kids {
			q, err := c.compile(k, depth+1)
			if err != nil {
				return nil, err
			}
			switch {
			case q.kind == kindNone && kind == kindAnd:
				return q, nil
			case q.kind == kindNone:
				continue
			}
			out.kids = append(out.kids, q)
		}
		switch len(out.kids) {
		case 0:
			return &qnode{kind: kindNone}, nil
		case 1:
			return out.kids[0], nil
		}
		return out, nil
	case *query.Not:
		if n == nil {
			break
		}
		pos, err := c.compile(n.Positive, depth+1)
		if err != nil {
			return nil, err
		}
		neg, err := c.compile(n.Negative, depth+1)
		if err != nil {
			return nil, err
		}
		switch {
		case pos.kind == kindNone:
			return pos, nil
		case neg.kind == kindNone:
			return pos, nil
		}
		c.hasNot = true
		return &qnode{kind: kindNot, kids: []*qnode{pos, neg}}, nil
	case *query.Near:
		if n == nil {
			break
		}
		if n.Distance < 0 {
			return nil, driver.Invalidf("NEAR distance %d is negative", n.Distance)
		}
		if len(n.Groups) == 0 {
			return nil, driver.Invalidf("query has a NEAR without groups")
		}
		out := &qnode{kind: kindNear, dist: n.Distance}
		for _, g := range n.Groups {
			var q *qnode
			switch g := g.(type) {
			case *query.Term:
				q = c.newPhrase([]string{g.Text}, g.Prefix)
			case *query.Phrase:
				q = c.newPhrase(g.Terms, false)
			default:
				return nil, driver.Invalidf("a NEAR group must be a term or a phrase, not %T", g)
			}
			if q.kind == kindNone {
				return q, nil
			}
			out.kids = append(out.kids, q)
		}
		if len(out.kids) == 1 {
			return out.kids[0], nil
		}
		return out, nil
	}
	if n == nil {
		return nil, driver.Invalidf("query is nil")
	}
	return nil, driver.Invalidf("unknown query node %T", n)
}

// candidates returns a bleve query whose matches are a superset of n's.
func candidates(n *qnode) bq.Query {
	switch n.kind {
	case kindPhrase:
		return phraseCandidates(n.ph)
	case kindAnd, kindNear:
		qs := make([]bq.Query, len(n.kids))
		for i, k := range n.kids {
			qs[i] = candidates(k)
		}
		return bq.NewConjunctionQuery(qs)
	case kindOr:
		qs := make([]bq.Query, len(n.kids))
		for i, k := range n.kids {
			qs[i] = candidates(k)
		}
		return bq.NewDisjunctionQuery(qs)
	case kindNot:
		return candidates(n.kids[0])
	}
	return bq.NewMatchNoneQuery()
}

func phraseCandidates(p *phrase) bq.Query {
	qs := make([]bq.Query, len(p.toks))
	for i, t := range p.toks {
		qs[i] = tokenQueryOf(t, p.prefix && i == len(p.toks)-1)
	}
	if len(qs) == 1 {
		return qs[0]
	}
	return bq.NewConjunctionQuery(qs)
}

// tokenQuery matches the documents that contain any token of the query,
// so that every candidate carries the positions of all of them. Without a
// NOT, the candidates carry them already: a node of the query is positioned
// on a document (see evaluate) exactly when its candidate query matches it,
// and then reports the positions of all its tokens. The candidates of a NOT
// do not search its negative side.
func tokenQuery(c *compiled) bq.Query {
	seen := map[string]bool{}
	var qs []bq.Query
	for _, p := range c.phrases {
		for i, t := range p.toks {
			prefix := p.prefix && i == len(p.toks)-1
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

// docTerms holds the positions of the query's tokens in one document.
type docTerms map[string][]uint64

func collectTerms(d *search.DocumentMatch) docTerms {
	dt := docTerms{}
	for _, ftl := range d.FieldTermLocations {
		if ftl.Field == fieldContent {
			dt[ftl.Term] = append(dt[ftl.Term], ftl.Location.Pos)
		}
	}
	for term, locs := range d.Locations[fieldContent] {
		for _, l := range locs {
			dt[term] = append(dt[term], l.Pos)
		}
	}
	for t, ps := range dt {
		slices.Sort(ps)
		dt[t] = slices.Compact(ps)
	}
	return dt
}

// positions returns the sorted positions of token t, or of every token
// starting with t when prefix is set.
func (dt docTerms) positions(t string, prefix bool) []uint64 {
	if !prefix {
		return dt[t]
	}
	var out []uint64
	n := 0
	for term, ps := range dt {
		if strings.HasPrefix(term, t) {
			out = append(out, ps...)
			n++
		}
	}
	if n > 1 {
		slices.Sort(out)
		out = slices.Compact(out)
	}
	return out
}

// instances returns the positions at which p starts in the document.
func (dt docTerms) instances(p *phrase) []uint64 {
	last := len(p.toks) - 1
	first := dt.positions(p.toks[0], p.prefix && last == 0)
	if last == 0 {
		return first
	}
	rest := make([][]uint64, last)
	for i := 1; i <= last; i++ {
		if rest[i-1] = dt.positions(p.toks[i], p.prefix && i == last); len(rest[i-1]) == 0 {
			return nil
		}
	}
	var out []uint64
outer:
	for _, s := range first {
		for i, ps := range rest {
			if _, ok := slices.BinarySearch(ps, s+uint64(i)+1); !ok {
				continue outer
			}
		}
		out = append(out, s)
	}
	return out
}

// evaluate evaluates n on a document whose query tokens are dt, the way
// FTS5 iterates its expression tree, and records in inst the instances of
// each phrase that FTS5's bm25 counts for the document. It reports whether n
// is positioned on the document (FTS5 visits it there: the document has all
// the tokens n needs, and n's parents let it stop there) and whether n
// matches. A node that is positioned but does not match ("nomatch" in FTS5)
// still counts its phrases unless an enclosing AND zeroes them; NOT counts
// the phrases of a positioned negative side that does not match.
//
// The one difference from FTS5: when a NEAR group that is a phrase of
// several tokens does not occur, FTS5 leaves the instance lists of the later
// groups as they were on an earlier document; they count 0 here.
func evaluate(n *qnode, dt docTerms, inst [][]uint64) (positioned, match bool) {
	switch n.kind {
	case kindPhrase:
		p := n.ph
		for i, t := range p.toks {
			if len(dt.positions(t, p.prefix && i == len(p.toks)-1)) == 0 {
				return false, false
			}
		}
		inst[p.idx] = dt.instances(p)
		return true, len(inst[p.idx]) > 0
	case kindNear:
		for _, k := range n.kids {
			for i, t := range k.ph.toks {
				if len(dt.positions(t, k.ph.prefix && i == len(k.ph.toks)-1)) == 0 {
					return false, false
				}
			}
		}
		groups := make([][]uint64, len(n.kids))
		widths := make([]int, len(n.kids))
		for i, k := range n.kids {
			groups[i] = dt.instances(k.ph)
			widths[i] = len(k.ph.toks)
			inst[k.ph.idx] = groups[i]
			if len(groups[i]) == 0 {
				return true, false // the later groups count 0, see above
			}
		}
		trimmed := nearMatch(groups, widths, n.dist)
		for i, k := range n.kids {
			inst[k.ph.idx] = trimmed[i]
		}
		return true, len(trimmed[0]) > 0
	case kindAnd:
		pos, ok := true, true
		for _, k := range n.kids {
			p, m := evaluate(k, dt, inst)
			pos = pos && p
			ok = ok && m
		}
		if !pos || !ok {
			clearInstances(n, inst)
		}
		return pos, pos && ok
	case kindOr:
		pos, ok := false, false
		for _, k := range n.kids {
			p, m := evaluate(k, dt, inst)
			pos = pos || p
			ok = ok || m
		}
		return pos, ok
	case kindNot:
		p1, m1 := evaluate(n.kids[0], dt, inst)
		if !p1 {
			clearInstances(n, inst)
			return false, false
		}
		p2, m2 := evaluate(n.kids[1], dt, inst)
		if p2 && m2 {
			clearInstances(n, inst)
			return false, false
		}
		return true, m1
	}
	return false, false
}

func clearInstances(n *qnode, inst [][]uint64) {
	if n.kind == kindPhrase {
		inst[n.ph.idx] = nil
		return
	}
	for _, k := range n.kids {
		clearInstances(k, inst)
	}
}

// nearMatch implements FTS5's NEAR: the groups (phrase start positions, each
// sorted, none empty; widths in tokens) match when one instance of each can be
// chosen so that the last of them starts at most dist tokens after the end of
// every other. It walks the instances the way FTS5 does and returns, per
// group, the instances that took part in a match (all empty when none did),
// which is what FTS5 counts for bm25.
func nearMatch(groups [][]uint64, widths []int, dist int) [][]uint64 {
	out := make([][]uint64, len(groups))
	idx := make([]int, len(groups))
	cur := func(i int) int64 { return int64(groups[i][idx[i]]) }
	// lookahead is the next position of group i, or MaxInt64 at its end.
	lookahead := func(i int) int64 {
		if idx[i]+1 < len(groups[i]) {
			return int64(groups[i][idx[i]+1])
		}
		return math.MaxInt64
	}
	// advance moves group i on and reports false when it is exhausted.
	advance := func(i int) bool {
		idx[i]++
		return idx[i] < len(groups[i])
	}
	for {
		iMax := cur(0)
		for match := false; !match; {
			match = true
			for i := range groups {
				iMin := iMax - int64(widths[i]) - int64(dist)
				if p := cur(i); p < iMin || p > iMax {
					match = false
					for cur(i) < iMin {
						if !advance(i) {
							return out
						}
					}
					if p := cur(i); p > iMax {
						iMax = p
					}
				}
			}
		}
		for i := range groups {
			p := uint64(cur(i))
			if n := len(out[i]); n == 0 || out[i][n-1] != p {
				out[i] = append(out[i], p)
			}
		}
		adv, best := 0, lookahead(0)
		for i := 1; i < len(groups); i++ {
			if la := lookahead(i); la < best {
				adv, best = i, la
			}
		}
		if !advance(adv) {
			return out
		}
	}
}

// bm25 parameters, as in FTS5.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// bm25 is FTS5's bm25() with every column weight 1, negated so that higher is
// better: freq[i] instances of phrase i in a document of dl tokens, idf[i]
// its inverse document frequency, avgdl the corpus' mean length. Explicit
// conversions keep the compiler from fusing operations, so the result is
// bit-identical to FTS5's.
func bm25(freq []float64, idf []float64, dl, avgdl float64) float64 {
	var score float64
	for i, f := range freq {
		num := float64(f * (bm25K1 + 1.0))
		den := float64(f + float64(bm25K1*float64(float64(1-bm25B)+float64(float64(bm25B*dl)/avgdl))))
		score = float64(score + float64(idf[i]*float64(num/den)))
	}
	return score
}

// idf is FTS5's inverse document frequency of a phrase found in hits of n
// documents.
func idf(n, hits uint64) float64 {
	v := math.Log(float64(float64(float64(n)-float64(hits))+0.5) / float64(float64(hits)+0.5))
	if v <= 0 {
		v = 1e-6
	}
	return v
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
		qs = append(qs, bq.NewDisjunctionQuery(ds))
		return true
	}
	ok = add(fieldNS, f.Namespaces) &&
		add(fieldPool, strs(f.Pools)) &&
		add(fieldStatus, strs(f.Statuses)) &&
		add(fieldType, strs(f.Types))
	return qs, ok
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
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bolt: search: %w", err)
	}
	if q == nil {
		return nil, driver.Invalidf("bolt: search: no query")
	}
	if err := query.Validate(q); err != nil {
		return nil, fmt.Errorf("bolt: search: %w: %v", driver.ErrInvalid, err)
	}
	if limit <= 0 {
		return nil, driver.Invalidf("bolt: search: limit %d is not positive", limit)
	}
	cq, err := compileQuery(q)
	if err != nil {
		return nil, fmt.Errorf("bolt: search: %w", err)
	}
	hits := []driver.Hit{}
	fqs, ok := filterQuery(f)
	if !ok || cq.root.kind == kindNone {
		return hits, nil
	}

	d.vis.RLock()
	defer d.vis.RUnlock()
	if d.idx == nil {
		return nil, d.errIndexClosed("keyword search")
	}
	st := d.kstats
	if st.docs == 0 {
		return hits, nil
	}
	idfs, err := d.idfs(ctx, cq, st.docs)
	if err != nil {
		return nil, err
	}
	avgdl := float64(st.tokens) / float64(st.docs)

	eval := func(_ context.Context, dm *search.DocumentMatch) (bool, error) {
		dt := collectTerms(dm)
		inst := make([][]uint64, len(cq.phrases))
		if _, ok := evaluate(cq.root, dt, inst); !ok {
			return false, nil
		}
		dl, err := docLen(dm.Fields[fieldLen])
		if err != nil {
			return false, fmt.Errorf("document %s: %w", dm.ID, err)
		}
		freq := make([]float64, len(inst))
		for i, in := range inst {
			freq[i] = float64(len(in))
		}
		dm.Score = bm25(freq, idfs, dl, avgdl)
		return true, nil
	}
	cands := []bq.Query{candidates(cq.root)}
	if cq.hasNot {
		cands = append(cands, tokenQuery(cq))
	}
	cand := bq.NewConjunctionQuery(append(cands, fqs...))
	size := int(min(uint64(limit), st.docs))
	req := bleve.NewSearchRequestOptions(bq.NewCustomFilterQueryWithFilter(cand, eval, []string{fieldLen}, nil), size, 0, false)
	req.IncludeLocations = true
	req.SortBy([]string{"-_score", "_id"})
	res, err := d.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("bolt: search: %w", err)
	}
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
func docLen(v any) (float64, error) {
	switch v := v.(type) {
	case string:
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("malformed length %q", v)
		}
		return float64(n), nil
	case float64:
		return v, nil
	}
	return 0, fmt.Errorf("no length (%T)", v)
}

// idfs returns the inverse document frequency of every phrase of cq, from the
// number of documents that contain it (whatever else the query says), as
// FTS5's bm25 computes it. The caller holds d.vis.
func (d *DB) idfs(ctx context.Context, cq *compiled, docs uint64) ([]float64, error) {
	out := make([]float64, len(cq.phrases))
	seen := map[string]float64{}
	var r index.IndexReader
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	for i, p := range cq.phrases {
		k := p.key()
		if v, ok := seen[k]; ok {
			out[i] = v
			continue
		}
		var n uint64
		var err error
		if len(p.toks) == 1 && !p.prefix {
			// A term's document count is its postings list's length.
			if r == nil {
				if r, err = d.indexReader(); err != nil {
					return nil, err
				}
			}
			n, err = termCount(ctx, r, p.toks[0])
		} else {
			n, err = d.countPhrase(ctx, p)
		}
		if err != nil {
			return nil, err
		}
		out[i] = idf(docs, n)
		seen[k] = out[i]
	}
	return out, nil
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

// countPhrase returns the number of documents that contain p.
func (d *DB) countPhrase(ctx context.Context, p *phrase) (uint64, error) {
	q := phraseCandidates(p)
	locations := len(p.toks) > 1
	if locations {
		q = bq.NewCustomFilterQueryWithFilter(q, func(_ context.Context, dm *search.DocumentMatch) (bool, error) {
			return len(collectTerms(dm).instances(p)) > 0, nil
		}, nil, nil)
	}
	req := bleve.NewSearchRequestOptions(q, 0, 0, false)
	req.IncludeLocations = locations
	res, err := d.idx.SearchInContext(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("bolt: search: count %q: %w", p.key(), err)
	}
	return res.Total, nil
}
