package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/memos-go/memos/backends/internal/guard"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

// Name is the name the backend registers under.
const Name = "sqlite"

func init() {
	driver.RegisterBackend(Name, driver.NewBackendDriver(Name, "memory.db", Open))
}

// DefaultBusyTimeout is how long a writer waits for another writer (in this
// or another process) before giving up, when Config.BusyTimeout is zero.
const DefaultBusyTimeout = 30 * time.Second

// Config configures the sqlite backend. Every field but Path may be left
// zero.
type Config struct {
	// Path is the store's file. Its directory must exist; the file is
	// created when missing.
	Path string `koanf:"path"`
	// BusyTimeout is how long a write transaction waits for the write lock
	// held by another connection or process before failing with
	// driver.ErrUnavailable (default 30s).
	BusyTimeout time.Duration `koanf:"busy_timeout"`
	// ReadConns is the number of connections serving read transactions and
	// keyword searches at once (default GOMAXPROCS, at least 4).
	ReadConns int `koanf:"read_conns"`
	// KeywordPruneRows: when the terms of a natural-language keyword search
	// (an OR of terms) match more rows than this, the rarest terms, within
	// this many rows, give the candidates, read from the index's postings,
	// and only those that may rank are read and scored; more terms join
	// until the result is proved to be FTS5's (see prune.go). Default
	// DefaultKeywordPruneRows; -1 scores every match, as FTS5 does.
	KeywordPruneRows int `koanf:"keyword_prune_rows"`
}

// DB is an open sqlite store. It implements driver.Backend and is safe for
// concurrent use; see the package documentation for its guarantees.
type DB struct {
	path        string
	busyTimeout time.Duration

	// w has exactly one connection: writers in this process queue for it in
	// database/sql (honouring their contexts); writers in other processes
	// are waited for by SQLite's busy handler.
	w *sql.DB
	// r serves read transactions and searches, several at a time.
	r *sql.DB
	// wStmts and rStmts hold the statements prepared at Open on w and r.
	// They are not modified afterwards.
	wStmts, rStmts map[string]*sql.Stmt

	searchMu    sync.Mutex
	searchStmts map[string]*sql.Stmt // on r, by filter shape
	// unfilteredSkip counts, by filter clause, the searches left before
	// ranking unfiltered first is tried again (see search.go).
	unfilteredSkip map[string]int

	pruneRows int        // Config.KeywordPruneRows; <= 0: off
	prune     pruneCache // see prune.go
	// pruneCounts counts keyword searches by how they were answered
	// (pruneOutcome), for tests.
	pruneCounts [3]atomic.Int64
	// pruneReads counts what two-phase searches read: postings (rows of
	// the instance table or phrase matches), lengths and contents; and
	// looseBounds makes them ignore the stored frontiers (bound.go). For
	// tests and benchmarks.
	pruneReads [3]atomic.Int64
	// ftsReads counts terms whose postings were decoded from FTS5's
	// records (fts5read.go), and those read from the fts5vocab table
	// because the records were not as expected; ftsTamper, when set,
	// changes a record (by its id) before it is decoded. For tests.
	ftsReads    [2]atomic.Int64
	ftsTamper   func(id int64, b []byte) []byte
	looseBounds bool

	// scrub is set while erasure may be pending: a delete committed (here,
	// or in another process before Open) and the checkpoint that clears its
	// content out of the files has not completed yet. The durable record is
	// the meta key keyErasePending; this flag only saves looking it up.
	scrub atomic.Bool
	// commits counts write transactions, for tuneCheckpoint.
	commits atomic.Int64

	guard guard.Guard // Close waits for View, Update and searches in progress
}

var (
	_ driver.Backend         = (*DB)(nil)
	_ driver.Eraser          = (*DB)(nil)
	_ driver.ErasureReporter = (*DB)(nil)
	_ driver.Tx              = (*writeTx)(nil)
	_ driver.AuditReader     = (*readTx)(nil)
	_ driver.SessionReader   = (*readTx)(nil)
	_ driver.MultiGetter     = (*readTx)(nil)
	_ driver.AuditReader     = (*writeTx)(nil)
	_ driver.Importer        = (*writeTx)(nil)
)

// sqliteMagic starts every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// Open opens the store at cfg.Path, creating the file (not its directory)
// when it does not exist and migrating an older memos store to the current
// schema. A file that is not a memos store is refused with driver.ErrInvalid.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.Path == "" {
		return nil, driver.Invalidf("sqlite: path is empty; set path to the store's file, e.g. ~/.memos/memory.db")
	}
	if cfg.BusyTimeout < 0 || cfg.ReadConns < 0 {
		return nil, driver.Invalidf("sqlite: busy_timeout and read_conns must not be negative")
	}
	rows, err := text.PruneRows(cfg.KeywordPruneRows)
	if err != nil {
		return nil, driver.Invalidf("sqlite: %v", err)
	}
	cfg.KeywordPruneRows = rows
	cfg.Defaults()
	path, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, driver.Invalidf("sqlite: path %q: %v", cfg.Path, err)
	}
	if err := checkFile(path); errors.Is(err, os.ErrNotExist) {
		if err := create(ctx, path, cfg); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	d := &DB{path: path, busyTimeout: cfg.BusyTimeout, pruneRows: cfg.KeywordPruneRows, guard: guard.Guard{Backend: Name, Store: path}}
	if err := d.open(ctx, cfg); err != nil {
		d.closeAll()
		return nil, err
	}
	// Finish an erasure that the process which deleted could not (a reader
	// in another process held the old pages, or it was killed). Best
	// effort: if readers still hold them, later writes and Close retry.
	d.scrub.Store(true)
	d.erase(ctx, checkpointWait)
	return d, nil
}

// create makes a new store at path atomically: it builds the store in a
// temporary file beside it and links that into place, so that a memos store
// never exists as an empty file, not even while another process creates it.
// That is why checkFile can refuse an empty file: it is damaged, not new.
// When another process creates path first, create leaves its store alone.
func create(ctx context.Context, path string, cfg Config) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	name := tmp.Name()
	tmp.Close()
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(name + suffix)
		}
	}()
	if err := os.Remove(name); err != nil { // SQLite creates its own file
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	d := &DB{path: name, busyTimeout: cfg.BusyTimeout}
	err = d.open(ctx, cfg)
	if err = errors.Join(err, d.closeAll()); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	if err := os.Link(name, path); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	return nil
}

// checkFile makes sure that path is in an existing directory and is either
// an SQLite database or missing (an error wrapping os.ErrNotExist). An empty
// file is refused: Open never leaves one (see create), so it is more likely
// a damaged store than a new one.
func checkFile(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return driver.Invalidf("sqlite: directory %s does not exist; create it or choose another path", dir)
		}
		return fmt.Errorf("sqlite: directory of %s: %w", path, err)
	}
	if !st.IsDir() {
		return driver.Invalidf("sqlite: %s is not a directory", dir)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return driver.Invalidf("sqlite: %s is a directory; path must name the store's file", path)
	}
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	if n == 0 && (err == io.EOF || err == nil) {
		return driver.Invalidf("sqlite: %s is empty (0 bytes); memos never leaves a store empty, so it is more likely damaged (truncated) than new: restore it from a backup, or remove it to start a new store", path)
	}
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("sqlite: read %s: %w", path, err)
	}
	if !bytes.Equal(head[:n], sqliteMagic) {
		return driver.Invalidf("sqlite: %s is not a memos store (not an SQLite database); choose another path", path)
	}
	return nil
}

// pageBytes is the page size of a new store (see dsn).
const pageBytes = 16384

// walCheckpointBytes bounds how much WAL the writer lets grow before it
// copies the WAL into the file (wal_autocheckpoint, which counts pages).
// Every page a write transaction changes goes to the WAL whole, and a
// checkpoint copies each page the WAL holds once, however many
// transactions rewrote it: the tails of the indexes, the session index and
// the keyword bounds are rewritten by every batch, so a longer interval
// copies them fewer times. At 100k turns 128 MiB wrote 8% less than
// SQLite's default of 1000 pages (docs/benchmarks.md, "Ingest at 100k").
// It moves no durability: a commit is in the WAL either way. But the WAL
// file keeps its size until the store is closed, so the interval is a
// quarter of the store (walPages), between 1000 pages and this bound: a
// small store does not carry a WAL many times its size.
const walCheckpointBytes = 128 << 20

// walRetune is how many commits pass between two settings of the
// interval to the store's size.
const walRetune = 16

// walPages returns the checkpoint interval, in pages of size bytes, for a
// store of pages pages.
func walPages(pages, size int64) int64 {
	return max(min(pages/4, walCheckpointBytes/max(size, 512)), 1000)
}

// tuneCheckpoint sets the writer's checkpoint interval to the store's size
// (walPages).
func (d *DB) tuneCheckpoint(ctx context.Context) error {
	var pages, size int64
	if err := d.w.QueryRowContext(ctx, `SELECT page_count, page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&pages, &size); err != nil {
		return fmt.Errorf("sqlite: %w", dbError(ctx, "read the size of "+d.path, err))
	}
	if _, err := d.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA wal_autocheckpoint = %d`, walPages(pages, size))); err != nil {
		return fmt.Errorf("sqlite: %w", dbError(ctx, "set the checkpoint interval of "+d.path, err))
	}
	return nil
}

// dsn builds the driver's connection string for path. Every connection
// waits busy for cfg.BusyTimeout and overwrites deleted content with zeros
// (secure_delete); the writer also puts the file in WAL mode and begins its
// transactions with BEGIN IMMEDIATE, so that a writer waits for the lock up
// front (under busy_timeout) instead of failing when it upgrades a read lock.
func dsn(path string, busy time.Duration, write bool) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path: file:///C:/...
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "secure_delete(1)")
	if write {
		// A memory row with a 256-dimensional embedding and a conversation
		// turn is about 2 KiB: B-tree pages leave unused the tail that the
		// next row does not fit in, about a fifth of 8 KiB pages and a
		// twentieth of 16 KiB ones. Measured on 100k real turns: 4 KiB pages
		// 359 MiB, 8 KiB 328, 16 KiB 293, 32 KiB 283 (and with the indexes
		// of the session, update and rank readers, 16 KiB 305.8, 32 KiB
		// 296.6); search latency was the same (BenchmarkSearchHybridExpand100k
		// p50 5.2–5.3 ms on either, load 3). But a write transaction puts
		// every page it changes in the WAL whole, and a batch of 500 turns
		// changes the last page or two of each of about twenty B-trees and
		// pages all over the session index and the keyword bounds: at 100k
		// turns 16 KiB pages wrote 14% fewer bytes than 32 KiB for a file
		// 2% larger (docs/benchmarks.md, "Ingest at 100k"). page_size only
		// takes effect on a new file (and in compactAfterUpgrade), before WAL
		// mode, which the driver applies after the _pragma list.
		q.Add("_pragma", fmt.Sprintf("page_size(%d)", pageBytes))
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "NORMAL")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

func (d *DB) open(ctx context.Context, cfg Config) error {
	var err error
	if d.w, err = sql.Open("sqlite", dsn(d.path, cfg.BusyTimeout, true)); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", d.path, err)
	}
	d.w.SetMaxOpenConns(1)
	d.w.SetMaxIdleConns(1)
	d.w.SetConnMaxLifetime(0)
	d.w.SetConnMaxIdleTime(0)

	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %w", dbError(ctx, "open "+d.path, err))
	}
	from, err := migrate(ctx, tx, d.path)
	if err != nil {
		tx.Rollback()
		return fmt.Errorf("sqlite: %w", err)
	}
	if err := execAll(openIndexes...)(ctx, tx); err != nil {
		tx.Rollback()
		return fmt.Errorf("sqlite: %w", dbError(ctx, "create the indexes of "+d.path, err))
	}
	// Rows written with plain SQL since the last write through memos.
	if err := syncBounds(&readTx{ctx: ctx, tx: tx}, nil); err != nil {
		tx.Rollback()
		return fmt.Errorf("sqlite: %w", dbError(ctx, "update the keyword bounds of "+d.path, err))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %w", dbError(ctx, "initialise "+d.path, err))
	}
	if from > 0 && from < 2 {
		d.compactAfterUpgrade(ctx, from)
	}
	// A statement of a write transaction keeps the pages it changes in a
	// statement journal, to undo it alone; on disk, that wrote more than
	// the WAL did (27 % of an ingest's bytes). In memory it is at most the
	// pages one statement changes. Set after the opening transaction and
	// the VACUUM, whose temporary copy of the store must stay on disk.
	if _, err := d.w.ExecContext(ctx, `PRAGMA temp_store = MEMORY`); err != nil {
		return fmt.Errorf("sqlite: %w", dbError(ctx, "set up "+d.path, err))
	}
	if err := d.tuneCheckpoint(ctx); err != nil {
		return err
	}

	if d.r, err = sql.Open("sqlite", dsn(d.path, cfg.BusyTimeout, false)); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", d.path, err)
	}
	d.r.SetMaxOpenConns(cfg.ReadConns)
	d.r.SetMaxIdleConns(cfg.ReadConns)
	d.r.SetConnMaxLifetime(0)
	d.r.SetConnMaxIdleTime(0)

	if d.wStmts, err = prepare(ctx, d.w, append(readQueries[:len(readQueries):len(readQueries)], writeQueries...)); err != nil {
		return err
	}
	if d.rStmts, err = prepare(ctx, d.r, append(readQueries[:len(readQueries):len(readQueries)], pruneQueries...)); err != nil {
		return err
	}
	d.searchStmts = make(map[string]*sql.Stmt)
	d.unfilteredSkip = make(map[string]int)
	return nil
}

// compactAfterUpgrade returns to the file system the pages that the
// upgrade from schema version from freed (from 1, the second copy of every
// current version: about half the file), so that an upgraded store is as
// small as one written by this version. It rewrites the file with VACUUM,
// which needs free disk space of about the new size, and then checkpoints
// the WAL. It is best effort: the store is already upgraded and correct, and
// freed pages are reused by later writes, so a failure (a full disk,
// another process's reader holding the old pages) is a warning.
func (d *DB) compactAfterUpgrade(ctx context.Context, from int) {
	var free, total int64
	if err := d.w.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
		return
	}
	if err := d.w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&total); err != nil || free*4 < total {
		return // less than a quarter is free: not worth rewriting the file
	}
	start := time.Now()
	slog.Info("memos: upgraded the store to schema version "+strconv.Itoa(schemaVersion)+"; compacting its file once (VACUUM)",
		"store", d.path, "from", from, "free_pages", free, "pages", total)
	wal, err := d.vacuum(ctx)
	if err != nil {
		slog.Warn("memos: the store is upgraded, but compacting its file failed; the free space inside it is reused by later writes", "store", d.path, "err", err)
		return
	}
	if err := d.checkpoint(ctx, checkpointWait); wal && err != nil {
		slog.Warn("memos: the store is upgraded and compacted, but its WAL could not be checkpointed yet; it will be at a later write or close", "store", d.path, "err", err)
	}
	slog.Info("memos: compacted the store", "store", d.path, "took", time.Since(start).Round(time.Millisecond))
}

// vacuum rewrites the file without its free pages. When no other
// connection has the store open, it also moves it to pageBytes pages: that
// takes a rollback journal for the VACUUM (in WAL mode the page size is
// fixed), so it leaves WAL mode and returns to it, and the switch, which
// needs exclusive access, is tried without waiting. It reports whether the
// VACUUM went through the WAL (which then needs a checkpoint).
func (d *DB) vacuum(ctx context.Context) (wal bool, err error) {
	conn, err := d.w.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	var size int
	if err := conn.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		return false, err
	}
	if size != pageBytes {
		var mode string
		conn.ExecContext(ctx, `PRAGMA busy_timeout = 0`)
		err := conn.QueryRowContext(ctx, `PRAGMA journal_mode = DELETE`).Scan(&mode)
		conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", d.busyTimeout.Milliseconds()))
		if err == nil && mode == "delete" {
			_, err = conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA page_size = %d`, pageBytes))
			if err == nil {
				_, err = conn.ExecContext(ctx, `VACUUM`)
			}
			if err2 := conn.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err2 != nil || mode != "wal" {
				return false, errors.Join(err, fmt.Errorf("return to WAL mode: %q, %v", mode, err2))
			}
			return false, err
		}
	}
	_, err = conn.ExecContext(ctx, `VACUUM`)
	return true, err
}

func prepare(ctx context.Context, db *sql.DB, queries []string) (map[string]*sql.Stmt, error) {
	m := make(map[string]*sql.Stmt, len(queries))
	for _, q := range queries {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			for _, s := range m {
				s.Close()
			}
			return nil, fmt.Errorf("sqlite: %w", dbError(ctx, "prepare statements", err))
		}
		m[q] = st
	}
	return m, nil
}

// enter registers an operation, or returns ErrClosed after Close.
func (d *DB) enter(op string) error { return d.guard.Enter(op) }

func (d *DB) leave() { d.guard.Leave() }

// View runs fn in a read transaction on one snapshot of the store. Several
// Views run at once, also while a write is in progress; they see only
// committed writes.
func (d *DB) View(ctx context.Context, fn func(tx driver.ReadTx) error) error {
	return d.guard.Run(ctx, "view", func() error { return d.view(ctx, fn) })
}

func (d *DB) view(ctx context.Context, fn func(tx driver.ReadTx) error) error {
	stx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite: %w", dbError(ctx, "begin read transaction", err))
	}
	t := &readTx{ctx: ctx, tx: stx, stmts: d.rStmts}
	t.bindReads()
	defer func() {
		t.done.Store(true)
		stx.Rollback() // a read transaction has nothing to commit
	}()
	return fn(t)
}

// Update runs fn in a write transaction. Writers are serialised: a writer in
// this or another process waits for the one in progress (up to
// Config.BusyTimeout when the other is in another process), so fn should be
// short. Update must not be called from inside fn.
func (d *DB) Update(ctx context.Context, fn func(tx driver.Tx) error) error {
	return d.guard.Run(ctx, "update", func() error { return d.update(ctx, fn) })
}

func (d *DB) update(ctx context.Context, fn func(tx driver.Tx) error) error {
	stx, err := d.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see dsn)
	if err != nil {
		return fmt.Errorf("sqlite: %w", dbError(ctx, "begin write transaction", err))
	}
	t := &writeTx{readTx: readTx{ctx: ctx, tx: stx, stmts: d.wStmts}}
	t.before = t.flushInserts
	t.bindReads()
	committed := false
	defer func() {
		t.done.Store(true)
		if !committed {
			stx.Rollback() // also when fn panics
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	if err := t.flushInserts(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if err := t.syncBounds(); err != nil {
		return fmt.Errorf("sqlite: %w", dbError(ctx, "update the keyword bounds", err))
	}
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %w", dbError(ctx, "commit", err))
	}
	committed = true
	if d.commits.Add(1)%walRetune == 0 {
		// The commit stands; a failure here only leaves the last interval.
		if err := d.tuneCheckpoint(ctx); err != nil {
			slog.Warn("memos: could not set the WAL checkpoint interval", "store", d.path, "err", err)
		}
	}
	switch {
	case t.deleted.Load():
		d.scrub.Store(true)
		d.erase(ctx, checkpointWait)
	case d.scrub.Load():
		// An earlier checkpoint found readers in the way: retry, without
		// making this writer wait for them.
		d.erase(ctx, 0)
	}
	return nil
}

// checkpointWait bounds how long the checkpoint after a delete waits for
// readers that still use the old pages; if they do not finish, the erasure
// is retried after later writes, at Close, by Erase and at the next Open.
const checkpointWait = time.Second

// Erase completes the erasure of deleted memories (see driver.Eraser): once a
// checkpoint has copied the WAL, whose frames hold the pages secure_delete
// overwrote with zeros, into the database file and truncated the WAL to
// zero bytes, no byte of deleted content remains in the files. A read
// transaction in another process that began before the delete keeps the
// checkpoint from completing; Erase waits up to wait for such readers.
func (d *DB) Erase(ctx context.Context, wait time.Duration) (bool, error) {
	if err := d.enter("erase"); err != nil {
		return false, err
	}
	defer d.leave()
	return d.erase(ctx, wait)
}

// Erasure says what the deletes left of the deleted content (see
// driver.ErasureReporter): secure_delete and FTS5's secure-delete zeroed
// their bytes in the pages they changed; the old pages are gone from the
// files once a checkpoint has copied the zeroed ones over them and emptied
// the WAL, which waits for readers of older snapshots (see Erase).
func (d *DB) Erasure(ctx context.Context) (driver.Erasure, error) {
	done, err := d.Erase(ctx, 0)
	if err != nil {
		return driver.Erasure{}, err
	}
	r := driver.Erasure{Done: []string{"the deleted rows' bytes were overwritten with zeros in the pages that held them (secure_delete, FTS5 secure-delete)"}}
	if done {
		r.Done = append(r.Done, "the write-ahead log was checkpointed into the database file and truncated: no old copy of those pages is left in the store's files")
	} else {
		r.Pending = append(r.Pending, "old copies of those pages stay in the database file and its write-ahead log while another process reads an older snapshot: a checkpoint removes them when it ends, at the latest when the store is next opened (forget --wait waits for it)")
	}
	return r, nil
}

// erase checkpoints (see Erase) and then removes the durable record of the
// pending erasure, unless a delete committed in between. It reports
// whether nothing is pending.
func (d *DB) erase(ctx context.Context, wait time.Duration) (bool, error) {
	if !d.scrub.Load() {
		return true, nil
	}
	var pending string
	err := d.w.QueryRowContext(ctx, qMeta, keyErasePending).Scan(&pending)
	if errors.Is(err, sql.ErrNoRows) {
		d.scrub.Store(false)
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: erase: %w", dbError(ctx, "read pending erasure", err))
	}
	if err := d.checkpoint(ctx, wait); err != nil {
		if errors.Is(err, driver.ErrUnavailable) {
			return false, nil // readers in the way: still pending
		}
		return false, err
	}
	res, err := d.w.ExecContext(ctx, `DELETE FROM meta WHERE key = ? AND value = ?`, keyErasePending, pending)
	if err != nil {
		return false, fmt.Errorf("sqlite: erase: %w", dbError(ctx, "clear pending erasure", err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil // another delete committed since: check again
	}
	d.scrub.Store(false)
	// Leave no WAL behind: it now holds only the meta page.
	d.checkpoint(ctx, 0)
	return true, nil
}

// checkpoint copies the WAL into the database and truncates it to zero
// bytes, waiting at most wait for readers of old snapshots. It returns nil
// when the WAL was emptied.
func (d *DB) checkpoint(ctx context.Context, wait time.Duration) error {
	conn, err := d.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: checkpoint: %w", dbError(ctx, "connect", err))
	}
	defer conn.Close()
	wait = min(wait, d.busyTimeout)
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", wait.Milliseconds())); err != nil {
		return fmt.Errorf("sqlite: checkpoint: %w", dbError(ctx, "set busy timeout", err))
	}
	defer conn.ExecContext(context.Background(), fmt.Sprintf("PRAGMA busy_timeout = %d", d.busyTimeout.Milliseconds()))
	var busy, logFrames, done int
	err = conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done)
	if err != nil {
		return fmt.Errorf("sqlite: checkpoint: %w", dbError(ctx, "checkpoint", err))
	}
	if busy != 0 {
		return fmt.Errorf("sqlite: checkpoint of %s: a read transaction (in this or another process) still uses the old pages: %w", d.path, driver.ErrUnavailable)
	}
	return nil
}

// Close waits for the transactions in progress, then releases the store.
// Later calls of any method, Close included, return driver.ErrClosed. Close
// must not be called from inside View or Update.
func (d *DB) Close() error {
	if err := d.guard.Close(); err != nil {
		return err
	}
	d.erase(context.Background(), checkpointWait)
	return d.closeAll()
}

var _ driver.Remover = (*DB)(nil)

// Remove closes the store and deletes its file with its WAL and shared
// memory files.
func (d *DB) Remove() error {
	err := d.Close()
	if err != nil && !errors.Is(err, driver.ErrClosed) {
		return err
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(d.path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sqlite: remove store: %w", err)
		}
	}
	return nil
}

func (d *DB) closeAll() error {
	var errs []error
	for _, m := range []map[string]*sql.Stmt{d.wStmts, d.rStmts, d.searchStmts} {
		for _, s := range m {
			s.Close()
		}
	}
	for _, db := range []*sql.DB{d.r, d.w} {
		if db != nil {
			if err := db.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close %s: %w", d.path, err)
	}
	return nil
}

// Path returns the absolute path of the store's file.
func (d *DB) Path() string { return d.path }
