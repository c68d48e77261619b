// Package bolt is the memos storage backend built on bbolt and bleve: an
// alternative to the sqlite reference backend that passes the same
// conformance suite and answers keyword queries the same way.
//
// # Basics
//
// A store is a directory (Config.Path, by default memory.bolt in MEMOS_HOME)
// holding two stores:
//
//   - memos.bolt, a bbolt file, is the store of record: every version of
//     every memory (with its embedding), edges, tombstones of forgotten ids,
//     the change log, store settings and the audit log; and secondary
//     indexes that order the memories by session, by update time, by
//     rank and in list order (see secondary.go), count them per facet and
//     their edges per namespace, and file audit entries under the
//     memories they are about or bind (see counts.go), kept in the same
//     transactions. A record's
//     content and the fields after its embedding, and audit entries, are
//     stored DEFLATE-compressed (store format 3, see storeFormat).
//   - keyword.bleve, a bleve (scorch) index, is the keyword index over the
//     current content of every memory. It is derived data: it is rebuilt
//     from memos.bolt when it is missing, damaged or belongs to another store.
//
// Open with Open or through the registry (core.LookupBackend("bolt")):
//
//	db, err := bolt.Open(ctx, bolt.Config{Path: "/data/memory.bolt"})
//
// Keyword search implements the shared query AST (core/query) with SQLite
// FTS5's semantics, so that a query returns the same memories on both
// backends: tokens are runs of letters and digits, case-folded with
// diacritics removed, and stemmed with FTS5's porter stemmer (package
// core/text, which also evaluates queries and computes bm25); a prefix term matches stemmed tokens that start with its
// stemmed text, as in FTS5; phrases match adjacent tokens; AND, OR and NOT
// nest freely; NEAR uses FTS5's algorithm (the last group to start begins at
// most N tokens after the end of every other). bleve has no NEAR and its
// boolean queries differ from FTS5 at the edges, so bleve only proposes
// candidates (a superset of the matches, carrying the positions of the
// query's tokens) and this package evaluates the query on those positions.
// Results are ranked by FTS5's bm25 formula (k1 1.2, b 0.75, FTS5's idf and
// document lengths, the phrase instances FTS5 counts), negated so that higher
// is better, ties broken by id; scores are bit-identical to the sqlite
// backend's. One corner differs: when a NEAR group that is a phrase of
// several words does not occur in a document that matches through another
// part of the query, FTS5 scores the later groups of that NEAR with
// instance counts left over from an earlier document; bolt counts them as
// 0, so such documents may rank slightly differently (never match
// differently). User text never reaches bleve's query-string syntax.
//
// # Crash consistency
//
// bbolt and bleve cannot commit together. Every write advances the store's
// change sequence number; Update commits the bbolt transaction first, then
// applies the same changes to the index together with that sequence number,
// which the index keeps in its internal store. Open compares the two: it
// re-indexes every memory changed after the index's sequence number, deletes
// the documents of memories deleted since, and removes any document whose
// memory the store does not have. A crash between the two commits thus loses
// nothing: the next Open replays it. An index that is ahead of the store (a
// store restored from a backup) or from another store is rebuilt. When the
// index can be neither brought up to date nor rebuilt (a full disk), Open
// still opens the store: reads work, a keyword search scans the records
// (the same hits, in time proportional to the store), and every Update
// fails with driver.ErrUnavailable until it can rebuild the index first.
//
// # Caveats
//
// A bolt store is used by one process at a time. bbolt locks the file
// exclusively; a second process that opens the store waits Config.Timeout
// (default 30s) and then fails with an error wrapping core.ErrUnavailable
// that says another process holds it. This is unlike the sqlite backend,
// whose file several processes (a CLI next to a running server) may share.
// Within one process, DB is safe for concurrent use; writers are
// serialised. As with any bbolt file, a write that grows the file beyond
// what is mapped waits until every open read transaction has ended; the
// first 256 MiB are mapped at Open, so small stores never wait.
//
// Forgetting removes a memory from both stores and then scrubs their files:
// every segment of the index is rewritten by a forced merge, which drops the
// deleted documents' terms (bleve merges only persisted segments and never
// a lone one, so an empty document is added in a segment of its own first
// and removed again), and every free page of the bbolt file (where bbolt's
// copy-on-write leaves old bytes) is overwritten with zeros. The scrub of the bbolt file
// waits for read transactions that began before the delete; if they outlast
// two seconds the erasure is pending (DB.Erase reports it and waits for it):
// the last of those readers runs the scrub when it ends, and it is retried
// after the next write and at Close. The delete records the pending scrub in
// the bbolt file, so that when the process is killed first, the next Open
// completes it before it returns. Both steps
// cost time proportional to the store's size, once per Update that deletes.
// Bytes that the file system itself keeps (old blocks of rewritten or
// removed files, snapshots) are out of reach of any backend.
//
// The index stores no content, only terms, positions and the attributes
// searches filter on (namespace, pool, status, type, length in tokens); no
// term frequencies or norms (bm25 counts the positions). An index built
// another way (an older indexMapping) is rebuilt at open.
package bolt
