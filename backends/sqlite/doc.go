// Package sqlite is memos' reference storage backend: the whole store —
// memories and every version of them, the FTS5 keyword index, embeddings,
// edges, tombstones, the audit log and settings — in one SQLite file, through
// the pure-Go driver modernc.org/sqlite (no cgo).
//
// # Basics
//
// Programs select it by importing the package (it registers itself as
// "sqlite") and setting the store path; the library can also open it
// directly:
//
//	db, err := sqlite.Open(ctx, sqlite.Config{Path: "/home/me/.memos/memory.db"})
//	eng, err := core.Open(ctx, core.Options{Backend: db, Embedder: e})
//
// The directory must exist; the file is created when missing. A file that is
// not a memos store is refused with core.ErrInvalid and left untouched. An
// older memos store is migrated in place, in one transaction.
//
// Every Update is one SQLite transaction: the record, its version row, its
// keyword entry (kept by triggers, so it cannot be missed), vectors, edges
// and audit entries commit together or not at all, also across a crash.
// The file is in WAL mode with synchronous=NORMAL: a committed write
// survives a crash of the process; a power failure may lose the last
// transactions but never leaves the store inconsistent.
//
// The memories table keeps MemU's columns (id, content, type, significance,
// entities as a JSON array, emotional_context, source, created_at,
// updated_at, embedding as little-endian float32) so a MemU memory.db can be
// imported with plain SQL; rows inserted that way are indexed too. Times are
// RFC 3339 text in UTC with nanoseconds.
//
// # Caveats
//
// Several processes may open one store. Readers never wait. Writers are
// serialised: in this process they queue (honouring their contexts); a
// writer in another process is waited for up to Config.BusyTimeout (30s by
// default), after which the write fails with core.ErrUnavailable. Keep
// Update functions short, and never call Update, View or Close from inside
// one.
//
// Forgetting (Tx.Delete) removes every version, the keyword entry, the
// embedding and the edges of a memory. secure_delete and FTS5's
// secure-delete option overwrite the freed bytes, and after the transaction
// the WAL is checkpointed and truncated, so the content does not remain in
// the files. The checkpoint waits at most a second for read transactions
// that still use the old pages (in other processes); while they hold them,
// the erasure is pending: DB.Erase reports it and waits for it (memos
// forget --wait), it is retried after the next write and at Close, and a
// durable record in the meta table makes the next Open of the store, by
// any process, complete it. A MemU-style import that bypasses Tx leaves the change
// log (Seq) untouched; run it before the engine opens the store.
package sqlite
