package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
)

// pageSize is how many rows Scan, Changes and Audit read at a time. They
// read a page, then call fn for each row, so fn may use the transaction
// (one connection runs one statement at a time).
const pageSize = 256

func params(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", from+i)
	}
	return b.String()
}

var (
	qGet     = `SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories WHERE id = $1`
	qGetMany = `SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories WHERE id = ANY($1)`
	// Versions carry the memory's live access statistics: they belong to the
	// memory, not to a version. The current version is the memories row;
	// memory_versions holds the ones before it (a row at or after the
	// current version, which only a memos older than schema version 3
	// still writing to the store could leave, is ignored).
	qGetVersion = `SELECT ` + sqlrow.VersionCols(" AND n.version < m.version") + `, m.last_accessed_at, m.access_count
			FROM memory_versions AS v JOIN memories AS m ON m.id = v.id
			WHERE v.id = $1 AND v.version = $2 AND v.version < m.version
		UNION ALL
		SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories WHERE id = $1 AND version = $2`
	qHistory = `SELECT ` + sqlrow.VersionCols(" AND n.version < m.version") + `, m.last_accessed_at, m.access_count
			FROM memory_versions AS v JOIN memories AS m ON m.id = v.id
			WHERE v.id = $1 AND v.version < m.version
		UNION ALL
		SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories WHERE id = $1
		ORDER BY 2`
	qEdges = `SELECT ` + sqlrow.EdgeCols + ` FROM edges
		WHERE from_id = $1 OR to_id = $1 ORDER BY from_id, to_id, type`
	// Each side of qChanges is ordered and limited itself, so that the
	// planner reads both through their (seq, id) indexes and merges them:
	// with the limit only on the union it scanned and sorted the whole
	// table for every page (0.8 s a page at 100k memories, load 30), which
	// made building a vector index from the log take minutes.
	qChanges = `(SELECT seq, id, false, namespace, pool, status, embedding_model, embedding_dim, embedding
			FROM memories WHERE (seq, id) > ($1, $2) ORDER BY seq, id LIMIT $3)
		UNION ALL
		(SELECT seq, id, true, '', '', '', '', 0, NULL FROM tombstones WHERE (seq, id) > ($1, $2) ORDER BY seq, id LIMIT $3)
		ORDER BY 1, 2 LIMIT $3`

	qInsert = `INSERT INTO memories (` + memoryCols + `, last_accessed_at, access_count, seq, ntokens, terms)
		VALUES (` + params(1, sqlrow.NMemoryCols+4) + `, array_to_tsvector($` + fmt.Sprint(sqlrow.NMemoryCols+5) + `::text[]))`
	// qKeepVersion copies the current version of memory $1 into
	// memory_versions before Put replaces it, without the content when it
	// equals the new version's ($2) and without the embedding when its
	// bytes do ($3); see schemaV3.
	qKeepVersion = `INSERT INTO memory_versions (` + memoryCols + `)
		SELECT ` + strings.NewReplacer(
		"content,", "CASE WHEN content = $2::text THEN NULL ELSE content END,",
		"embedding_dim, embedding", "embedding_dim, CASE WHEN embedding_dim > 0 AND embedding = $3::bytea THEN NULL ELSE embedding END",
	).Replace(memoryCols) + ` FROM memories WHERE id = $1
		ON CONFLICT (id, version) DO UPDATE SET (` + strings.TrimPrefix(memoryCols, "id, version, ") + `) =
		(` + excluded(strings.TrimPrefix(memoryCols, "id, version, ")) + `)`
	// Every column but id (the first), then seq, ntokens, terms; id last.
	qPut = `UPDATE memories SET (` + strings.TrimPrefix(memoryCols, "id, ") + `, seq, ntokens, terms) =
		(` + params(1, sqlrow.NMemoryCols-1+2) + `, array_to_tsvector($` + fmt.Sprint(sqlrow.NMemoryCols+2) + `::text[]))
		WHERE id = $` + fmt.Sprint(sqlrow.NMemoryCols+3)

	// statements are the reads the sqlite backend shares (sqlrow.Reads),
	// in PostgreSQL's dialect.
	statements = &sqlrow.Statements{
		Get: qGet, GetVersion: qGetVersion, History: qHistory, Edges: qEdges, Changes: qChanges, GetMany: qGetMany,
		IDs:  func(ids []int64) any { return ids },
		Meta: `SELECT value FROM meta WHERE key = $1`,
		// A session's members through memories_session.
		Session: `SELECT id, valid_from, created_at FROM memories
			WHERE namespace = $1 AND session = $2 AND session <> ''`,
		Audit: `SELECT ` + sqlrow.AuditCols + ` FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2`,
		// A memory's audit entries through the index audit_memory.
		AuditOf: `SELECT ` + sqlrow.AuditCols + ` FROM audit
			WHERE memory_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
		AuditBefore: `SELECT ` + sqlrow.AuditCols + ` FROM audit WHERE seq < $1 ORDER BY seq DESC LIMIT $2`,
		// Facet counts, which the index memories_facets answers without the
		// wide rows.
		Count: `SELECT namespace, pool, type, status, count(*), sum(version),
			count(*) FILTER (WHERE status = 'active' AND embedding_model = $1 AND embedding_dim = $2)
			FROM memories`,
		CountEdges: `SELECT count(*) FROM edges`,
		CountEdgesJoin: `SELECT count(*) FROM edges AS e
			JOIN memories AS a ON a.id = e.from_id
			JOIN memories AS b ON b.id = e.to_id`,
		In:       anyOf,
		PageSize: pageSize,
		// The change log's pages grow to 16 MiB of 256-dimension vectors:
		// an engine opening builds its vector index from the whole log, in
		// a dozen round trips at 100k memories rather than 400.
		MaxChangePage: 16384,
	}
)

// excluded renders the columns cols ("a, b") as "excluded.a, excluded.b".
func excluded(cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = "excluded." + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// readTx implements driver.ReadTx and driver.AuditReader over one pgx
// transaction, bound to the context of its View or Update. A connection
// runs one statement at a time, so calls are serialised. Most of its reads
// are the sqlite backend's too (sqlrow.Reads, bound by bindReads).
type readTx struct {
	sqlrow.Reads
	ctx context.Context
	mu  sync.Mutex
	tx  querier
	// begin, while not empty, is the BEGIN still to be sent: a View starts
	// its transaction with its first statement, in the same round trip
	// (REPEATABLE READ takes its snapshot at the first statement anyway).
	begin string
	// batchErr is the error of finishing the round trip that carried the
	// BEGIN; the next statement reports it.
	batchErr error
	done     bool
	// pending holds writes not sent yet: they go to the server in one round
	// trip before the next statement that reads, or at commit.
	pending []stmt
}

// querier is what a transaction runs statements on: a pgx.Tx, or the
// connection of a View, whose BEGIN is sent with its first statement.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// query runs q. The caller holds t.mu (see lock).
func (t *readTx) query(q string, args ...any) (pgx.Rows, error) {
	if t.batchErr != nil {
		return nil, t.batchErr
	}
	if t.begin == "" {
		return t.tx.Query(t.ctx, q, args...)
	}
	b := &pgx.Batch{}
	b.Queue(t.begin)
	b.Queue(q, args...)
	br := t.tx.SendBatch(t.ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return nil, err
	}
	t.begin = ""
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, t: t, br: br}, nil
}

// batchRows are the rows of the statement that carried a View's BEGIN;
// closing them finishes the round trip.
type batchRows struct {
	pgx.Rows
	t  *readTx
	br pgx.BatchResults
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.br != nil {
		if err := r.br.Close(); err != nil && r.Rows.Err() == nil {
			r.t.batchErr = err
		}
		r.br = nil
	}
}

func (t *readTx) end() {
	t.mu.Lock()
	t.done = true
	t.mu.Unlock()
}

// lock serialises use of the connection, refuses use after the
// transaction ended, and sends the pending writes, so that every read sees
// them; the caller unlocks.
func (t *readTx) lock() error {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return pgx.ErrTxClosed
	}
	if err := t.sendPending(nil); err != nil {
		t.mu.Unlock()
		return err
	}
	return nil
}

// sendPending sends the pending writes, then extra, in one round trip. The
// caller holds t.mu.
func (t *readTx) sendPending(extra []stmt) error {
	if len(t.pending) == 0 && len(extra) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, s := range append(t.pending, extra...) {
		b.Queue(s.q, s.args...)
	}
	t.pending = t.pending[:0]
	return t.tx.SendBatch(t.ctx, b).Close()
}

func (t *readTx) fail(op string, err error) error { return dbError(t.ctx, op, err) }

// bindReads binds the shared reads to t.
func (t *readTx) bindReads() { t.Reads = sqlrow.Reads{DB: t, S: statements} }

// queryRow runs q and scans its one row.
func (t *readTx) queryRow(q string, args []any, dest ...any) error {
	if err := t.lock(); err != nil {
		return err
	}
	defer t.mu.Unlock()
	rows, err := t.query(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

func (t *readTx) exec(q string, args ...any) (int64, error) {
	if err := t.lock(); err != nil {
		return 0, err
	}
	defer t.mu.Unlock()
	if t.begin != "" || t.batchErr != nil {
		rows, err := t.query(q, args...)
		if err != nil {
			return 0, err
		}
		rows.Close()
		return rows.CommandTag().RowsAffected(), rows.Err()
	}
	tag, err := t.tx.Exec(t.ctx, q, args...)
	return tag.RowsAffected(), err
}

// Each implements sqlrow.Querier, holding the connection while it reads.
func (t *readTx) Each(q string, args []any, row func(sqlrow.Scanner) error) error {
	if err := t.lock(); err != nil {
		return err
	}
	defer t.mu.Unlock()
	rows, err := t.query(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return sqlrow.EachRow(rows, row)
}

// Fail implements sqlrow.Querier.
func (t *readTx) Fail(op string, err error) error { return t.fail(op, err) }

// filterSQL renders f as conditions on the memories table aliased m, with
// parameters numbered from next.
func filterSQL(f driver.Filter, next int) (string, []any) {
	return sqlrow.Filter(f, "false", next-1, anyOf)
}

// anyOf binds vals as one array parameter, after next others.
func anyOf(vals []string, next int) (string, []any) {
	return fmt.Sprintf(" = ANY($%d)", next+1), []any{vals}
}

// Scan calls fn with the current version of every memory matching opts, in
// ascending id order.
func (t *readTx) Scan(opts driver.ScanOptions, fn func(*driver.Memory) error) error {
	where, fargs := filterSQL(opts.Filter, 3)
	q := `SELECT ` + memoryCols + `, last_accessed_at, access_count FROM memories AS m
		WHERE m.id > $1` + where + ` ORDER BY m.id LIMIT $2`
	return sqlrow.Scan(t, opts, pageSize, func(after int64, n int) (string, []any) {
		return q, append([]any{after, n}, fargs...)
	}, fn)
}

// qEdgesMany reads the edges of the ids $1 in one statement, each with the
// id it belongs to: through the primary key for the edges from an id,
// through edges_to for those to it (a loop once).
var qEdgesMany = `SELECT from_id, ` + sqlrow.EdgeCols + ` FROM edges WHERE from_id = ANY($1)
	UNION ALL
	SELECT to_id, ` + sqlrow.EdgeCols + ` FROM edges WHERE to_id = ANY($1) AND from_id <> to_id
	ORDER BY 1, 2, 3, 4`

// EdgesMany returns the edges of every id of ids that has some, in one
// statement (see driver.MultiEdgeReader).
func (t *readTx) EdgesMany(ids []int64) (map[int64][]driver.Edge, error) {
	out := map[int64][]driver.Edge{}
	if len(ids) == 0 {
		return out, nil
	}
	err := t.Each(qEdgesMany, []any{ids}, func(s sqlrow.Scanner) error {
		var id int64
		e, err := sqlrow.ScanEdge(idScanner{s, &id})
		if err != nil {
			return err
		}
		out[id] = append(out[id], e)
		return nil
	})
	if err != nil {
		return nil, t.fail(fmt.Sprintf("edges of %d memories", len(ids)), err)
	}
	return out, nil
}

// idScanner reads a leading id column into id, then the rest as the
// wrapped scanner's caller asks.
type idScanner struct {
	s  sqlrow.Scanner
	id *int64
}

func (s idScanner) Scan(dest ...any) error { return s.s.Scan(append([]any{s.id}, dest...)...) }

// Seq returns the sequence number of the latest committed change.
func (t *readTx) Seq() (uint64, error) {
	var seq int64
	if err := t.queryRow(`SELECT seq FROM store`, nil, &seq); err != nil {
		return 0, t.fail("read change sequence", err)
	}
	return uint64(seq), nil
}

// storeRow is the store table's one row, which every write transaction
// locks first and writes back before it commits.
type storeRow struct {
	seq, lastID, docs, tokens int64
}

// writeTx implements driver.Tx. It holds the lock on the store row, so it
// allocates ids and the change sequence number in memory and writes them
// back once, in flush. All its writes share one Seq.
type writeTx struct {
	readTx
	channel  string
	base, st storeRow // as locked, and as this transaction leaves it
	bumped   bool     // st.seq is this transaction's sequence number
	deleted  bool     // a Delete ran: vacuum after commit
	xid      string   // the transaction's id, read by the first Delete
	inserted int64    // memories inserted
	// rewritten counts memory rows this transaction wrote anew (Put,
	// Touch): each is a new row version, whose terms go to the keyword
	// index's pending list like an inserted row's.
	rewritten int64
}

// nextSeq returns the transaction's change sequence number.
func (t *writeTx) nextSeq() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.bumped {
		t.st.seq++
		t.bumped = true
	}
	return t.st.seq
}

// Seq is the transaction's own view: its sequence number once it wrote.
func (t *writeTx) Seq() (uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return 0, dbError(t.ctx, "read change sequence", pgx.ErrTxClosed)
	}
	return uint64(t.st.seq), nil
}

// flush sends the pending writes and the store row and, when the change
// log advanced, the notification that wakes other processes (delivered at
// commit), in one round trip.
func (t *writeTx) flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var extra []stmt
	if t.st != t.base {
		extra = append(extra, stmt{`UPDATE store SET seq = $1, last_id = $2, docs = $3, tokens = $4`,
			[]any{t.st.seq, t.st.lastID, t.st.docs, t.st.tokens}})
	}
	if t.bumped {
		extra = append(extra, stmt{`SELECT pg_notify($1, $2)`, []any{t.channel, itoa(t.st.seq)}})
	}
	return t.sendPending(extra)
}

// maxPending bounds the writes queued before they are sent anyway.
const maxPending = 1024

// batch queues writes; they are sent with the next read, at commit, or
// when maxPending are queued. Their errors surface then.
func (t *readTx) batch(stmts ...stmt) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return pgx.ErrTxClosed
	}
	t.pending = append(t.pending, stmts...)
	if len(t.pending) >= maxPending {
		return t.sendPending(nil)
	}
	return nil
}

type stmt struct {
	q    string
	args []any
}

// Insert stores m as version 1 of a new memory and sets m.ID. Any ID already
// in m is ignored.
func (t *writeTx) Insert(m *driver.Memory) error { return t.insert(m, false) }

// InsertAt stores m as version 1 of memory m.ID (see driver.Importer).
func (t *writeTx) InsertAt(m *driver.Memory) error { return t.insert(m, true) }

func (t *writeTx) insert(m *driver.Memory, keepID bool) error {
	row, err := sqlrow.InsertRow(t, m, keepID, false)
	if err != nil {
		return err
	}
	terms, n := analyze(m.Content)
	seq := t.nextSeq()
	t.mu.Lock()
	id := m.ID
	if keepID {
		t.st.lastID = max(t.st.lastID, id)
	} else {
		t.st.lastID++
		id = t.st.lastID
	}
	t.mu.Unlock()
	row[0] = id
	err = t.batch(stmt{qInsert, append(row[:len(row):len(row)], seq, n, terms)})
	if err != nil {
		return t.fail(fmt.Sprintf("insert memory %d", id), err)
	}
	t.mu.Lock()
	t.st.docs++
	t.st.tokens += int64(n)
	t.inserted++
	t.mu.Unlock()
	m.ID = id
	return nil
}

// ReserveIDs makes Insert assign ids above id (see driver.Importer).
func (t *writeTx) ReserveIDs(id int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return dbError(t.ctx, "reserve ids", pgx.ErrTxClosed)
	}
	t.st.lastID = max(t.st.lastID, id)
	return nil
}

// current returns the current version and token count of id.
func (t *writeTx) current(op string, id int64) (version, ntokens int, err error) {
	err = t.queryRow(`SELECT version, ntokens FROM memories WHERE id = $1`, []any{id}, &version, &ntokens)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, fmt.Errorf("%s: memory %d: %w", op, id, driver.ErrNotFound)
	}
	if err != nil {
		return 0, 0, t.fail(fmt.Sprintf("%s memory %d", op, id), err)
	}
	return version, ntokens, nil
}

// Put stores m as version m.Version of memory m.ID and makes it current;
// the version it replaces moves to memory_versions. The memory's access
// statistics are kept: they are not versioned.
func (t *writeTx) Put(m *driver.Memory) error {
	if m == nil {
		return driver.Invalidf("put: nil memory")
	}
	op := fmt.Sprintf("put memory %d version %d", m.ID, m.Version)
	cur, oldTokens, err := t.current("put", m.ID)
	if err != nil {
		return err
	}
	if err := driver.CheckPut(m, cur); err != nil {
		return err
	}
	args, err := sqlrow.MemoryArgs(m, false)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	terms, n := analyze(m.Content)
	seq := t.nextSeq()
	put := append(append([]any(nil), args[1:]...), seq, n, terms, m.ID)
	keep := stmt{qKeepVersion, []any{m.ID, args[sqlrow.Content], args[sqlrow.Embedding]}}
	if err := t.batch(keep, stmt{qPut, put}); err != nil {
		return t.fail(op, err)
	}
	t.mu.Lock()
	t.st.tokens += int64(n - oldTokens)
	t.rewritten++
	t.mu.Unlock()
	return nil
}

// Delete removes every version, keyword entry, edge and the embedding of id
// and leaves a tombstone (id and seq, no content). After the transaction
// commits, the touched tables are vacuumed (see the package documentation).
func (t *writeTx) Delete(id int64) error {
	op := fmt.Sprintf("delete memory %d", id)
	_, oldTokens, err := t.current("delete", id)
	if err != nil {
		return err
	}
	if t.xid == "" {
		// For the deletion certificate: which older transactions can
		// still see the deleted rows (see DB.forgot).
		if err := t.queryRow(`SELECT pg_current_xact_id()::text`, nil, &t.xid); err != nil {
			return t.fail(op, err)
		}
	}
	seq := t.nextSeq()
	now, _ := sqlrow.NullTime("deleted_at", time.Now())
	err = t.batch(
		stmt{`DELETE FROM edges WHERE from_id = $1 OR to_id = $1`, []any{id}},
		stmt{`DELETE FROM memory_versions WHERE id = $1`, []any{id}},
		stmt{`DELETE FROM memories WHERE id = $1`, []any{id}},
		stmt{`INSERT INTO tombstones (id, seq, deleted_at) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, deleted_at = excluded.deleted_at`, []any{id, seq, now}},
	)
	if err != nil {
		return t.fail(op, err)
	}
	t.mu.Lock()
	t.st.docs--
	t.st.tokens -= int64(oldTokens)
	t.deleted = true
	t.mu.Unlock()
	return nil
}

// Touch records an access to ids at at: each occurrence of an id counts one
// access, and the latest access time is kept. Unknown ids are ignored.
func (t *writeTx) Touch(ids []int64, at time.Time) error {
	ts, err := sqlrow.NullTime("access time", at)
	if err != nil {
		return fmt.Errorf("touch: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	counts := map[int64]int64{}
	for _, id := range ids {
		counts[id]++
	}
	keys := slices.Sorted(maps.Keys(counts))
	ns := make([]int64, len(keys))
	for i, k := range keys {
		ns[i] = counts[k]
	}
	_, err = t.exec(`UPDATE memories AS m SET access_count = m.access_count + u.n,
		last_accessed_at = CASE WHEN m.last_accessed_at IS NULL OR m.last_accessed_at < $1::text THEN $1::text ELSE m.last_accessed_at END
		FROM unnest($2::bigint[], $3::bigint[]) AS u (id, n) WHERE m.id = u.id`, ts, keys, ns)
	if err != nil {
		return t.fail("touch memories", err)
	}
	t.mu.Lock()
	t.rewritten += int64(len(keys))
	t.mu.Unlock()
	return nil
}

// Link adds or replaces the edge (e.From, e.To, e.Type).
func (t *writeTx) Link(e driver.Edge) error {
	op, err := driver.CheckLink(e, func(op string, id int64) error { _, _, err := t.current(op, id); return err })
	if err != nil {
		return err
	}
	created, err := sqlrow.NullTime("created_at", e.CreatedAt)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	t.nextSeq()
	_, err = t.exec(`INSERT INTO edges (from_id, to_id, type, weight, created_at, source) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (from_id, to_id, type) DO UPDATE SET
		weight = excluded.weight, created_at = excluded.created_at, source = excluded.source`,
		e.From, e.To, string(e.Type), e.Weight, created, e.Source)
	if err != nil {
		return t.fail(op, err)
	}
	return nil
}

// Unlink removes the edge (from, to, typ), or returns ErrNotFound.
func (t *writeTx) Unlink(from, to int64, typ driver.EdgeType) error {
	n, err := t.exec(`DELETE FROM edges WHERE from_id = $1 AND to_id = $2 AND type = $3`, from, to, string(typ))
	if err != nil {
		return t.fail(fmt.Sprintf("unlink %d→%d (%s)", from, to, typ), err)
	}
	if n == 0 {
		return fmt.Errorf("edge %d→%d (%s): %w", from, to, typ, driver.ErrNotFound)
	}
	t.nextSeq()
	return nil
}

// SetMeta stores a store-level setting. Keys starting with "postgres." are
// reserved for the backend.
func (t *writeTx) SetMeta(key, value string) error {
	if err := driver.CheckMetaKey(Name, reservedPrefix, key); err != nil {
		return err
	}
	t.nextSeq()
	_, err := t.exec(`INSERT INTO meta (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return t.fail(fmt.Sprintf("set meta key %q", key), err)
	}
	return nil
}

// AppendAudit appends e to the audit log and sets e.Seq. Audit sequence
// numbers are dense: the store lock serialises appends.
func (t *writeTx) AppendAudit(e *driver.AuditEntry) error {
	args, err := sqlrow.AuditArgs(e, false)
	if err != nil {
		return err
	}
	t.nextSeq()
	var seq int64
	err = t.queryRow(`INSERT INTO audit (seq, time, action, memory_id, detail, prev_hash, hash)
		SELECT coalesce(max(seq), 0) + 1, $1, $2, $3, $4, $5, $6 FROM audit RETURNING seq`,
		args, &seq)
	if err != nil {
		return t.fail("append audit", err)
	}
	e.Seq = uint64(seq)
	return nil
}
