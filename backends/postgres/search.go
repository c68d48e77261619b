package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("postgres: keyword search: %w", err)
	}
	if q == nil {
		return nil, driver.Invalidf("postgres: keyword search: no query")
	}
	if err := query.Validate(q); err != nil {
		return nil, fmt.Errorf("postgres: keyword search: %w: %v", driver.ErrInvalid, err)
	}
	if limit <= 0 {
		return nil, driver.Invalidf("postgres: keyword search: limit %d is not positive", limit)
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
	if oneStatement(tq) {
		hits, err = d.searchOnce(ctx, tq, cand, f)
	} else {
		hits, err = d.searchInView(ctx, tq, cand, f)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	slices.SortFunc(hits, func(a, b driver.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return int(a.ID - b.ID)
	})
	return hits[:min(limit, len(hits))], nil
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
		doc := text.NewDoc(*content)
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
// their candidates evaluated, and a NOT the ordered walks of text.Stranded.
func (d *DB) searchInView(ctx context.Context, tq *text.Query, cand string, f driver.Filter) ([]driver.Hit, error) {
	hits := []driver.Hit{}
	where, fargs := filterSQL(f, 2)
	err := d.View(ctx, func(rtx driver.ReadTx) error {
		t := rtx.(*readTx)
		var c text.Corpus
		var docs, tokens int64
		if err := t.queryRow(`SELECT docs, tokens FROM store`, nil, &docs, &tokens); err != nil {
			return t.fail("keyword search", err)
		}
		if docs <= 0 {
			return nil
		}
		c.Docs, c.Tokens = uint64(docs), uint64(tokens)
		idf, err := d.idfs(t, tq, c)
		if err != nil {
			return err
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
		n := 0
		err = t.each(`SELECT id, content FROM memories AS m WHERE terms @@ $1::tsquery`+where,
			append([]any{cand}, fargs...), func(id int64, content string) {
				n++
				doc := text.NewDoc(content)
				if match, freq := tq.Freq(doc); match {
					stranded.Add(id, freq)
					hits = append(hits, driver.Hit{ID: id, Score: c.Score(freq, idf, doc.Len())})
				}
			})
		d.candidates.Add(int64(n))
		d.matched.Add(int64(len(hits)))
		return err
	})
	return hits, err
}

// idfs returns the inverse document frequency of every phrase of q, from the
// number of current memories that contain it, whatever else the query or
// the filter says, as FTS5's bm25 computes it. A one-token phrase is counted
// by the index alone (a lexeme, or a prefix of lexemes, is exactly what the
// tsvector holds); a longer phrase by evaluating its candidates.
func (d *DB) idfs(t *readTx, q *text.Query, c text.Corpus) ([]float64, error) {
	ps := q.Phrases()
	out := make([]float64, len(ps))
	seen := map[string]float64{}
	for i, p := range ps {
		k := p.Key()
		if v, ok := seen[k]; ok {
			out[i] = v
			continue
		}
		var hits int64
		if len(p.Tokens) > 0 {
			cand := phraseTSQuery(p)
			if len(p.Tokens) == 1 && lexeme(p.Tokens[0]) == p.Tokens[0] {
				if err := t.queryRow(`SELECT count(*) FROM memories WHERE terms @@ $1::tsquery`, []any{cand}, &hits); err != nil {
					return nil, t.fail("keyword search", err)
				}
			} else {
				err := t.each(`SELECT id, content FROM memories WHERE terms @@ $1::tsquery`, []any{cand}, func(_ int64, content string) {
					if text.NewDoc(content).Contains(p) {
						hits++
					}
				})
				if err != nil {
					return nil, err
				}
			}
		}
		out[i] = c.IDF(uint64(hits))
		seen[k] = out[i]
	}
	return out, nil
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
