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
	if err := driver.CheckSearch(ctx, q, limit); err != nil {
		return nil, err
	}
	where, fargs := filterSQL(f)
	outcome := pruneNotTried
	if d.pruneRows > 0 {
		if phrases := prunable(q); phrases != nil {
			hits, o, err := d.searchPruned(ctx, phrases, where, fargs, limit)
			if err != nil {
				return nil, dbError(ctx, fmt.Sprintf("keyword search for %s", q), err)
			}
			if outcome = o; outcome != pruneExact {
				d.pruneCounts[outcome].Add(1)
				return hits, nil
			}
		}
	}
	d.pruneCounts[outcome].Add(1)
	expr := q.String()
	if where != "" && d.tryUnfiltered(where) {
		hits, ok, err := d.searchThenFilter(ctx, expr, where, fargs, limit)
		if err != nil {
			return nil, searchError(ctx, expr, err)
		}
		d.unfilteredResult(where, ok)
		if ok {
			return hits, nil
		}
	}
	return d.searchPlain(ctx, expr, where, fargs, limit)
}

// searchPlain runs the FTS5 query expr (with the filter clause where and
// its arguments): FTS5 scores every match and keeps the best limit.
func (d *DB) searchPlain(ctx context.Context, expr, where string, fargs []any, limit int) ([]driver.Hit, error) {
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

// Filtering after ranking.
//
// A filtered search joins every match to its record, which at 100k memories
// doubles the cost of a query that matches many rows. But the engine's
// filter (the scope's namespaces, active memories) usually passes most
// rows, and a filter does not change a row's bm25 (FTS5 computes it over
// the whole index). So a filtered search first ranks without the filter,
// keeping unfilteredRows(limit) rows, and checks only those against the
// filter, in the same read transaction: when at least limit of them pass,
// or the query matched no more rows than that, the first limit that pass
// are exactly the filtered query's result (the same order by score, then
// id; the same scores). Otherwise the filtered query runs. A filter shape
// that needed the filtered query is not tried unfiltered again for its
// next unfilteredBackoff searches.

// unfilteredRows is how many rows a filtered search ranks without the
// filter before it checks them.
func unfilteredRows(limit int) int { return 2*limit + 16 }

const unfilteredBackoff = 32

// qPass selects, of the ids in a JSON array, those whose record passes a
// filter clause (%s).
const qPass = `SELECT m.id FROM memories AS m INDEXED BY memories_scope
	WHERE m.id IN (SELECT value FROM json_each(?))%s`

// tryUnfiltered reports whether a search with filter clause where should
// rank unfiltered first.
func (d *DB) tryUnfiltered(where string) bool {
	d.searchMu.Lock()
	defer d.searchMu.Unlock()
	if n := d.unfilteredSkip[where]; n > 0 {
		d.unfilteredSkip[where] = n - 1
		return false
	}
	return true
}

// unfilteredResult records whether ranking unfiltered first answered a
// search with filter clause where.
func (d *DB) unfilteredResult(where string, ok bool) {
	d.searchMu.Lock()
	defer d.searchMu.Unlock()
	if ok {
		delete(d.unfilteredSkip, where)
		return
	}
	if len(d.unfilteredSkip) >= maxSearchStmts {
		clear(d.unfilteredSkip)
	}
	d.unfilteredSkip[where] = unfilteredBackoff
}

// searchThenFilter answers a filtered search by ranking without the filter
// (see above); ok is false when the filtered query must run instead.
func (d *DB) searchThenFilter(ctx context.Context, expr, where string, fargs []any, limit int) (hits []driver.Hit, ok bool, err error) {
	rank, temporary, err := d.searchStmt(ctx, qSearch)
	if err != nil {
		return nil, false, err
	}
	if temporary {
		defer rank.Close()
	}
	pass, temporary, err := d.searchStmt(ctx, fmt.Sprintf(qPass, where))
	if err != nil {
		return nil, false, err
	}
	if temporary {
		defer pass.Close()
	}
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback()

	n := unfilteredRows(limit)
	rows, err := tx.StmtContext(ctx, rank).QueryContext(ctx, expr, n)
	if err != nil {
		return nil, false, err
	}
	ranked := make([]driver.Hit, 0, n)
	for rows.Next() {
		var h driver.Hit
		var r float64
		if err := rows.Scan(&h.ID, &r); err != nil {
			rows.Close()
			return nil, false, err
		}
		h.Score = -r
		ranked = append(ranked, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if len(ranked) == 0 {
		return []driver.Hit{}, true, nil
	}
	args := append([]any{jsonIDs(ranked, hitID)}, fargs...)
	prows, err := tx.StmtContext(ctx, pass).QueryContext(ctx, args...)
	if err != nil {
		return nil, false, err
	}
	defer prows.Close()
	passed := make(map[int64]bool, len(ranked))
	for prows.Next() {
		var id int64
		if err := prows.Scan(&id); err != nil {
			return nil, false, err
		}
		passed[id] = true
	}
	if err := prows.Err(); err != nil {
		return nil, false, err
	}
	if len(passed) < limit && len(ranked) == n {
		return nil, false, nil // rows beyond the n ranked may pass
	}
	hits = make([]driver.Hit, 0, min(limit, len(passed)))
	for _, h := range ranked {
		if passed[h.ID] && len(hits) < limit {
			hits = append(hits, h)
		}
	}
	return hits, true, nil
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

func hitID(h driver.Hit) int64 { return h.ID }
