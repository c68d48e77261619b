package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// How a keyword search works.
//
// The GIN index over memories.terms (the distinct stemmed tokens of the
// current content, made by core/text, not by PostgreSQL's parser) only
// proposes candidates: the query becomes a tsquery over those lexemes in
// which a phrase or NEAR is the conjunction of its tokens and "a NOT b" is
// a, so the candidates are a superset of the matches. Each candidate's
// content is then evaluated with core/text (FTS5's phrases, NEAR, prefixes
// and NOT) and scored with FTS5's bm25 over the whole store's figures,
// which the store row keeps, so that results and scores equal the sqlite
// backend's. The cost grows with the number of candidates, not matches:
// BackendStats reports both.
//
// A natural-language question becomes an OR of its content words, and at
// 100k memories of conversation a question with a common word has tens of
// thousands of candidates, each fetched and evaluated. As on sqlite and
// bolt, an OR of plain phrases (no prefix, NOT, AND or NEAR) whose document
// frequencies add up to more than keyword_prune_rows is evaluated in two
// phases (text.Query.PlanPrune chooses the phrases): the candidates are
// the memories that pass the filter and contain one of the rarest phrases,
// as many as keep the sum of their document frequencies within the budget,
// and each is evaluated and scored over ALL the query's phrases as before,
// so scores are unchanged. When the limit-th hit scores above
// text.PrunePlan.Bound, no other memory can enter the top limit and the
// result is the one evaluating every candidate returns; otherwise it is the
// best of the rare phrases' matches, an approximation (README, Keyword
// search). When fewer than limit of them are hits, every candidate is
// evaluated. keyword_prune_rows -1 turns the two phases off.

// analyze returns the distinct lexemes of content for the terms column (a
// non-nil slice: NULL is not a tsvector) and its length in tokens.
func analyze(content string) ([]string, int) {
	toks := text.Tokenize(content)
	out := make([]string, 0, len(toks))
	seen := make(map[string]struct{}, len(toks))
	for _, t := range toks {
		s := lexeme(text.Stem(t))
		if _, dup := seen[s]; !dup {
			seen[s] = struct{}{}
			out = append(out, s)
		}
	}
	return out, len(toks)
}

// tsquery renders e as a tsquery whose matches are a superset of e's; ok is
// false when e matches nothing.
func tsquery(q *text.Query, e text.Expr) (s string, ok bool) {
	switch e.Op() {
	case text.OpPhrase:
		p := q.Phrases()[e.Phrase()]
		return phraseTSQuery(p), len(p.Tokens) > 0
	case text.OpAnd, text.OpNear:
		var parts []string
		for _, k := range e.Kids() {
			s, ok := tsquery(q, k)
			if !ok {
				return "", false
			}
			parts = append(parts, s)
		}
		return group(parts, " & "), len(parts) > 0
	case text.OpOr:
		var parts []string
		for _, k := range e.Kids() {
			if s, ok := tsquery(q, k); ok {
				parts = append(parts, s)
			}
		}
		return group(parts, " | "), len(parts) > 0
	case text.OpNot:
		return tsquery(q, e.Kids()[0])
	}
	return "", false
}

// phraseTSQuery is the conjunction of p's tokens, the last a prefix when p
// is one.
func phraseTSQuery(p *text.Phrase) string {
	parts := make([]string, len(p.Tokens))
	for i, t := range p.Tokens {
		parts[i] = quoteLexeme(lexeme(t))
		if p.Prefix && i == len(p.Tokens)-1 {
			parts[i] += ":*"
		}
	}
	return group(parts, " & ")
}

func group(parts []string, op string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, op) + ")"
}

// quoteLexeme quotes t for tsquery input, which takes lexemes as they are.
func quoteLexeme(t string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(t) + "'"
}

// matchesNothing reports a filter with an empty, non-nil list.
func matchesNothing(f driver.Filter) bool {
	return f.Namespaces != nil && len(f.Namespaces) == 0 || f.Pools != nil && len(f.Pools) == 0 ||
		f.Statuses != nil && len(f.Statuses) == 0 || f.Types != nil && len(f.Types) == 0
}

// SearchKeyword returns up to limit memories whose current content matches
// q and that pass f, best first, scored as FTS5's bm25 (negated: higher is
// better), ties broken by ascending id.
func (d *DB) SearchKeyword(ctx context.Context, q query.Node, f driver.Filter, limit int) ([]driver.Hit, error) {
	if err := d.enter("keyword search"); err != nil {
		return nil, err
	}
	defer d.leave()
	if err := driver.CheckSearch(ctx, q, limit); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	tq, err := query.Compile(q)
	if err != nil {
		return nil, fmt.Errorf("postgres: keyword search: %w: %v", driver.ErrInvalid, err)
	}
	cand, ok := tsquery(tq, tq.Root())
	if !ok || matchesNothing(f) {
		return []driver.Hit{}, nil
	}
	var hits []driver.Hit
	if oneStatement(tq) && !d.mayPrune(tq) {
		hits, err = d.searchOnce(ctx, tq, cand, f)
	} else {
		hits, err = d.searchInView(ctx, tq, cand, f, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	sortHits(hits)
	return hits[:min(limit, len(hits))], nil
}

// sortHits sorts hits best first, ties by ascending id.
func sortHits(hits []driver.Hit) {
	slices.SortFunc(hits, func(a, b driver.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
}

// mayPrune reports whether q may be evaluated in two phases: the two
// phases are on and q is an OR of at least two operands (whether they are
// plain phrases and the plan applies is text.Query.PlanPrune's to say).
func (d *DB) mayPrune(q *text.Query) bool {
	return d.pruneRows > 0 && !q.HasNot() && q.Root().Op() == text.OpOr && len(q.Root().Kids()) >= 2
}

// oneStatement reports whether one SQL statement can gather everything q's
// search needs: every phrase is one token the index holds as it is (so the
// index counts the memories that contain it exactly) and there is no NOT
// (which needs text.Stranded's ordered walks).
func oneStatement(q *text.Query) bool {
	if q.HasNot() {
		return false
	}
	for _, p := range q.Phrases() {
		if len(p.Tokens) != 1 || lexeme(p.Tokens[0]) != p.Tokens[0] {
			return false
		}
	}
	return true
}

// searchOnce runs a keyword search that oneStatement accepts as one
// statement, so one round trip to the server and no transaction: a
// statement reads one snapshot, so the corpus figures, the document
// frequencies and the candidates agree. Each row carries the store's
// figures and the phrases' document frequencies (store-wide, whatever f
// says), and a candidate, or none (id NULL) when there is no candidate.
func (d *DB) searchOnce(ctx context.Context, q *text.Query, cand string, f driver.Filter) ([]driver.Hit, error) {
	ps := q.Phrases()
	dfq := make([]string, len(ps))
	for i, p := range ps {
		dfq[i] = phraseTSQuery(p)
	}
	where, fargs := filterSQL(f, 3)
	rows, err := d.pool.Query(ctx, `WITH s AS (
			SELECT docs, tokens, ARRAY(
				SELECT (SELECT count(*) FROM memories WHERE terms @@ u.q::tsquery)
				FROM unnest($2::text[]) WITH ORDINALITY AS u (q, i) ORDER BY u.i) AS df
			FROM store)
		SELECT s.docs, s.tokens, s.df, c.id, c.content FROM s LEFT JOIN (
			SELECT m.id, m.content FROM memories AS m WHERE m.terms @@ $1::tsquery`+where+`) AS c ON true`,
		append([]any{cand, dfq}, fargs...)...)
	if err != nil {
		return nil, dbError(ctx, "keyword search", err)
	}
	hits := []driver.Hit{}
	newDoc := q.DocFunc()
	var (
		c            text.Corpus
		idf          []float64
		docs, tokens int64
		df           []int64
		id           *int64
		content      *string
		n            int
	)
	_, err = pgx.ForEachRow(rows, []any{&docs, &tokens, &df, &id, &content}, func() error {
		if idf == nil {
			if len(df) != len(ps) {
				return fmt.Errorf("%d document frequencies for %d phrases", len(df), len(ps))
			}
			c.Docs, c.Tokens = uint64(docs), uint64(tokens)
			idf = make([]float64, len(df))
			for i, v := range df {
				idf[i] = c.IDF(uint64(v))
			}
		}
		if id == nil || docs <= 0 {
			return nil
		}
		n++
		doc := newDoc(*content)
		if match, freq := q.Freq(doc); match {
			hits = append(hits, driver.Hit{ID: *id, Score: c.Score(freq, idf, doc.Len())})
		}
		return nil
	})
	if err != nil {
		return nil, dbError(ctx, "keyword search", err)
	}
	d.candidates.Add(int64(n))
	d.matched.Add(int64(len(hits)))
	return hits, nil
}

// searchInView runs any keyword search in one read transaction: the
// document frequencies of longer phrases and prefixes of cut tokens need
// their candidates evaluated, a NOT the ordered walks of text.Stranded,
// and the two phases (see above) several statements. When the two phases
// answer, the result holds limit hits.
func (d *DB) searchInView(ctx context.Context, tq *text.Query, cand string, f driver.Filter, limit int) ([]driver.Hit, error) {
	hits := []driver.Hit{}
	where, fargs := filterSQL(f, 2)
	err := d.View(ctx, func(rtx driver.ReadTx) error {
		t := rtx.(*readTx)
		c, dfs, err := d.figures(t, tq)
		if err != nil || c.Docs == 0 {
			return err
		}
		idf := make([]float64, len(dfs))
		for i, v := range dfs {
			idf[i] = c.IDF(uint64(v))
		}
		if plan, ok := tq.PlanPrune(dfs, d.pruneRows); ok {
			rare := make([]string, len(plan.Rare))
			for i, p := range plan.Rare {
				rare[i] = phraseTSQuery(tq.Phrases()[p])
			}
			ph, err := d.evaluate(t, tq, group(rare, " | "), where, fargs, c, idf, nil)
			if err != nil {
				return err
			}
			if len(ph) >= limit {
				sortHits(ph)
				hits = ph[:limit]
				if hits[limit-1].Score > plan.Bound(idf) {
					d.pruned[0].Add(1)
				} else {
					d.pruned[1].Add(1)
				}
				return nil
			}
			// Too few: memories that are not candidates fill the rest.
		}
		// FTS5 leaves the phrases of some NOTs positioned on a document
		// they were not searched on; bm25 counts them there (see
		// text.Stranded). Only queries with a NOT can have any.
		stranded, err := tq.Stranded(func(e text.Expr, from int64) (int64, *text.Doc, bool, error) {
			return t.first(tq, e, from)
		})
		if err != nil {
			return err
		}
		hits, err = d.evaluate(t, tq, cand, where, fargs, c, idf, stranded)
		return err
	})
	return hits, err
}

// evaluate returns the memories that the tsquery cand proposes and that
// pass the filter clause where (its arguments from $2), which match q,
// scored with the store's figures c and the phrases' idf, the instances
// stranded on them added (nil: none).
func (d *DB) evaluate(t *readTx, q *text.Query, cand, where string, fargs []any, c text.Corpus, idf []float64, stranded text.Stranded) ([]driver.Hit, error) {
	hits := []driver.Hit{}
	n := 0
	newDoc := q.DocFunc()
	err := t.each(`SELECT id, content FROM memories AS m WHERE terms @@ $1::tsquery`+where,
		append([]any{cand}, fargs...), func(id int64, content string) {
			n++
			doc := newDoc(content)
			if match, freq := q.Freq(doc); match {
				stranded.Add(id, freq)
				hits = append(hits, driver.Hit{ID: id, Score: c.Score(freq, idf, doc.Len())})
			}
		})
	d.candidates.Add(int64(n))
	d.matched.Add(int64(len(hits)))
	return hits, err
}

// dfCache keeps the document frequencies the index counted, for the store
// state key (the store row: change sequence, last id, memories, tokens),
// which every write that changes a memory's terms changes: counting a
// common term visits every row that holds it (tens of thousands at 100k),
// which is most of a two-phase search's cost.
type dfCache struct {
	mu  sync.Mutex
	key [4]int64
	df  map[string]int64 // by the phrase's tsquery
}

// maxCachedDF bounds the cache; it starts over when full.
const maxCachedDF = 1 << 16

// lookup returns the cached frequencies of qs (-1 for those it lacks) and
// the key they were counted under.
func (c *dfCache) lookup(qs []string) ([]int64, [4]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int64, len(qs))
	for i, q := range qs {
		v, ok := c.df[q]
		if !ok {
			v = -1
		}
		out[i] = v
	}
	return out, c.key
}

// at returns the cached frequency of q if it was counted under key.
func (c *dfCache) at(key [4]int64, q string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.df[q]
	return v, ok && c.key == key
}

// keep records the frequencies dfs of qs, counted under key.
func (c *dfCache) keep(key [4]int64, qs []string, dfs []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key != key || len(c.df)+len(qs) > maxCachedDF {
		c.key, c.df = key, make(map[string]int64, len(qs))
	}
	for i, q := range qs {
		c.df[q] = dfs[i]
	}
}

// qFigures reads the store row and counts the memories that match each of
// the tsqueries $1.
const qFigures = `SELECT seq, last_id, docs, tokens, ARRAY(
		SELECT (SELECT count(*) FROM memories WHERE terms @@ u.q::tsquery)
		FROM unnest($1::text[]) WITH ORDINALITY AS u (q, i) ORDER BY u.i)
	FROM store`

// figures returns the store's figures and the document frequency of every
// phrase of q: the number of current memories that contain it, whatever
// else the query or a filter says, as FTS5's bm25 counts it. The index
// alone counts one-token phrases (a lexeme is exactly what the tsvector
// holds), in the statement that reads the figures; a longer phrase, or a
// token cut to a lexeme, is counted by evaluating its candidates. Either
// comes from d.dfs when counted in the same store state.
func (d *DB) figures(t *readTx, q *text.Query) (text.Corpus, []int64, error) {
	ps := q.Phrases()
	dfs := make([]int64, len(ps))
	first := map[string]int{} // phrase key → the index of its first phrase
	var counted []string      // tsqueries the index counts, and whose
	var into []int            // phrase's df each count is
	for i, p := range ps {
		if _, ok := first[p.Key()]; ok {
			continue
		}
		first[p.Key()] = i
		if len(p.Tokens) == 1 && lexeme(p.Tokens[0]) == p.Tokens[0] {
			counted = append(counted, phraseTSQuery(p))
			into = append(into, i)
		}
	}
	// Count what the cache lacks, and read the store state: if it is not
	// the cache's, count the rest too (the same snapshot).
	cached, ckey := d.dfs.lookup(counted)
	var key [4]int64
	count := func(need func(k int) bool) error {
		var qs []string
		var at []int
		for k, c := range counted {
			if need(k) {
				qs, at = append(qs, c), append(at, k)
			}
		}
		var n []int64
		err := t.queryRow(qFigures, []any{qs}, &key[0], &key[1], &key[2], &key[3], &n)
		if err != nil {
			return t.fail("keyword search", err)
		}
		if len(n) != len(qs) {
			return fmt.Errorf("postgres: keyword search: %d document frequencies for %d phrases", len(n), len(qs))
		}
		for j, k := range at {
			cached[k] = n[j]
		}
		return nil
	}
	stale := make([]bool, len(counted)) // counted before, but maybe not now
	if err := count(func(k int) bool { stale[k] = cached[k] >= 0; return cached[k] < 0 }); err != nil {
		return text.Corpus{}, nil, err
	}
	if key != ckey && slices.Contains(stale, true) {
		if err := count(func(k int) bool { return stale[k] }); err != nil {
			return text.Corpus{}, nil, err
		}
	}
	d.dfs.keep(key, counted, cached)
	for k, i := range into {
		dfs[i] = cached[k]
	}
	docs, tokens := key[2], key[3]
	if docs <= 0 {
		return text.Corpus{}, dfs, nil
	}
	for i, p := range ps {
		j := first[p.Key()]
		switch {
		case j != i:
			dfs[i] = dfs[j]
		case len(p.Tokens) == 0 || slices.Contains(into, i):
		default:
			// Cached by the phrase's key, which no tsquery equals.
			k := "phrase " + p.Key()
			if v, ok := d.dfs.at(key, k); ok {
				dfs[i] = v
				continue
			}
			err := t.each(`SELECT id, content FROM memories WHERE terms @@ $1::tsquery`, []any{phraseTSQuery(p)}, func(_ int64, content string) {
				if text.NewDoc(content).Contains(p) {
					dfs[i]++
				}
			})
			if err != nil {
				return text.Corpus{}, nil, err
			}
			d.dfs.keep(key, []string{k}, dfs[i:i+1])
		}
	}
	return text.Corpus{Docs: uint64(docs), Tokens: uint64(tokens)}, dfs, nil
}

// first returns the memory with the lowest id not below from on which q
// positions e, whatever a search filters (see text.FirstFunc).
func (t *readTx) first(q *text.Query, e text.Expr, from int64) (int64, *text.Doc, bool, error) {
	cand, ok := tsquery(q, e)
	if !ok {
		return 0, nil, false, nil
	}
	for {
		var (
			found    bool
			foundID  int64
			foundDoc *text.Doc
			last     int64
			rows     int
		)
		err := t.each(`SELECT id, content FROM memories WHERE terms @@ $1::tsquery AND id >= $2 ORDER BY id LIMIT $3`,
			[]any{cand, from, pageSize}, func(id int64, content string) {
				rows++
				last = id
				if found {
					return
				}
				if d := text.NewDoc(content); q.Positioned(e, d) {
					found, foundID, foundDoc = true, id, d
				}
			})
		if err != nil || found || rows < pageSize {
			return foundID, foundDoc, found, err
		}
		from = last + 1
	}
}

// each runs q, which selects (id, content), and calls fn for every row
// while the rows are open (fn must not use the transaction).
func (t *readTx) each(q string, args []any, fn func(id int64, content string)) error {
	if err := t.lock(); err != nil {
		return t.fail("keyword search", err)
	}
	defer t.mu.Unlock()
	rows, err := t.query(q, args...)
	if err != nil {
		return t.fail("keyword search", err)
	}
	var id int64
	var content string
	_, err = pgx.ForEachRow(rows, []any{&id, &content}, func() error {
		fn(id, content)
		return nil
	})
	return t.fail("keyword search", err)
}
