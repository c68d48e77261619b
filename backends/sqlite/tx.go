package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
)

// pageSize is how many rows Scan, Changes and Audit read at a time. They
// read a page, close the statement and then call fn for each row, so fn may
// use the transaction freely (also to write, in Update).
const pageSize = 256

// Statements used by read transactions; they are prepared at Open on both
// connection pools.
var (
	qGet = `SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories WHERE id = ?`
	// Versions carry the memory's live access statistics: they belong to the
	// memory, not to a version (updating them writes no version). The
	// current version is the memories row; memory_versions holds the ones
	// before it (a row at or after the current version, which only a memos
	// older than schema version 2 writing to the store could leave, is
	// ignored).
	qGetVersion = `SELECT ` + sqlrow.VersionCols("") + `, m.last_accessed_at, m.access_count
			FROM memory_versions AS v JOIN memories AS m ON m.id = v.id
			WHERE v.id = ?1 AND v.version = ?2 AND v.version < m.version
		UNION ALL
		SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories WHERE id = ?1 AND version = ?2`
	qHistory = `SELECT ` + sqlrow.VersionCols("") + `, m.last_accessed_at, m.access_count
			FROM memory_versions AS v JOIN memories AS m ON m.id = v.id
			WHERE v.id = ?1 AND v.version < m.version
		UNION ALL
		SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories WHERE id = ?1
		ORDER BY 2`
	qVersion = `SELECT version FROM memories WHERE id = ?`
	qEdges   = `SELECT ` + sqlrow.EdgeCols + ` FROM edges
		WHERE from_id = ?1 OR to_id = ?1 ORDER BY from_id, to_id, type`
	qMeta    = `SELECT value FROM meta WHERE key = ?`
	qChanges = `SELECT seq, id, 0, namespace, pool, status, embedding_model, embedding_dim, embedding
			FROM memories WHERE (seq, id) > (?1, ?2)
		UNION ALL
		SELECT seq, id, 1, '', '', '', '', 0, NULL FROM tombstones WHERE (seq, id) > (?1, ?2)
		ORDER BY 1, 2 LIMIT ?3`
	// qUpdated reads a page of the memories of one namespace changed after
	// a time, in (updated_at, id) order after a position, through
	// memories_updated (whose entries end with the id).
	qUpdated = `SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories
		WHERE namespace = ?1 AND (updated_at, id) > (?2, ?3) AND ` + canonicalTime + `
		ORDER BY updated_at, id LIMIT ?4`
	// qUpdatedOther reads the memories of one namespace whose updated_at is
	// not in timeLayout, through memories_updated_other (normally none).
	qUpdatedOther = `SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories
		WHERE namespace = ? AND ` + otherTime
	qAudit = `SELECT ` + sqlrow.AuditCols + ` FROM audit
		WHERE seq > ? ORDER BY seq LIMIT ?`

	// qSession reads a session's members through memories_session.
	qSession = `SELECT id, valid_from, created_at FROM memories
		WHERE namespace = ? AND session = ? AND session != ''`

	// qGetMany reads the current version of a JSON array of ids.
	qGetMany = `SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories
		WHERE id IN (SELECT value FROM json_each(?))`

	readQueries = []string{qGet, qGetVersion, qHistory, qVersion, qEdges, qMeta, qChanges, qAudit, qSession, qUpdated, qUpdatedOther, qGetMany}

	// statements are the reads the postgres backend shares
	// (sqlrow.Reads), in SQLite's dialect.
	statements = &sqlrow.Statements{
		Get: qGet, GetVersion: qGetVersion, History: qHistory, Edges: qEdges, Session: qSession, Meta: qMeta,
		Changes: qChanges, Audit: qAudit, GetMany: qGetMany,
		IDs: func(ids []int64) any { return jsonIDs(ids, func(id int64) int64 { return id }) },
		// A memory's audit entries through the index audit_memory.
		AuditOf: `SELECT ` + sqlrow.AuditCols + ` FROM audit INDEXED BY audit_memory
			WHERE memory_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
		AuditBefore: `SELECT ` + sqlrow.AuditCols + ` FROM audit WHERE seq < ? ORDER BY seq DESC LIMIT ?`,
		// Facet counts from the index memories_facets, which holds every
		// column they read: the wide rows (content, a kilobyte-sized
		// embedding) are not read.
		Count: `SELECT namespace, pool, type, status, COUNT(*), SUM(version),
			SUM(status = 'active' AND embedding_model = ? AND embedding_dim = ?)
			FROM memories INDEXED BY memories_facets`,
		// Each end of an edge is looked up in the covering index
		// memories_scope.
		CountEdges: `SELECT COUNT(*) FROM edges`,
		CountEdgesJoin: `SELECT COUNT(*) FROM edges AS e
			JOIN memories AS a INDEXED BY memories_scope ON a.id = e.from_id
			JOIN memories AS b INDEXED BY memories_scope ON b.id = e.to_id`,
		In:       inList,
		PageSize: pageSize,
	}
)

// inList binds vals as IN (?, ...) placeholders: for the short lists
// filters have, SQLite compares them directly, which measured clearly
// cheaper per row than IN over json_each.
func inList(vals []string, _ int) (string, []any) {
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	return " IN (" + placeholders(len(vals)) + ")", args
}

// Statements used only by write transactions, prepared at Open on the
// writer's connection.
var (
	qInsert = `INSERT INTO memories (` + memoryCols + `, last_accessed_at, access_count, seq)
		VALUES (` + placeholders(insertCols) + `)`
	// qNextID is the id AUTOINCREMENT gives the next memory: one more than
	// the largest it ever gave (sqlite_sequence) or that is in the table.
	qNextID = `SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0),
		coalesce((SELECT max(id) FROM memories), 0)) + 1`
	// qKeepVersion copies the current version of memory ?1 into
	// memory_versions before Put replaces it, without the content when it
	// equals the new version's (?2) and without the embedding when its
	// bytes do (?3); see schemaV2.
	qKeepVersion = `INSERT OR REPLACE INTO memory_versions (` + memoryCols + `)
		SELECT ` + strings.NewReplacer(
		"content,", "CASE WHEN content = ?2 THEN NULL ELSE content END,",
		"embedding_dim, embedding", "embedding_dim, CASE WHEN embedding_dim > 0 AND embedding = ?3 THEN NULL ELSE embedding END",
	).Replace(memoryCols) + ` FROM memories WHERE id = ?1`
	// Every column but id (the first), then seq.
	qPut = `UPDATE memories SET (` + strings.TrimPrefix(memoryCols, "id, ") + `, seq) =
		(` + placeholders(sqlrow.NMemoryCols-1+1) + `) WHERE id = ?`
	qBumpSeq     = `UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = '` + keySeq + `' RETURNING value`
	qDelEdgesOf  = `DELETE FROM edges WHERE from_id = ?1 OR to_id = ?1`
	qDelVersions = `DELETE FROM memory_versions WHERE id = ?`
	qDelMemory   = `DELETE FROM memories WHERE id = ?`
	qTombstone   = `INSERT INTO tombstones (id, seq, deleted_at) VALUES (?, ?, ?)`
	// Touch keeps the latest access time: stored times sort as text.
	qTouch = `UPDATE memories SET access_count = access_count + 1,
		last_accessed_at = CASE WHEN last_accessed_at IS NULL OR last_accessed_at < ?1 THEN ?1 ELSE last_accessed_at END
		WHERE id = ?2`
	qLink = `INSERT INTO edges (from_id, to_id, type, weight, created_at, source) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (from_id, to_id, type) DO UPDATE SET
		weight = excluded.weight, created_at = excluded.created_at, source = excluded.source`
	qUnlink  = `DELETE FROM edges WHERE from_id = ? AND to_id = ? AND type = ?`
	qSetMeta = `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	qAppendAudit = `INSERT INTO audit (time, action, memory_id, detail, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)`

	writeQueries = []string{qInsert, qNextID, qKeepVersion, qPut, qBumpSeq, qDelEdgesOf, qDelVersions,
		qDelMemory, qTombstone, qTouch, qLink, qUnlink, qSetMeta, qAppendAudit, qContent, qBoundGet, qBoundPut,
		qBoundGetMany, qBoundPutMany, qPendingRows, qPendingDone, qBoundDel, qVocabDF}
)

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// insertCols is the number of values of a memory's row in qInsert.
const insertCols = sqlrow.NMemoryCols + 3

// maxInsertRows is the most rows one insertRows statement writes: 25,000
// values, below SQLite's 32,766.
const maxInsertRows = 1000

// insertRows returns an INSERT of n memories' rows, in qInsert's columns.
func insertRows(n int) string {
	row := "(" + placeholders(insertCols) + ")"
	return `INSERT INTO memories (` + memoryCols + `, last_accessed_at, access_count, seq) VALUES ` +
		strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// readTx implements driver.ReadTx and driver.AuditReader over one SQL
// transaction. It is bound to the context of its View or Update. Most of
// its reads are the postgres backend's too (sqlrow.Reads, bound by
// bindReads).
type readTx struct {
	sqlrow.Reads
	ctx   context.Context
	tx    *sql.Tx
	stmts map[string]*sql.Stmt // prepared at Open on this transaction's pool

	mu    sync.Mutex
	local map[string]*sql.Stmt // bound to tx, closed with it
	done  atomic.Bool

	// before, when set, runs before every statement: a write transaction's
	// inserts waiting to be written (writeTx.flushInserts).
	before func() error
}

// stmt returns q prepared on the transaction's connection, after the
// writes waiting to be made (before) are made.
func (t *readTx) stmt(q string) (*sql.Stmt, error) {
	if t.before != nil {
		if err := t.before(); err != nil {
			return nil, err
		}
	}
	return t.prepared(q)
}

// prepared returns q prepared on the transaction's connection.
func (t *readTx) prepared(q string) (*sql.Stmt, error) {
	if t.done.Load() {
		return nil, sql.ErrTxDone
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.local[q]; ok {
		return s, nil
	}
	var s *sql.Stmt
	if ps, ok := t.stmts[q]; ok {
		s = t.tx.StmtContext(t.ctx, ps)
	} else {
		var err error
		if s, err = t.tx.PrepareContext(t.ctx, q); err != nil {
			return nil, err
		}
	}
	if t.local == nil {
		t.local = make(map[string]*sql.Stmt)
	}
	t.local[q] = s
	return s, nil
}

// scanRow runs q and scans its single row into dest; sql.ErrNoRows when
// there is none.
func (t *readTx) scanRow(q string, args []any, dest ...any) error {
	s, err := t.stmt(q)
	if err != nil {
		return err
	}
	return s.QueryRowContext(t.ctx, args...).Scan(dest...)
}

func (t *readTx) query(q string, args ...any) (*sql.Rows, error) {
	s, err := t.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(t.ctx, args...)
}

func (t *readTx) exec(q string, args ...any) (sql.Result, error) {
	s, err := t.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(t.ctx, args...)
}

func (t *readTx) fail(op string, err error) error { return dbError(t.ctx, op, err) }

// bindReads binds the shared reads to t.
func (t *readTx) bindReads() { t.Reads = sqlrow.Reads{DB: t, S: statements} }

// Each implements sqlrow.Querier.
func (t *readTx) Each(q string, args []any, row func(sqlrow.Scanner) error) error {
	rows, err := t.query(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return sqlrow.EachRow(rows, row)
}

// Fail implements sqlrow.Querier.
func (t *readTx) Fail(op string, err error) error { return t.fail(op, err) }

// filterSQL renders f as conditions on the memories table aliased m.
func filterSQL(f driver.Filter) (string, []any) { return sqlrow.Filter(f, "0", 0, inList) }

// Scan calls fn with the current version of every memory matching opts, in
// ascending id order.
func (t *readTx) Scan(opts driver.ScanOptions, fn func(*driver.Memory) error) error {
	q, fargs := scanQuery(opts.Filter)
	return sqlrow.Scan(t, opts, pageSize, func(after int64, n int) (string, []any) {
		return q, append(append([]any{after}, fargs...), n)
	}, fn)
}

// scanQuery returns the query of a page of Scan and the filter's
// arguments. It walks the table in id order: NOT INDEXED keeps SQLite from
// taking an index that leads with a filtered column (memories_updated,
// memories_rank) and sorting every page's matches by id.
func scanQuery(f driver.Filter) (string, []any) {
	where, fargs := filterSQL(f)
	return `SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories AS m NOT INDEXED
		WHERE m.id > ?` + where + ` ORDER BY m.id LIMIT ?`, fargs
}

func (t *readTx) scanPage(q string, args []any) ([]*driver.Memory, error) {
	return sqlrow.Collect(t, q, args, sqlrow.ScanMemory)
}

// Seq returns the sequence number of the latest committed change.
func (t *readTx) Seq() (uint64, error) {
	v, err := t.Meta(keySeq)
	if err != nil {
		return 0, fmt.Errorf("read change sequence: %w", err)
	}
	seq, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read change sequence: malformed value %q", v)
	}
	return seq, nil
}

// writeTx implements driver.Tx. All its writes in one Update share one Seq,
// taken from the meta counter at the first write.
type writeTx struct {
	readTx
	seqMu   sync.Mutex
	seq     int64       // 0 until the first write that advances the change log
	deleted atomic.Bool // a Delete ran: checkpoint the WAL after commit

	// Keeping the keyword bounds (bound.go): indexed is set once a write
	// may have listed a row in memories_fts_pending or removed a content,
	// gone holds the stems of the contents removed.
	boundMu sync.Mutex
	indexed bool
	gone    map[string]bool

	// Insert does not write its row at once: the rows of consecutive
	// inserts wait in rows (under insMu) and are written by one statement
	// (flushInserts) before the transaction's next statement or its commit.
	// FTS5 writes its pending rows to the index as a new segment at the
	// start of every statement of a write transaction (its xSavepoint), so
	// a statement per memory made a segment per memory, which its merges
	// then rewrote again and again: most of the ingest's time and bytes.
	// Buffered rows take their ids from nextID, as AUTOINCREMENT would
	// (qNextID); 0 means read it again, which every other statement
	// forces.
	insMu  sync.Mutex
	rows   [][]any
	nextID int64
	// insErr is set when writing buffered rows failed: the transaction
	// must not commit without them.
	insErr error
}

// flushInserts writes the buffered inserts (see writeTx.rows).
func (t *writeTx) flushInserts() error {
	t.insMu.Lock()
	defer t.insMu.Unlock()
	if t.insErr != nil {
		return t.insErr
	}
	t.nextID = 0
	rows := t.rows
	t.rows = nil
	for len(rows) > 0 {
		n := min(len(rows), maxInsertRows)
		s, err := t.prepared(insertRows(n))
		if err == nil {
			args := make([]any, 0, n*insertCols)
			for _, r := range rows[:n] {
				args = append(args, r...)
			}
			_, err = s.ExecContext(t.ctx, args...)
		}
		if err != nil {
			t.insErr = t.fail(fmt.Sprintf("insert memories %d–%d", rows[0][0], rows[n-1][0]), err)
			return t.insErr
		}
		rows = rows[n:]
	}
	return nil
}

// removeContent records, for syncBounds, that the content of memory id is
// about to leave the index: before a delete (next nil), or before a put
// whose content is *next (nothing leaves when it is the same).
func (t *writeTx) removeContent(id int64, next *string) error {
	var old string
	if err := t.scanRow(qContent, []any{id}, &old); err != nil {
		return err
	}
	t.boundMu.Lock()
	defer t.boundMu.Unlock()
	t.indexed = true
	if next != nil && *next == old {
		return nil
	}
	if t.gone == nil {
		t.gone = map[string]bool{}
	}
	addTerms(t.gone, old)
	return nil
}

// syncBounds brings the keyword bounds up to date with the transaction's
// writes (see bound.go); update calls it before committing.
func (t *writeTx) syncBounds() error {
	t.boundMu.Lock()
	defer t.boundMu.Unlock()
	if !t.indexed {
		return nil
	}
	return syncBounds(&t.readTx, t.gone)
}

// nextSeq returns the transaction's change sequence number.
func (t *writeTx) nextSeq() (int64, error) {
	t.seqMu.Lock()
	defer t.seqMu.Unlock()
	if t.seq != 0 {
		return t.seq, nil
	}
	var v string
	if err := t.scanRow(qBumpSeq, nil, &v); err != nil {
		return 0, err
	}
	seq, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed change sequence %q", v)
	}
	t.seq = seq
	return seq, nil
}

// Insert stores m as version 1 of a new memory and sets m.ID. Any ID already
// in m is ignored.
func (t *writeTx) Insert(m *driver.Memory) error { return t.insert(m, false) }

// InsertAt stores m as version 1 of memory m.ID (see driver.Importer).
func (t *writeTx) InsertAt(m *driver.Memory) error { return t.insert(m, true) }

// insert writes version 1 of m, with m.ID when keepID is set and under a
// new AUTOINCREMENT id otherwise.
func (t *writeTx) insert(m *driver.Memory, keepID bool) error {
	args, err := sqlrow.InsertRow(t, m, keepID, true)
	if err != nil {
		return err
	}
	seq, err := t.nextSeq()
	if err != nil {
		return t.fail("insert memory", err)
	}
	t.boundMu.Lock()
	t.indexed = true
	t.boundMu.Unlock()
	if keepID {
		if _, err := t.exec(qInsert, append(args, seq)...); err != nil {
			return t.fail("insert memory", err)
		}
		return nil
	}
	t.insMu.Lock()
	defer t.insMu.Unlock()
	if t.insErr != nil {
		return t.insErr
	}
	if t.nextID == 0 {
		s, err := t.prepared(qNextID)
		if err == nil {
			err = s.QueryRowContext(t.ctx).Scan(&t.nextID)
		}
		if err != nil {
			return t.fail("insert memory", err)
		}
	}
	if t.nextID <= 0 {
		return t.fail("insert memory", errors.New("every memory id has been used"))
	}
	m.ID = t.nextID
	t.nextID++
	args[0] = m.ID
	t.rows = append(t.rows, append(args, seq))
	return nil
}

// ReserveIDs raises the AUTOINCREMENT counter to at least id (see driver.Importer).
func (t *writeTx) ReserveIDs(id int64) error {
	if _, err := t.exec(`INSERT INTO sqlite_sequence (name, seq) SELECT 'memories', 0
		WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'memories')`); err != nil {
		return t.fail("reserve ids", err)
	}
	if _, err := t.exec(`UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'memories'`, id); err != nil {
		return t.fail("reserve ids", err)
	}
	return nil
}

// current returns the current version of memory id; op names the
// operation in errors.
func (t *writeTx) current(op string, id int64) (int, error) {
	var v int
	err := t.scanRow(qVersion, []any{id}, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%s: memory %d: %w", op, id, driver.ErrNotFound)
	}
	if err != nil {
		return 0, t.fail(fmt.Sprintf("%s memory %d", op, id), err)
	}
	return v, nil
}

// Put stores m as version m.Version of memory m.ID and makes it current;
// the version it replaces moves to memory_versions. The memory's access
// statistics are kept as stored: they are not versioned.
func (t *writeTx) Put(m *driver.Memory) error {
	if m == nil {
		return driver.Invalidf("put: nil memory")
	}
	op := fmt.Sprintf("put memory %d version %d", m.ID, m.Version)
	cur, err := t.current("put", m.ID)
	if err != nil {
		return err
	}
	if err := driver.CheckPut(m, cur); err != nil {
		return err
	}
	args, err := sqlrow.MemoryArgs(m, true)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	seq, err := t.nextSeq()
	if err != nil {
		return t.fail(op, err)
	}
	content, vec := args[sqlrow.Content], args[sqlrow.Embedding]
	if err := t.removeContent(m.ID, &m.Content); err != nil {
		return t.fail(op, err)
	}
	if _, err := t.exec(qKeepVersion, m.ID, content, vec); err != nil {
		return t.fail(op, err)
	}
	if _, err := t.exec(qPut, append(append(args[1:len(args):len(args)], seq), m.ID)...); err != nil {
		return t.fail(op, err)
	}
	return nil
}

// Delete removes every version, keyword entry, edge and the embedding of id
// and leaves a tombstone (id and seq, no content). After the transaction
// commits, the WAL is checkpointed and truncated so that the content does
// not linger there either (see DB.Erase).
func (t *writeTx) Delete(id int64) error {
	op := fmt.Sprintf("delete memory %d", id)
	if _, err := t.current("delete", id); err != nil {
		return err
	}
	seq, err := t.nextSeq()
	if err != nil {
		return t.fail(op, err)
	}
	if err := t.removeContent(id, nil); err != nil {
		return t.fail(op, err)
	}
	for _, q := range []string{qDelEdgesOf, qDelVersions, qDelMemory} { // the trigger removes the FTS entry
		if _, err := t.exec(q, id); err != nil {
			return t.fail(op, err)
		}
	}
	now, _ := sqlrow.EncodeTime("deleted_at", time.Now())
	if _, err := t.exec(qTombstone, id, seq, now); err != nil {
		return t.fail(op, err)
	}
	// Durable, so that whichever process opens the store next finishes
	// the erasure if this one cannot (see DB.erase).
	if _, err := t.exec(qSetMeta, keyErasePending, strconv.FormatInt(seq, 10)); err != nil {
		return t.fail(op, err)
	}
	t.deleted.Store(true)
	return nil
}

// Touch records an access to ids at t: each occurrence of an id counts one
// access, and the latest access time is kept. Unknown ids are ignored.
func (t *writeTx) Touch(ids []int64, at time.Time) error {
	ts, err := sqlrow.NullTime("access time", at)
	if err != nil {
		return fmt.Errorf("touch: %w", err)
	}
	for _, id := range ids {
		if _, err := t.exec(qTouch, ts, id); err != nil {
			return t.fail(fmt.Sprintf("touch memory %d", id), err)
		}
	}
	return nil
}

// Link adds or replaces the edge (e.From, e.To, e.Type).
func (t *writeTx) Link(e driver.Edge) error {
	op, err := driver.CheckLink(e, func(op string, id int64) error { _, err := t.current(op, id); return err })
	if err != nil {
		return err
	}
	created, err := sqlrow.EncodeTime("created_at", e.CreatedAt)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if _, err := t.nextSeq(); err != nil {
		return t.fail(op, err)
	}
	if _, err := t.exec(qLink, e.From, e.To, string(e.Type), e.Weight, created, e.Source); err != nil {
		return t.fail(op, err)
	}
	return nil
}

// Unlink removes the edge (from, to, typ), or returns ErrNotFound.
func (t *writeTx) Unlink(from, to int64, typ driver.EdgeType) error {
	op := fmt.Sprintf("unlink %d→%d (%s)", from, to, typ)
	res, err := t.exec(qUnlink, from, to, string(typ))
	if err != nil {
		return t.fail(op, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return t.fail(op, err)
	} else if n == 0 {
		return fmt.Errorf("edge %d→%d (%s): %w", from, to, typ, driver.ErrNotFound)
	}
	if _, err := t.nextSeq(); err != nil {
		return t.fail(op, err)
	}
	return nil
}

// SetMeta stores a store-level setting. Keys starting with "sqlite." are
// reserved for the backend.
func (t *writeTx) SetMeta(key, value string) error {
	if err := driver.CheckMetaKey(Name, reservedPrefix, key); err != nil {
		return err
	}
	op := fmt.Sprintf("set meta key %q", key)
	if _, err := t.nextSeq(); err != nil {
		return t.fail(op, err)
	}
	if _, err := t.exec(qSetMeta, key, value); err != nil {
		return t.fail(op, err)
	}
	return nil
}

// AppendAudit appends e to the audit log and sets e.Seq.
func (t *writeTx) AppendAudit(e *driver.AuditEntry) error {
	args, err := sqlrow.AuditArgs(e, true)
	if err != nil {
		return err
	}
	if _, err := t.nextSeq(); err != nil {
		return t.fail("append audit", err)
	}
	res, err := t.exec(qAppendAudit, args...)
	if err != nil {
		return t.fail("append audit", err)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return t.fail("append audit", err)
	}
	e.Seq = uint64(seq)
	return nil
}

// UpdatedAfter calls fn with the current version of every memory of
// namespaces whose UpdatedAt is after t (see driver.UpdateReader), read
// through the index memories_updated a page at a time.
func (t *readTx) UpdatedAfter(namespaces []string, at time.Time, fn func(*driver.Memory) error) error {
	return sqlrow.UpdatedAfter(t, qUpdated, pageSize, true, namespaces, at, func(ns, op string) error {
		// Times in other formats do not sort with timeLayout's: each is
		// compared as a time.
		page, err := t.scanPage(qUpdatedOther, []any{ns})
		if err != nil {
			return t.fail(op, err)
		}
		for _, m := range page {
			if m.UpdatedAt.After(at) {
				if err := fn(m); err != nil {
					return err
				}
			}
		}
		return nil
	}, fn)
}

// Ranked calls fn with the current version of every memory that matches
// f, in rank order (see driver.RankReader). Each (namespace, status, type)
// is read in order through the index memories_rank and SQLite merges them
// (a compound SELECT ordered by the index's columns), a page at a time,
// each page seeking past the last memory of the one before (ranked.Walk).
func (t *readTx) Ranked(f driver.Filter, fn func(*driver.Memory) error) error {
	groups, err := ranked.Groups(f)
	if err != nil || len(groups) == 0 || (f.Pools != nil && len(f.Pools) == 0) {
		return err
	}
	var qs [ranked.NRanges]string
	return ranked.Walk(func(r ranked.Range, k ranked.Key, limit int) ([]ranked.Row, error) {
		if qs[r] == "" {
			qs[r] = rankedQuery(len(groups), f.Pools, r)
		}
		page, err := t.scanRanked(qs[r], rankedArgs(groups, f.Pools, r, k, limit))
		if err != nil {
			return nil, t.fail("memories in rank order", err)
		}
		return page, nil
	}, fn)
}

// rankedQuery returns the query of a page of Ranked over n groups and
// pools (nil: any), in the range r of the rank order;
// rankedArgs its arguments. Each group's SELECT seeks to r's start in
// memories_rank; the last column is the stored last_accessed_at, the
// page's key (ranked.Key).
func rankedQuery(n int, pools []driver.Pool, r ranked.Range) string {
	var q strings.Builder
	where := r.Where(ranked.Column.Name, func() string { return "?" })
	for i := range n {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		q.WriteString(`SELECT ` + memoryCols + `, last_accessed_at, access_count, last_accessed_at AS rank_accessed FROM memories
			WHERE namespace = ? AND status = ? AND type = ?`)
		if pools != nil {
			fmt.Fprintf(&q, " AND pool IN (%s)", placeholders(len(pools)))
		}
		q.WriteString(where)
	}
	q.WriteString(` ORDER BY significance DESC, access_count DESC, last_accessed_at DESC, id LIMIT ?`)
	return q.String()
}

func rankedArgs(groups []ranked.Group, pools []driver.Pool, r ranked.Range, k ranked.Key, limit int) []any {
	var args []any
	for _, g := range groups {
		args = append(args, g.Namespace, string(g.Status), string(g.Type))
		for _, p := range pools {
			args = append(args, string(p))
		}
		args = append(args, r.Args(k)...)
	}
	return append(args, limit)
}

// scanRanked reads the rows of a rankedQuery.
func (t *readTx) scanRanked(q string, args []any) ([]ranked.Row, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var page []ranked.Row
	for rows.Next() {
		var accessed sql.NullString
		m, err := sqlrow.ScanMemory(ranked.WithKey(rows, &accessed))
		if err != nil {
			return nil, err
		}
		row := ranked.Row{Memory: m}
		if accessed.Valid {
			row.LastAccessed = &accessed.String
		}
		page = append(page, row)
	}
	return page, rows.Err()
}

var (
	_ driver.SessionReader = (*readTx)(nil)
	_ driver.UpdateReader  = (*readTx)(nil)
	_ driver.RankReader    = (*readTx)(nil)
)
