package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/memos-go/memos/core/text"
)

// Per-term score bounds kept beside the FTS5 index (schema version 3).
//
// The two-phase keyword search (prune.go) bounds what a phrase whose
// postings it did not read adds to a row's score. idf·(k1+1) (text.MaxTerm)
// holds for any row, but a common word's real contribution is well below
// it in every row, so with that bound many rows that cannot rank have to
// be read. memories_fts_bound holds, per term of the index, its
// text.Frontier: the (instances, length) pairs of the rows that contain
// it, less the dominated ones, from which the search computes the largest
// contribution the term makes to any row under the index's current
// figures (text.Frontier.Bound).
//
// Keeping it right:
//   - A trigger lists every row whose content is inserted or changed, by
//     any writer (also plain SQL, as a MemU import), in
//     memories_fts_pending; deleting the row takes it off the list.
//   - Before each write transaction that wrote a content commits, and at
//     Open, syncBounds adds the pending rows' pairs to their terms'
//     frontiers: it tokenizes the content here (text.Tokenize and
//     text.Stem, FTS5's tokenizer and stemmer) and takes the length from
//     FTS5's docsize table. A row whose content is not valid UTF-8, or
//     whose token count here differs from FTS5's, stays pending.
//   - While any row is pending, searches bound every phrase by MaxTerm, as
//     without the table: a row missing from the frontiers can never make a
//     bound too low.
//   - A row deleted or changed leaves its pair in the frontiers: the bound
//     may then be too high (safe, the search reads more), never too low.
//     A term no row has any more loses its frontier in the transaction
//     that removed it (Tx.Delete and Tx.Put hand syncBounds the terms of
//     the content they remove), so that a forgotten word does not stay in
//     the file. A delete with plain SQL leaves its terms' rows (stems and
//     counts, not the content) until the store is rebuilt.
//
// The upgrade to version 3 builds every frontier from FTS5's own instances
// and lengths (rebuildBounds).
var schemaV3 = []string{
	`CREATE TABLE memories_fts_bound (
		term TEXT PRIMARY KEY,
		pts  BLOB NOT NULL
	) WITHOUT ROWID`,
	`CREATE TABLE memories_fts_pending (id INTEGER PRIMARY KEY)`,
	`CREATE TRIGGER memories_bound_insert AFTER INSERT ON memories BEGIN
		INSERT OR IGNORE INTO memories_fts_pending (id) VALUES (new.id);
	END`,
	`CREATE TRIGGER memories_bound_update AFTER UPDATE OF content ON memories
	WHEN old.content IS NOT new.content BEGIN
		INSERT OR IGNORE INTO memories_fts_pending (id) VALUES (new.id);
	END`,
	`CREATE TRIGGER memories_bound_delete AFTER DELETE ON memories BEGIN
		DELETE FROM memories_fts_pending WHERE id = old.id;
	END`,
}

// migrateV3 creates the bounds' tables and fills them from the index.
func migrateV3(ctx context.Context, tx *sql.Tx) error {
	if err := execAll(schemaV3...)(ctx, tx); err != nil {
		return err
	}
	// The build reads the index through its fts5vocab tables, which Open
	// creates after the migrations (a store of version 1 may not have them).
	if err := execAll(ftsVocabTables...)(ctx, tx); err != nil {
		return err
	}
	return rebuildBounds(ctx, tx)
}

const (
	qBoundGet = `SELECT pts FROM memories_fts_bound WHERE term = ?`
	qBoundPut = `INSERT OR REPLACE INTO memories_fts_bound (term, pts) VALUES (?, ?)`
	// syncBounds reads and writes the frontiers of a transaction's terms
	// in one statement each (a JSON array of terms; an object of term to
	// hex-encoded frontier): a batch of 500 turns has thousands of
	// distinct terms, and a statement per term was a quarter of ingest.
	qBoundGetMany = `SELECT b.term, b.pts FROM json_each(?) AS j JOIN memories_fts_bound AS b ON b.term = j.value`
	qBoundPutMany = `INSERT OR REPLACE INTO memories_fts_bound (term, pts) SELECT key, unhex(value) FROM json_each(?)`
	qBoundDel     = `DELETE FROM memories_fts_bound WHERE term = ?`
	qBoundPending = `SELECT EXISTS (SELECT 1 FROM memories_fts_pending)`
	qPendingRows  = `SELECT p.id, m.content, s.sz FROM memories_fts_pending AS p
		JOIN memories AS m ON m.id = p.id
		LEFT JOIN memories_fts_docsize AS s ON s.id = p.id`
	qPendingDone = `DELETE FROM memories_fts_pending WHERE id IN (SELECT value FROM json_each(?))`
	qContent     = `SELECT content FROM memories WHERE id = ?`
)

// rebuildBounds replaces every frontier by one built from FTS5's instances
// (one row per instance, by term and row) and row lengths, and empties the
// pending list.
func rebuildBounds(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{`DELETE FROM memories_fts_bound`, `DELETE FROM memories_fts_pending`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	lengths := map[int64]int{}
	rows, err := tx.QueryContext(ctx, `SELECT id, sz FROM memories_fts_docsize`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		var sz []byte
		if err := rows.Scan(&id, &sz); err != nil {
			rows.Close()
			return err
		}
		if n, size := sqliteVarint(sz); size > 0 {
			lengths[id] = int(n)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	put, err := tx.PrepareContext(ctx, qBoundPut)
	if err != nil {
		return err
	}
	defer put.Close()
	// The instance table has no table to read from before the index's
	// first row; a fresh store has nothing to build.
	rows, err = tx.QueryContext(ctx, `SELECT term, doc FROM memories_fts_instance`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		term  string
		doc   int64 = -1
		freq  int
		f     text.Frontier
		buf   []byte
		added bool
	)
	point := func() error {
		if freq == 0 {
			return nil
		}
		dl, ok := lengths[doc]
		if !ok {
			return fmt.Errorf("row %d of the keyword index has no length", doc)
		}
		f, _ = f.Add(text.FrontierPoint{Freq: freq, Len: dl})
		added = true
		return nil
	}
	flush := func() error {
		if !added {
			return nil
		}
		buf, _ = f.AppendBinary(buf[:0])
		_, err := put.ExecContext(ctx, term, buf)
		f, added = f[:0], false
		return err
	}
	for rows.Next() {
		var t string
		var id int64
		if err := rows.Scan(&t, &id); err != nil {
			return err
		}
		if t != term || id != doc {
			if err := point(); err != nil {
				return err
			}
			if t != term {
				if err := flush(); err != nil {
					return err
				}
				term = t
			}
			doc, freq = id, 0
		}
		freq++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := point(); err != nil {
		return err
	}
	return flush()
}

// syncBounds adds the pending rows to the frontiers (see the top of the
// file) and drops the frontiers of the terms in gone that no row has.
func syncBounds(tx *readTx, gone map[string]bool) error {
	add := map[string][]text.FrontierPoint{}
	var done []int64
	rows, err := tx.query(qPendingRows)
	if err != nil {
		return err
	}
	var toks []string
	freq := map[string]int{}
	stems := map[string]string{} // a batch's rows share most of their words
	for rows.Next() {
		var id int64
		var content string
		var sz []byte
		if err := rows.Scan(&id, &content, &sz); err != nil {
			rows.Close()
			return err
		}
		dl, size := sqliteVarint(sz)
		if size == 0 || !utf8.ValidString(content) {
			continue // stays pending: searches use MaxTerm
		}
		if toks = text.AppendTokens(toks[:0], content); uint64(len(toks)) != dl {
			continue // tokenized otherwise than by FTS5: stays pending
		}
		clear(freq)
		for _, t := range toks {
			st, ok := stems[t]
			if !ok {
				st = text.Stem(t)
				stems[t] = st
			}
			freq[st]++
		}
		for t, n := range freq {
			add[t] = append(add[t], text.FrontierPoint{Freq: n, Len: int(dl)})
		}
		done = append(done, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	terms := make([]string, 0, len(add))
	for t := range add {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	stored, err := readBounds(tx, terms)
	if err != nil {
		return err
	}
	put := map[string]string{}
	var buf []byte
	for _, t := range terms {
		old := stored[t]
		f, err := text.DecodeFrontier(old)
		changed := len(old) == 0
		if err != nil {
			// A malformed frontier cannot be trusted: the term's bound
			// becomes the largest there is.
			f, changed = text.Frontier{{Freq: 1 << 30, Len: 0}}, true
		}
		for _, p := range add[t] {
			var c bool
			f, c = f.Add(p)
			changed = changed || c
		}
		if !changed {
			continue
		}
		buf, _ = f.AppendBinary(buf[:0])
		put[t] = hex.EncodeToString(buf)
	}
	if len(put) > 0 {
		b, err := json.Marshal(put)
		if err != nil {
			return err
		}
		if _, err := tx.exec(qBoundPutMany, string(b)); err != nil {
			return err
		}
	}
	if len(done) > 0 {
		if _, err := tx.exec(qPendingDone, jsonIDs(done, func(id int64) int64 { return id })); err != nil {
			return err
		}
	}
	for t := range gone {
		if _, ok := add[t]; ok {
			continue
		}
		var df int64
		err := tx.scanRow(qVocabDF, []any{t}, &df)
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		if df == 0 {
			if _, err := tx.exec(qBoundDel, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// readBounds returns the stored frontiers of terms (those that have one).
func readBounds(tx *readTx, terms []string) (map[string][]byte, error) {
	stored := make(map[string][]byte, len(terms))
	if len(terms) == 0 {
		return stored, nil
	}
	arg, err := json.Marshal(terms)
	if err != nil {
		return nil, err
	}
	rows, err := tx.query(qBoundGetMany, string(arg))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var pts []byte
		if err := rows.Scan(&t, &pts); err != nil {
			return nil, err
		}
		stored[t] = pts
	}
	return stored, rows.Err()
}

// addTerms adds the stems of content's tokens to terms.
func addTerms(terms map[string]bool, content string) {
	for _, t := range text.Tokenize(content) {
		terms[text.Stem(t)] = true
	}
}

// phraseBounds sets each phrase's max: the least, over its tokens, of the
// bound of the token's stored frontier with the phrase's idf (a phrase has
// no more instances in a row than each of its tokens), or MaxTerm when
// rows are pending or a token has no frontier. Frontiers are cached with
// the document frequencies (see phraseDFs), under the same key.
func (d *DB) phraseBounds(ctx context.Context, tx *sql.Tx, phrases []*prunePhrase, corpus text.Corpus, key []byte) error {
	for _, p := range phrases {
		p.max = text.MaxTerm(p.idf)
	}
	if d.looseBounds {
		return nil
	}
	c := &d.prune
	c.mu.RLock()
	fresh := bytes.Equal(c.key, key)
	pending := 0
	if fresh {
		pending = c.pending
	}
	found := map[string]text.Frontier{}
	var missing []string
	for _, p := range phrases {
		for _, t := range p.stems {
			if _, ok := found[t]; ok || slices.Contains(missing, t) {
				continue
			}
			if f, ok := c.bounds[t]; fresh && ok {
				found[t] = f
			} else {
				missing = append(missing, t)
			}
		}
	}
	c.mu.RUnlock()
	if pending == 0 {
		var yes bool
		if err := tx.QueryRowContext(ctx, qBoundPending).Scan(&yes); err != nil {
			return fmt.Errorf("keyword bounds: %w", err)
		}
		pending = 1
		if yes {
			pending = 2
		}
	}
	if pending == 2 {
		missing = nil
	}
	for _, t := range missing {
		var b []byte
		err := tx.QueryRowContext(ctx, qBoundGet, t).Scan(&b)
		if err != nil && err != sql.ErrNoRows {
			return fmt.Errorf("keyword bound of %q: %w", t, err)
		}
		f, err := text.DecodeFrontier(b)
		if err != nil {
			f = nil // MaxTerm
		}
		found[t] = f
	}
	c.mu.Lock()
	if bytes.Equal(c.key, key) {
		if c.bounds == nil || len(c.bounds) >= maxCachedDF {
			c.bounds = make(map[string]text.Frontier)
		}
		c.pending = pending
		for _, t := range missing {
			c.bounds[t] = found[t]
		}
	}
	c.mu.Unlock()
	if pending == 2 {
		return nil
	}
	for _, p := range phrases {
		for _, t := range p.stems {
			if f := found[t]; len(f) > 0 {
				p.max = min(p.max, f.Bound(corpus, p.idf))
			}
		}
	}
	return nil
}
