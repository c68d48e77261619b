package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

// Keys of the meta table that belong to this package. SetMeta refuses keys
// with reservedPrefix so that a caller cannot corrupt them.
const (
	reservedPrefix   = "postgres."
	keySchemaVersion = reservedPrefix + "schema_version"
)

// migrations move the schema from version i to i+1, where i is the index.
// They run in order, in the transaction that opens the store, under an
// advisory lock, so that a store is never half-migrated and two processes
// opening a new store at once do not both create it. Append new ones;
// never edit a released one.
var migrations = []migration{{sql: schemaV1}, {run: retokenize}, {sql: schemaV3}, {sql: schemaV4}}

// migration is one step of migrations: SQL statements, or a function that
// runs in the transaction.
type migration struct {
	sql []string
	run func(ctx context.Context, tx pgx.Tx) error
}

// retokenize is version 2: core/text's tokenizer follows FTS5's own
// character table since (where it followed Go's Unicode tables; ASCII
// tokenizes alike), so the terms and token counts of every memory whose
// content is not ASCII are made again, and the store's token total moves
// by the difference. Like every migration it runs in the transaction that
// opens the store; a memos that does not know version 2 refuses the store
// once it ran (stop older memos processes on other hosts before upgrading,
// or they go on writing with the older tokenizer until they restart).
func retokenize(ctx context.Context, tx pgx.Tx) error {
	type row struct {
		id      int64
		content string
		ntokens int
	}
	// Only rows with a character past ASCII: the server filters, so that a
	// large store's text does not all cross the connection.
	rows, err := tx.Query(ctx, `SELECT id, content, ntokens FROM memories WHERE content ~ '[^\x01-\x7f]'`)
	if err != nil {
		return err
	}
	var todo []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.content, &r.ntokens); err != nil {
			rows.Close()
			return err
		}
		if !text.IsASCII(r.content) {
			todo = append(todo, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var delta int64
	b := &pgx.Batch{}
	for _, r := range todo {
		terms, n := analyze(r.content)
		delta += int64(n - r.ntokens)
		b.Queue(`UPDATE memories SET ntokens = $1, terms = array_to_tsvector($2::text[]) WHERE id = $3`, n, terms, r.id)
	}
	if delta != 0 {
		b.Queue(`UPDATE store SET tokens = tokens + $1`, delta)
	}
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, b).Close()
}

// schemaVersion is the version a store has after every migration.
var schemaVersion = len(migrations)

// schemaV1 is the first schema. Every table lives in the configured schema
// (Config.Schema), which is the connections' search_path.
//
// store is one row holding what writers allocate: the change sequence, the
// last memory id, and the corpus figures bm25 needs (documents and tokens of
// every current version). Every write transaction locks this row first (see
// the package documentation), which serialises writers the way SQLite's
// write lock does.
var schemaV1 = []string{
	`CREATE TABLE store (
		one     boolean PRIMARY KEY DEFAULT true CHECK (one),
		seq     bigint  NOT NULL DEFAULT 0,
		last_id bigint  NOT NULL DEFAULT 0,
		docs    bigint  NOT NULL DEFAULT 0,
		tokens  bigint  NOT NULL DEFAULT 0
	)`,
	`INSERT INTO store DEFAULT VALUES`,
	`CREATE TABLE meta (
		key   text PRIMARY KEY,
		value text NOT NULL
	)`,
	// terms holds the distinct stemmed tokens of content (the tokenizer and
	// stemmer of core's text analysis, not PostgreSQL's parser) for the GIN
	// index that proposes keyword candidates; ntokens is the content's length
	// in tokens, for bm25.
	`CREATE TABLE memories (
		id                bigint           PRIMARY KEY,
		version           integer          NOT NULL,
		namespace         text             NOT NULL,
		pool              text             NOT NULL,
		type              text             NOT NULL,
		content           text             NOT NULL,
		significance      integer          NOT NULL,
		entities          text,
		emotional_context text             NOT NULL,
		source            text             NOT NULL,
		session           text             NOT NULL,
		trust_level       text             NOT NULL,
		trust_score       double precision NOT NULL,
		valid_from        text,
		valid_to          text,
		created_at        text,
		updated_at        text,
		status            text             NOT NULL,
		metadata          text,
		embedding_model   text             NOT NULL,
		embedding_dim     integer          NOT NULL,
		embedding         bytea,
		last_accessed_at  text,
		access_count      bigint           NOT NULL DEFAULT 0,
		seq               bigint           NOT NULL,
		ntokens           integer          NOT NULL,
		terms             tsvector         NOT NULL
	)`,
	`CREATE INDEX memories_seq ON memories (seq, id)`,
	// Inserts go to the GIN pending list and are merged into the index in
	// bulk, which is several times cheaper per row than inserting each
	// one; every search scans the whole pending list, so it is bounded to
	// 1 MiB, and a bulk write merges it right away (see DB.afterBulk).
	`CREATE INDEX memories_terms ON memories USING gin (terms) WITH (fastupdate = on, gin_pending_list_limit = 1024)`,
	// No foreign key to memories: Delete removes the versions itself, and
	// the key's check (a lookup and a share lock of the record per version
	// row) cost a third of a version insert.
	`CREATE TABLE memory_versions (
		id                bigint           NOT NULL,
		version           integer          NOT NULL,
		namespace         text             NOT NULL,
		pool              text             NOT NULL,
		type              text             NOT NULL,
		content           text             NOT NULL,
		significance      integer          NOT NULL,
		entities          text,
		emotional_context text             NOT NULL,
		source            text             NOT NULL,
		session           text             NOT NULL,
		trust_level       text             NOT NULL,
		trust_score       double precision NOT NULL,
		valid_from        text,
		valid_to          text,
		created_at        text,
		updated_at        text,
		status            text             NOT NULL,
		metadata          text,
		embedding_model   text             NOT NULL,
		embedding_dim     integer          NOT NULL,
		embedding         bytea,
		PRIMARY KEY (id, version)
	)`,
	// Forgotten ids, so that other processes' change logs learn of deletes.
	`CREATE TABLE tombstones (
		id         bigint PRIMARY KEY,
		seq        bigint NOT NULL,
		deleted_at text   NOT NULL
	)`,
	`CREATE INDEX tombstones_seq ON tombstones (seq, id)`,
	`CREATE TABLE edges (
		from_id    bigint           NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		to_id      bigint           NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		type       text             NOT NULL,
		weight     double precision NOT NULL,
		created_at text,
		source     text             NOT NULL DEFAULT '',
		PRIMARY KEY (from_id, to_id, type)
	)`,
	`CREATE INDEX edges_to ON edges (to_id)`,
	`CREATE TABLE audit (
		seq       bigint PRIMARY KEY,
		time      text,
		action    text   NOT NULL,
		memory_id bigint NOT NULL DEFAULT 0,
		detail    text   NOT NULL DEFAULT '',
		prev_hash text   NOT NULL DEFAULT '',
		hash      text   NOT NULL DEFAULT ''
	)`,
}

// schemaV3 stores each version once, as sqlite (schema 2) and bolt (format
// 2) do. Before, memory_versions held every version as a full copy, the
// current one included, so the current content and embedding were stored
// twice. From version 3, memories holds the current version and
// memory_versions only the versions before it; a version row also leaves
// out what it shares with the version after it: its content is NULL when
// it equals the next version's, and its embedding is NULL (with
// embedding_dim > 0) when its bytes equal the next version's. A reader
// resolves a NULL from the first later version that has the value
// (memories, at the latest); see versionCols.
//
// The upgrade builds the new table from the old one in the opening
// transaction and drops the old one, so that the space it held returns to
// the operating system at once (an UPDATE in place would leave dead tuples
// behind for a VACUUM FULL). In the old table every version has its row,
// the current one included, so w (the version after v) is always there
// for a version that is kept.
var schemaV3 = []string{
	`CREATE TABLE memory_versions_v3 (
		id                bigint           NOT NULL,
		version           integer          NOT NULL,
		namespace         text             NOT NULL,
		pool              text             NOT NULL,
		type              text             NOT NULL,
		content           text,
		significance      integer          NOT NULL,
		entities          text,
		emotional_context text             NOT NULL,
		source            text             NOT NULL,
		session           text             NOT NULL,
		trust_level       text             NOT NULL,
		trust_score       double precision NOT NULL,
		valid_from        text,
		valid_to          text,
		created_at        text,
		updated_at        text,
		status            text             NOT NULL,
		metadata          text,
		embedding_model   text             NOT NULL,
		embedding_dim     integer          NOT NULL,
		embedding         bytea,
		CONSTRAINT memory_versions_v3_pkey PRIMARY KEY (id, version)
	)`,
	`INSERT INTO memory_versions_v3 (` + memoryCols + `)
		SELECT v.id, v.version, v.namespace, v.pool, v.type,
			CASE WHEN v.content IS NOT DISTINCT FROM w.content THEN NULL ELSE v.content END,
			v.significance, v.entities, v.emotional_context, v.source, v.session, v.trust_level, v.trust_score,
			v.valid_from, v.valid_to, v.created_at, v.updated_at, v.status, v.metadata, v.embedding_model, v.embedding_dim,
			CASE WHEN v.embedding_dim > 0 AND v.embedding IS NOT DISTINCT FROM w.embedding THEN NULL ELSE v.embedding END
		FROM memory_versions AS v
		JOIN memories AS m ON m.id = v.id AND v.version < m.version
		LEFT JOIN memory_versions AS w ON w.id = v.id AND w.version = v.version + 1
		ORDER BY v.id, v.version`,
	`DROP TABLE memory_versions`,
	`ALTER TABLE memory_versions_v3 RENAME TO memory_versions`,
	`ALTER INDEX memory_versions_v3_pkey RENAME TO memory_versions_pkey`,
}

// schemaV4 adds blobs (driver.BlobStore, see blob.go): named byte strings
// in chunks of a little less than a page, stored in the table's pages
// (PLAIN: neither compressed nor moved to TOAST), where the engine keeps
// its vector index snapshot so that a process on any host opens the store
// without reading every vector. A memos before version 4 neither reads nor
// writes it.
var schemaV4 = []string{
	`CREATE TABLE blobs (
		name  text    NOT NULL,
		chunk integer NOT NULL,
		data  bytea   NOT NULL,
		PRIMARY KEY (name, chunk)
	)`,
	`ALTER TABLE blobs ALTER COLUMN data SET STORAGE PLAIN`,
}

// migrate brings the schema to schemaVersion in tx: it creates it in an
// empty (or missing) schema, migrates an older memos store, and refuses a
// schema that holds other tables.
func migrate(ctx context.Context, tx pgx.Tx, schema string) error {
	// One opener at a time per schema; released at commit.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('memos:' || $1))`, schema); err != nil {
		return dbError(ctx, "lock the schema for migration", err)
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
		return dbError(ctx, "create schema "+schema, err)
	}
	var tables int
	var hasMeta bool
	err := tx.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(table_name = 'meta'), false)
		FROM information_schema.tables WHERE table_schema = $1`, schema).Scan(&tables, &hasMeta)
	if err != nil {
		return dbError(ctx, "read the schema", err)
	}
	version := 0
	if tables > 0 {
		var s string
		err := errors.New("no meta table")
		if hasMeta {
			err = tx.QueryRow(ctx, `SELECT value FROM meta WHERE key = $1`, keySchemaVersion).Scan(&s)
		}
		if err != nil {
			return fmt.Errorf("%w: schema %q has %d tables but is not a memos store (%v); choose another schema (config key schema)", driver.ErrInvalid, schema, tables, err)
		}
		if version, err = strconv.Atoi(s); err != nil || version < 1 {
			return fmt.Errorf("schema %q has a malformed memos schema version %q; restore it from a backup", schema, s)
		}
	}
	if version > schemaVersion {
		return fmt.Errorf("%w: schema %q has memos schema version %d, newer than this memos understands (%d); upgrade memos", driver.ErrInvalid, schema, version, schemaVersion)
	}
	for v := version; v < schemaVersion; v++ {
		what := fmt.Sprintf("migrate schema %q from version %d to %d", schema, v, v+1)
		for _, s := range migrations[v].sql {
			if _, err := tx.Exec(ctx, s); err != nil {
				return dbError(ctx, what, err)
			}
		}
		if run := migrations[v].run; run != nil {
			if err := run(ctx, tx); err != nil {
				return dbError(ctx, what, err)
			}
		}
	}
	if version == schemaVersion {
		return nil
	}
	_, err = tx.Exec(ctx, `INSERT INTO meta (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, keySchemaVersion, strconv.Itoa(schemaVersion))
	return dbError(ctx, "record the schema version", err)
}
