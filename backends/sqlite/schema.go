package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/memos-go/memos/core/driver"
)

// applicationID marks a file as a memos store in the SQLite header
// (PRAGMA application_id), so that Open can tell a memos store from any
// other SQLite database. It is "memo" in ASCII.
const applicationID = 0x6d656d6f

// Keys of the meta table that belong to this package. SetMeta refuses keys
// with reservedPrefix so that a caller cannot corrupt them.
const (
	reservedPrefix   = "sqlite."
	keySchemaVersion = reservedPrefix + "schema_version"
	keySeq           = reservedPrefix + "seq"
	// keyErasePending holds the change seq of the latest delete whose
	// content may still be in the files (see DB.erase); it is removed once
	// a checkpoint has cleared them.
	keyErasePending = reservedPrefix + "erase_pending"
)

// A migration moves the schema from version i to i+1, where i is its index
// in migrations. Migrations run in order, in the write transaction that
// opens the store, so a store is never left half-migrated. Append new ones;
// never edit a released one.
type migration func(ctx context.Context, tx *sql.Tx) error

var migrations = []migration{
	execAll(schemaV1...),
	execAll(schemaV2...),
	migrateV3,
}

// schemaVersion is the version a store has after every migration.
var schemaVersion = len(migrations)

// schemaV1 is the first schema.
//
// The FTS5 index is an external-content table over memories.content kept in
// step by triggers, rather than a contentless-delete table: the content is
// stored once (in memories), the triggers make it impossible for a write of
// the record to miss the index (also for rows written by an importer using
// plain SQL), and FTS5's integrity-check can compare the index against the
// records. FTS5's secure-delete option makes a delete remove the row's
// tokens from the index instead of adding a delete marker, so that no
// forgotten word stays in the file.
var schemaV1 = []string{
	`CREATE TABLE meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	) WITHOUT ROWID`,

	// MemU's columns first (id .. embedding), so a MemU memory.db maps onto
	// it; AUTOINCREMENT so that ids are never reused, also after a delete.
	`CREATE TABLE memories (
		id                INTEGER PRIMARY KEY AUTOINCREMENT,
		content           TEXT    NOT NULL,
		type              TEXT    NOT NULL DEFAULT 'fact',
		significance      INTEGER NOT NULL DEFAULT 5,
		entities          TEXT    NOT NULL DEFAULT '[]',
		emotional_context TEXT    NOT NULL DEFAULT '',
		source            TEXT    NOT NULL DEFAULT '',
		created_at        TEXT    NOT NULL DEFAULT '',
		updated_at        TEXT    NOT NULL DEFAULT '',
		embedding         BLOB,
		version           INTEGER NOT NULL DEFAULT 1,
		namespace         TEXT    NOT NULL DEFAULT 'default',
		pool              TEXT    NOT NULL DEFAULT 'memory',
		session           TEXT    NOT NULL DEFAULT '',
		trust_level       TEXT    NOT NULL DEFAULT 'imported',
		trust_score       REAL    NOT NULL DEFAULT 0.6,
		valid_from        TEXT,
		valid_to          TEXT,
		status            TEXT    NOT NULL DEFAULT 'active',
		metadata          TEXT,
		last_accessed_at  TEXT,
		access_count      INTEGER NOT NULL DEFAULT 0,
		embedding_model   TEXT    NOT NULL DEFAULT '',
		embedding_dim     INTEGER NOT NULL DEFAULT 0,
		seq               INTEGER NOT NULL DEFAULT 0
	)`,
	`CREATE INDEX memories_seq ON memories (seq)`,
	// A covering index for filtered keyword search: the join from each FTS
	// match to its filter columns reads this small index instead of the wide
	// rows (content and a kilobyte-sized embedding).
	`CREATE INDEX memories_scope ON memories (id, namespace, status, pool, type)`,

	// Every version, the current one included, as a full snapshot.
	`CREATE TABLE memory_versions (
		id                INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		version           INTEGER NOT NULL,
		namespace         TEXT    NOT NULL,
		pool              TEXT    NOT NULL,
		type              TEXT    NOT NULL,
		content           TEXT    NOT NULL,
		significance      INTEGER NOT NULL,
		entities          TEXT    NOT NULL,
		emotional_context TEXT    NOT NULL,
		source            TEXT    NOT NULL,
		session           TEXT    NOT NULL,
		trust_level       TEXT    NOT NULL,
		trust_score       REAL    NOT NULL,
		valid_from        TEXT,
		valid_to          TEXT,
		created_at        TEXT    NOT NULL,
		updated_at        TEXT    NOT NULL,
		status            TEXT    NOT NULL,
		metadata          TEXT,
		embedding_model   TEXT    NOT NULL,
		embedding_dim     INTEGER NOT NULL,
		embedding         BLOB,
		PRIMARY KEY (id, version)
	)`,

	`CREATE VIRTUAL TABLE memories_fts USING fts5 (
		content,
		content = 'memories',
		content_rowid = 'id',
		tokenize = 'porter unicode61 remove_diacritics 2'
	)`,
	`INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1)`,
	`CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
		INSERT INTO memories_fts (rowid, content) VALUES (new.id, new.content);
	END`,
	`CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
		INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.id, old.content);
	END`,
	`CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories
	WHEN old.content IS NOT new.content BEGIN
		INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.id, old.content);
		INSERT INTO memories_fts (rowid, content) VALUES (new.id, new.content);
	END`,

	// A row inserted with plain SQL (an import of a MemU memory.db) rather
	// than through Tx.Insert has seq 0: give it a change sequence number, its
	// embedding dimension and its version row, so the store stays whole.
	`CREATE TRIGGER memories_import AFTER INSERT ON memories WHEN new.seq = 0 BEGIN
		UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = '` + keySeq + `';
		UPDATE memories SET
			seq = (SELECT CAST(value AS INTEGER) FROM meta WHERE key = '` + keySeq + `'),
			version = 1,
			embedding_dim = CASE WHEN embedding IS NULL THEN 0 ELSE length(embedding) / 4 END
		WHERE id = new.id;
		INSERT INTO memory_versions (` + memoryCols + `)
			SELECT ` + memoryCols + ` FROM memories WHERE id = new.id;
	END`,

	// Forgotten ids, so that other processes' change logs learn of deletes.
	// No content.
	`CREATE TABLE tombstones (
		id         INTEGER PRIMARY KEY,
		seq        INTEGER NOT NULL,
		deleted_at TEXT    NOT NULL
	)`,
	`CREATE INDEX tombstones_seq ON tombstones (seq)`,

	`CREATE TABLE edges (
		from_id    INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		to_id      INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		type       TEXT    NOT NULL,
		weight     REAL    NOT NULL,
		created_at TEXT    NOT NULL,
		source     TEXT    NOT NULL DEFAULT '',
		PRIMARY KEY (from_id, to_id, type)
	) WITHOUT ROWID`,
	`CREATE INDEX edges_to ON edges (to_id)`,

	`CREATE TABLE audit (
		seq       INTEGER PRIMARY KEY AUTOINCREMENT,
		time      TEXT    NOT NULL,
		action    TEXT    NOT NULL,
		memory_id INTEGER NOT NULL DEFAULT 0,
		detail    TEXT    NOT NULL DEFAULT '',
		prev_hash TEXT    NOT NULL DEFAULT '',
		hash      TEXT    NOT NULL DEFAULT ''
	)`,
	`INSERT INTO meta (key, value) VALUES ('` + keySeq + `', '0')`,
}

// Indexes that Open creates when missing, outside the numbered migrations:
// they change no data and no reader depends on their absence, so a store
// opened by an older memos keeps working (it maintains them like any index)
// and one opened by a newer memos gets them on its first open.
var openIndexes = append([]string{
	// Session expansion reads a session's members (driver.SessionReader)
	// instead of scanning the store; turns without a session are left out.
	`CREATE INDEX IF NOT EXISTS memories_session ON memories (namespace, session) WHERE session != ''`,
	// A search as of a past time reads the memories changed since
	// (driver.UpdateReader) instead of scanning the scope.
	// Times are text in a fixed layout (timeLayout), whose order is the
	// times' order; rows written with plain SQL (an import of a MemU
	// memory.db) may hold SQLite's own formats, which do not sort with it:
	// memories_updated_other lists those, read apart.
	`CREATE INDEX IF NOT EXISTS memories_updated ON memories (namespace, updated_at)`,
	`CREATE INDEX IF NOT EXISTS memories_updated_other ON memories (namespace) WHERE ` + otherTime,
	// The bootstrap pack reads each (namespace, status, type) in rank order
	// (driver.RankReader, driver.CompareRank) and stops at its limit.
	`CREATE INDEX IF NOT EXISTS memories_rank ON memories (namespace, status, type,
		significance DESC, access_count DESC, last_accessed_at DESC, id)`,
	// memos list reads each (namespace, status) newest first or most
	// significant first (driver.ListReader) and stops at the end of its
	// page. created_at is text in timeLayout, or "" for the zero time, both
	// of which sort as the times do; rows written with plain SQL in another
	// format are listed by memories_created_other and read apart.
	`CREATE INDEX IF NOT EXISTS memories_list ON memories (namespace, status, created_at, id)`,
	`CREATE INDEX IF NOT EXISTS memories_list_sig ON memories (namespace, status, significance, created_at, id)`,
	`CREATE INDEX IF NOT EXISTS memories_created_other ON memories (namespace, status) WHERE ` + otherCreated,
	// Stats counts memories per facet (driver.Counter) with an aggregate
	// over this index, which holds every column the count reads.
	`CREATE INDEX IF NOT EXISTS memories_facets ON memories (namespace, pool, type, status, version, embedding_model, embedding_dim)`,
	// A memory's audit entries (driver.AuditMemoryReader): the review
	// queue's reasons, the console's memory page.
	`CREATE INDEX IF NOT EXISTS audit_memory ON audit (memory_id)`,
	// The batch entries that bind a memory (driver.AuditBindingReader,
	// driver.BoundIDs): a row per memory a batch entry's detail lists,
	// kept by a trigger, so that a memos that does not know the table keeps
	// it too. The INSERT fills in entries appended without the trigger
	// (all of them, the first time): it reads the entries about no one
	// memory after the last one bound, through audit_memory.
	`CREATE TABLE IF NOT EXISTS audit_binds (
		memory_id INTEGER NOT NULL,
		seq       INTEGER NOT NULL,
		PRIMARY KEY (memory_id, seq)
	) WITHOUT ROWID`,
	`CREATE TRIGGER IF NOT EXISTS audit_binds_insert AFTER INSERT ON audit
		WHEN NEW.memory_id = 0 AND ` + batchDetail("NEW.detail") + `
	BEGIN
		INSERT OR IGNORE INTO audit_binds (memory_id, seq) ` + boundIDs("NEW.detail", "NEW.seq", "") + `;
	END`,
	`WITH a AS MATERIALIZED (SELECT seq, detail FROM audit INDEXED BY audit_memory
		WHERE memory_id = 0 AND seq > (SELECT coalesce(max(seq), 0) FROM audit_binds) AND ` + batchDetail("detail") + `)
	INSERT OR IGNORE INTO audit_binds (memory_id, seq) ` + boundIDs("a.detail", "a.seq", "a"),
}, ftsVocabTables...)

// batchDetail is true for a detail (an SQL expression) that is a JSON
// object with an array "memories" (a batch entry's, driver.BoundIDs);
// invalid JSON is not.
func batchDetail(detail string) string {
	return `CASE WHEN json_valid(` + detail + `) THEN json_type(` + detail + `, '$.memories') = 'array' ELSE 0 END`
}

// boundIDs selects (memory_id, seq) for every whole-number id of the
// objects in the array "memories" of detail, an entry's with sequence
// number seq (SQL expressions over the tables from, if any);
// batchDetail(detail) must hold.
func boundIDs(detail, seq, from string) string {
	if from != "" {
		from += ", "
	}
	return `SELECT json_extract(j.value, '$.id'), ` + seq + ` FROM ` + from + `json_each(` + detail + `, '$.memories') AS j
		WHERE j.type = 'object' AND json_type(j.value, '$.id') = 'integer'`
}

// ftsVocabTables are created by Open (they are in openIndexes) and by the
// migration that reads them.
var ftsVocabTables = []string{
	// Keyword search reads the document frequency of a query's terms
	// (prune.go). A virtual table over the FTS5 index: it stores nothing.
	`CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_vocab USING fts5vocab (memories_fts, row)`,
	// The two-phase keyword search reads the postings of rare terms (each
	// instance of a term in a row) from this one, also storing nothing.
	`CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_instance USING fts5vocab (memories_fts, instance)`,
}

// canonicalTime is true for an updated_at in timeLayout (UTC, nine
// fraction digits); otherTime for any other non-empty one.
const (
	canonicalTime = `(length(updated_at) = 30 AND substr(updated_at, 11, 1) = 'T' AND substr(updated_at, 30, 1) = 'Z')`
	otherTime     = `(updated_at != '' AND NOT ` + canonicalTime + `)`
)

// sortedCreated is true for a created_at that sorts as its time: in
// timeLayout, or "" (the zero time); otherCreated for any other.
const (
	sortedCreated = `(created_at = '' OR (length(created_at) = 30 AND substr(created_at, 11, 1) = 'T' AND substr(created_at, 30, 1) = 'Z'))`
	otherCreated  = `(NOT ` + sortedCreated + `)`
)

// schemaV2 stores each version once. In version 1, memory_versions held
// every version, the current one included, as a full copy, so the current
// content and embedding were stored twice (in memories and in
// memory_versions). From version 2, memories holds the current version (it
// has to: the FTS5 index reads memories.content, and a MemU importer writes
// memories) and memory_versions only the versions before it. A version row
// also leaves out what it shares with the version after it: its content is
// NULL when it equals the next version's, and its embedding is NULL (with
// embedding_dim > 0) when its bytes equal the next version's. Edits that
// change metadata, status, validity or significance, the usual kind, so add
// a row of a few hundred bytes rather than a copy of the content and a
// kilobyte-sized embedding. A reader resolves a NULL from the first later
// version that has the value (memories, at the latest); see versionCols.
//
// The upgrade rebuilds memory_versions from the old one in the opening
// transaction: the current versions' rows are left out, and the content and
// embedding of each remaining row are dropped where they equal its
// successor's. The import trigger no longer writes a version row. The pages
// the old table freed are then returned to the file system by a VACUUM after
// the transaction commits (see compactAfterUpgrade).
var schemaV2 = []string{
	`DROP TRIGGER memories_import`,
	`CREATE TABLE memory_versions_v2 (
		id                INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		version           INTEGER NOT NULL,
		namespace         TEXT    NOT NULL,
		pool              TEXT    NOT NULL,
		type              TEXT    NOT NULL,
		content           TEXT,
		significance      INTEGER NOT NULL,
		entities          TEXT    NOT NULL,
		emotional_context TEXT    NOT NULL,
		source            TEXT    NOT NULL,
		session           TEXT    NOT NULL,
		trust_level       TEXT    NOT NULL,
		trust_score       REAL    NOT NULL,
		valid_from        TEXT,
		valid_to          TEXT,
		created_at        TEXT    NOT NULL,
		updated_at        TEXT    NOT NULL,
		status            TEXT    NOT NULL,
		metadata          TEXT,
		embedding_model   TEXT    NOT NULL,
		embedding_dim     INTEGER NOT NULL,
		embedding         BLOB,
		PRIMARY KEY (id, version)
	)`,
	// w is the version after v (in version 1 every version has its row,
	// the current one included); a version without one keeps everything.
	`INSERT INTO memory_versions_v2 (` + memoryCols + `)
		SELECT v.id, v.version, v.namespace, v.pool, v.type,
			CASE WHEN v.content IS w.content THEN NULL ELSE v.content END,
			v.significance, v.entities, v.emotional_context, v.source, v.session, v.trust_level, v.trust_score,
			v.valid_from, v.valid_to, v.created_at, v.updated_at, v.status, v.metadata, v.embedding_model, v.embedding_dim,
			CASE WHEN v.embedding_dim > 0 AND v.embedding IS w.embedding THEN NULL ELSE v.embedding END
		FROM memory_versions AS v
		JOIN memories AS m ON m.id = v.id AND v.version < m.version
		LEFT JOIN memory_versions AS w ON w.id = v.id AND w.version = v.version + 1
		ORDER BY v.id, v.version`,
	`DROP TABLE memory_versions`,
	`ALTER TABLE memory_versions_v2 RENAME TO memory_versions`,
	`CREATE TRIGGER memories_import AFTER INSERT ON memories WHEN new.seq = 0 BEGIN
		UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = '` + keySeq + `';
		UPDATE memories SET
			seq = (SELECT CAST(value AS INTEGER) FROM meta WHERE key = '` + keySeq + `'),
			version = 1,
			embedding_dim = CASE WHEN embedding IS NULL THEN 0 ELSE length(embedding) / 4 END
		WHERE id = new.id;
	END`,
}

func execAll(stmts ...string) migration {
	return func(ctx context.Context, tx *sql.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}
}

// migrate brings the store in tx to schemaVersion: it creates the schema in
// an empty database, migrates an older memos store, and refuses anything
// else. It returns the schema version the store had (0 for a new one).
// path is for messages only.
func migrate(ctx context.Context, tx *sql.Tx, path string) (from int, err error) {
	from, err = readSchemaVersion(ctx, tx, path)
	if err != nil || from == schemaVersion {
		return from, err
	}
	if from > schemaVersion {
		return from, fmt.Errorf("%w: %s has schema version %d, newer than this memos understands (%d); upgrade memos", driver.ErrInvalid, path, from, schemaVersion)
	}
	for v := from; v < schemaVersion; v++ {
		if err := migrations[v](ctx, tx); err != nil {
			return from, dbError(ctx, fmt.Sprintf("migrate %s from schema version %d to %d", path, v, v+1), err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, applicationID)); err != nil {
		return from, dbError(ctx, "mark the store", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, keySchemaVersion, strconv.Itoa(schemaVersion))
	return from, dbError(ctx, "record the schema version", err)
}

// readSchemaVersion returns the schema version of the store in tx: 0 for an
// empty database, an error for anything that is not a memos store.
func readSchemaVersion(ctx context.Context, tx *sql.Tx, path string) (int, error) {
	var appID int64
	if err := tx.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return 0, dbError(ctx, "read the store header", err)
	}
	version := 0
	switch appID {
	case applicationID:
		var s string
		err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, keySchemaVersion).Scan(&s)
		if err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				err = errors.New("no schema version")
			}
			return 0, fmt.Errorf("%s is marked as a memos store but its meta table is unreadable (%v); restore it from a backup", path, dbError(ctx, "read schema version", err))
		}
		if version, err = strconv.Atoi(s); err != nil || version < 1 {
			return 0, fmt.Errorf("%s has a malformed schema version %q; restore it from a backup", path, s)
		}
	case 0:
		var tables int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite\_%' ESCAPE '\'`).Scan(&tables)
		if err != nil {
			return 0, dbError(ctx, "read the schema", err)
		}
		if tables > 0 {
			return 0, fmt.Errorf("%w: %s is an SQLite database but not a memos store (it has %d tables and no memos marker); choose another path, or import it with the import command", driver.ErrInvalid, path, tables)
		}
	default:
		return 0, fmt.Errorf("%w: %s is an SQLite database of another application (application_id %#x), not a memos store; choose another path", driver.ErrInvalid, path, appID)
	}
	return version, nil
}
