package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// Keyword search statements. Without a filter the index alone answers; with
// one, each match is joined to its record by rowid (CROSS JOIN keeps the
// index as the outer loop, so the cost is one primary-key lookup per match).
const (
	qSearch = `SELECT rowid, bm25(memories_fts) FROM memories_fts
		WHERE memories_fts MATCH ? ORDER BY 2, 1 LIMIT ?`
	qSearchFiltered = `SELECT memories_fts.rowid, bm25(memories_fts) FROM memories_fts
		CROSS JOIN memories AS m INDEXED BY memories_scope ON m.id = memories_fts.rowid
		WHERE memories_fts MATCH ?%s ORDER BY 2, 1 LIMIT ?`
)

// SearchKeyword returns up to limit memories whose current content matches
// q and that pass f, best first: Score is the negated BM25 rank (higher is
// better), ties broken by ascending id. q is run as its canonical FTS5 text
// (q.String()), so every operator means what it means in FTS5.
func (d *DB) SearchKeyword(ctx context.Context, q query.Node, f driver.Filter, limit int) ([]driver.Hit, error) {
	if err := d.enter("keyword search"); err != nil {
		return nil, err
	}
	defer d.leave()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	if q == nil {
		return nil, driver.Invalidf("keyword search: no query")
	}
	if err := query.Validate(q); err != nil {
		return nil, fmt.Errorf("keyword search: %w: %v", driver.ErrInvalid, err)
	}
	if limit <= 0 {
		return nil, driver.Invalidf("keyword search: limit %d is not positive", limit)
	}
	expr := q.String()
	where, fargs := filterSQL(f)
	text := qSearch
	if where != "" {
		text = fmt.Sprintf(qSearchFiltered, where)
	}
	st, temporary, err := d.searchStmt(ctx, text)
	if err != nil {
		return nil, dbError(ctx, "keyword search", err)
	}
	if temporary {
		defer st.Close()
	}
	args := make([]any, 0, len(fargs)+2)
	args = append(append(append(args, expr), fargs...), limit)
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, searchError(ctx, expr, err)
	}
	defer rows.Close()
	hits := make([]driver.Hit, 0, min(limit, 64))
	for rows.Next() {
		var h driver.Hit
		var rank float64
		if err := rows.Scan(&h.ID, &rank); err != nil {
			return nil, searchError(ctx, expr, err)
		}
		h.Score = -rank
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, searchError(ctx, expr, err)
	}
	return hits, nil
}

// maxSearchStmts bounds the statements kept prepared for keyword search:
// one per shape of filter (which fields are set, and how many values each
// list has). Filters beyond that are prepared for one search.
const maxSearchStmts = 64

// searchStmt returns text prepared on the read pool, and whether the caller
// must close it.
func (d *DB) searchStmt(ctx context.Context, text string) (*sql.Stmt, bool, error) {
	d.searchMu.Lock()
	defer d.searchMu.Unlock()
	if st, ok := d.searchStmts[text]; ok {
		return st, false, nil
	}
	st, err := d.r.PrepareContext(ctx, text)
	if err != nil {
		return nil, false, err
	}
	if len(d.searchStmts) >= maxSearchStmts {
		return st, true, nil
	}
	d.searchStmts[text] = st
	return st, false, nil
}

// searchError reports an FTS5 rejection of the query as ErrInvalid (it
// should not happen: the AST renders valid syntax) and anything else as a
// store error. The statement itself is ours and was prepared, so a plain
// SQLITE_ERROR while running it can only come from the MATCH expression.
func searchError(ctx context.Context, expr string, err error) error {
	var se *msqlite.Error
	if ctx.Err() == nil && errors.As(err, &se) && se.Code() == sqlite3.SQLITE_ERROR {
		return fmt.Errorf("keyword search: the index rejected the query %s (%v): %w", expr, err, driver.ErrInvalid)
	}
	return dbError(ctx, fmt.Sprintf("keyword search for %s", expr), err)
}
