// Package postgres is memos' storage backend for PostgreSQL, for users who
// outgrow one machine: many memos processes on many hosts share one
// database. It passes the same conformance suite as the sqlite and bolt
// backends, gives the same keyword results and scores, and the engine
// builds the same context packs on it, byte for byte.
//
// # Basics
//
// Programs select it by importing the package (it registers itself as
// "postgres") and setting a connection string:
//
//	db, err := postgres.Open(ctx, postgres.Config{DSN: "postgres://memos@db:5432/memos"})
//	eng, err := core.Open(ctx, core.Options{Backend: db, Embedder: e})
//
// The store lives in one schema (Config.Schema, default "memos"), created
// when missing; its tables are migrated in place by versioned migrations
// compiled into the package, in one transaction under an advisory lock, so
// that several processes opening a new store at once create it once. A
// schema that holds other tables is refused with driver.ErrInvalid.
//
// Every Update is one READ COMMITTED transaction whose first statement
// locks the one row of the store table (SELECT ... FOR UPDATE). That row
// holds the change sequence number, the last memory id and the corpus
// figures bm25 needs; the transaction allocates from them in memory and
// writes the row back before it commits. Writers therefore run one at a
// time across all processes, as SQLite's do, and in exchange:
//   - ids and sequence numbers have no gaps and are allocated in commit
//     order, so a process that has read the change log up to Seq n has seen
//     every commit up to n (a SERIAL column would hand out numbers that
//     commit out of order, and a reader could skip one for good);
//   - a Put cannot race another Put of the same memory between its version
//     check and its write, so versions never conflict at commit and nothing
//     needs SERIALIZABLE;
//   - no two writers wait for each other's rows in different orders, so
//     there are no deadlocks between memos writers.
//
// Should the database still report a serialization failure or a deadlock
// (40001, 40P01: e.g. with other software writing to the tables), Update
// rolls back and runs fn again, up to ten times, and callers never see it.
// Views are REPEATABLE READ, read-only: one snapshot, never blocked by
// writers. Searches and reads do not take the lock.
//
// # Several processes
//
// The change log is the seq column of memories and tombstones, read by
// every engine before each search (driver.ChangeLog), so a write committed
// by any process is in every other process's in-memory vector index before
// its next search. Each write transaction also sends its sequence number
// with pg_notify on the channel memos_<schema>; DB.WaitChange
// (driver.ChangeWaiter) blocks until a change arrives, and an engine over
// this backend waits on it in the background, so another process's write
// reaches its vector index within a notification's delay even when it does
// not search (at the latest after Config.PollInterval, should the
// notification be lost while the listening connection reconnects).
//
// Each engine holds every vector in memory. It keeps the snapshot of its
// vector index in the store (driver.BlobStore: the table blobs, in chunks of
// 1 MiB), written when an engine closes and read by the next one to open on
// any host, which then replays the change log written since the snapshot's
// sequence number: an open reads one 100 MB blob at 100k memories of 256
// dimensions instead of 100k rows. A blob is written in a transaction of
// its own that does not lock the store row, so writers do not wait for it;
// the writes and deletes of one blob take turns on an advisory lock.
//
// Keyword search: a GIN index over a tsvector of the content's stemmed
// tokens (core/text's tokenizer and FTS5's porter stemmer, not
// PostgreSQL's parser) proposes candidates; core/text evaluates the query
// on each with FTS5's exact meaning and scores it with FTS5's bm25. A query
// of single terms without NOT is one statement: one round trip, no
// transaction. An OR of several terms whose memories exceed
// keyword_prune_rows (a natural-language question with common words) is
// evaluated in two phases, in one read transaction: the candidates of its
// rarest terms only (see search.go).
//
// Round trips, not the server's work, dominate a search over loopback: a
// View sends its BEGIN with its first statement, and a search loads its
// candidates with one statement (driver.MultiGetter).
//
// # Caveats
//
// A server that cannot be reached, restarts, or drops a connection makes
// operations fail with driver.ErrUnavailable; the pool reconnects on its
// own, so later operations succeed without reopening the backend. A
// transaction whose COMMIT was sent when the connection broke may have
// committed although it reported ErrUnavailable.
//
// Forgetting (Tx.Delete) deletes every row of the memory (record, every
// version, keyword entry, edges) and leaves a tombstone with its id only.
// PostgreSQL does not overwrite a deleted row: it stays in its heap page as
// a dead tuple until VACUUM reclaims it, and the write-ahead log keeps the
// inserted content until the segment is recycled. So after the forget
// commits, the backend runs VACUUM on memories, memory_versions and edges
// (Config.NoVacuum turns this off), which removes the dead tuples and
// their index entries as soon as no open transaction can still see them;
// the freed space is reused, not zeroed. For physical erasure an operator
// must also: let long-running transactions end (they hold dead tuples),
// run VACUUM FULL or pg_repack on those tables to rewrite their files,
// CHECKPOINT and let old WAL segments be recycled (and remove them from
// WAL archives), and expire base backups, replicas' files and logical
// dumps taken before the forget. DB.Erasure says all this in the deletion
// certificate (see erase.go): whether the VACUUM ran and which rows it had
// to leave, and what stays out of the backend's reach.
package postgres
