package bolt

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/memos-go/memos/backends/internal/guard"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

// Name is the name the backend registers under.
const Name = "bolt"

// File names inside the store's directory.
const (
	// StoreFile is the bbolt file, the store of record.
	StoreFile = "memos.bolt"
	// IndexDir is the bleve index directory, derived from StoreFile and
	// rebuilt from it when it is missing or damaged.
	IndexDir = "keyword.bleve"
)

// initialMmapSize is the address space bbolt maps at first (not memory,
// and the file does not grow to it).
const initialMmapSize = 256 << 20

// DefaultTimeout is how long Open waits for another process to release the
// store when Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

func init() {
	driver.RegisterBackend(Name, driver.NewBackendDriver(Name, "memory.bolt", Open))
}

// Config configures the bolt backend. Every field but Path may be left zero.
type Config struct {
	// Path is the store's directory; it holds StoreFile and IndexDir and is
	// created (with its parents) when missing.
	Path string `koanf:"path"`
	// Timeout is how long Open waits for the exclusive lock on the store
	// while another process holds it, before failing with
	// driver.ErrUnavailable (default 30s).
	Timeout time.Duration `koanf:"timeout"`
	// KeywordPruneRows bounds the documents a natural-language keyword
	// search scores, as sqlite's option of that name does (see
	// search.go): 0 is text.DefaultPruneRows; -1 scores every match.
	KeywordPruneRows int `koanf:"keyword_prune_rows"`
}

// DB is an open bolt store. It implements driver.Backend and is safe for
// concurrent use by the goroutines of one process; see the package
// documentation for its guarantees.
type DB struct {
	dir string
	bdb *bbolt.DB

	// writeSem serialises Update from start to the end of its index update,
	// so that the keyword index applies commits in order.
	writeSem chan struct{}

	// vis guards the keyword index and kstats: an Update holds it while it
	// applies a commit to them, a search for its whole duration, so that a
	// search sees whole commits and statistics that match its index.
	vis sync.RWMutex
	// storeID identifies the store; its keyword index records it.
	storeID string
	idx     bleve.Index
	kstats  keywordStats
	// stale is set when a commit could not be applied to the keyword index;
	// the next Update repairs the index from the store first.
	stale atomic.Bool

	readers readerSet
	// scrubIndex and scrubFile are set when a delete committed and the
	// keyword index has not been compacted, or the free pages of the bbolt
	// file that may hold its bytes not been overwritten, yet.
	scrubIndex, scrubFile atomic.Bool

	// repaired is the number of change sequence numbers Open found the
	// keyword index behind by (for tests).
	repaired uint64
	// remapped is set when Open rebuilt a keyword index built with an
	// older indexMapping (for tests).
	remapped bool

	// pruneRows is Config.KeywordPruneRows (-1: off); pruneCounts counts
	// keyword searches by how they were answered (pruneOutcome, search.go).
	pruneRows   int
	pruneCounts [3]atomic.Int64

	guard guard.Guard // Close waits for View, Update and searches in progress
}

var (
	_ driver.Backend         = (*DB)(nil)
	_ driver.Eraser          = (*DB)(nil)
	_ driver.ErasureReporter = (*DB)(nil)
	_ driver.Tx              = (*writeTx)(nil)
	_ driver.AuditReader     = (*readTx)(nil)
	_ driver.BackendStater   = (*DB)(nil)
	_ driver.Importer        = (*writeTx)(nil)
)

// Open opens the store in cfg.Path, creating it when missing, and brings the
// keyword index up to date with the store of record (after a crash, the
// index may lack the last commits, see the package documentation).
//
// A bolt store is used by one process at a time: while another process has
// it open, Open waits up to cfg.Timeout and then fails with an error wrapping
// driver.ErrUnavailable.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.Path == "" {
		return nil, driver.Invalidf("bolt: path is empty; set path to the store's directory, e.g. ~/.memos/memory.bolt")
	}
	if cfg.Timeout < 0 {
		return nil, driver.Invalidf("bolt: timeout must not be negative")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	pruneRows, err := text.PruneRows(cfg.KeywordPruneRows)
	if err != nil {
		return nil, driver.Invalidf("bolt: %v", err)
	}
	dir, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, driver.Invalidf("bolt: path %q: %v", cfg.Path, err)
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, driver.Invalidf("bolt: %s is a file; path must name the store's directory (the bolt backend keeps %s and %s in it)", dir, StoreFile, IndexDir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("bolt: create store directory: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", dir, err)
	}
	file := filepath.Join(dir, StoreFile)
	if err := ensureFile(file); err != nil {
		return nil, err
	}
	bdb, err := bbolt.Open(file, 0o600, &bbolt.Options{
		Timeout:      cfg.Timeout,
		FreelistType: bbolt.FreelistMapType,
		// A write that grows the file beyond the mapping waits for every
		// open read transaction; map generously so that this is rare.
		InitialMmapSize: initialMmapSize,
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("bolt: %s is in use by another process, or open already in this one (waited %v for its lock): a bolt store can be open once at a time; stop the other memos process, or use the sqlite backend to share a store: %w", dir, cfg.Timeout, driver.ErrUnavailable)
		}
		return nil, fmt.Errorf("bolt: open %s: %w", file, err)
	}
	bdb.AllocSize = allocSize
	d := &DB{dir: dir, bdb: bdb, writeSem: make(chan struct{}, 1), pruneRows: pruneRows, guard: guard.Guard{Backend: Name, Store: dir}}
	d.readers.init()
	storeID, err := d.initStore()
	if err == nil {
		err = d.packStore(ctx)
	}
	if err == nil {
		err = d.retokenize(ctx)
	}
	if err != nil {
		bdb.Close()
		return nil, err
	}
	d.storeID = storeID
	if err := d.ensureSecondary(); err != nil {
		bdb.Close()
		return nil, err
	}
	if err := d.openIndex(ctx, storeID); err != nil {
		if ctx.Err() != nil {
			bdb.Close()
			return nil, err
		}
		// The records are intact: open without the index rather than
		// make them unreadable (see degraded.go).
		d.stale.Store(true)
		slog.Warn("memos: the keyword index could not be brought up to date; the store is open, keyword search scans the records (slower) and writes fail until the index can be rebuilt: free disk space, then write or reopen the store", "store", dir, "err", err)
	}
	// Finish a scrub that the process which deleted did not (it was
	// killed, or a reader outlived it). No reader is open yet.
	if d.erasePending() {
		d.scrubIndex.Store(true)
		d.scrubFile.Store(true)
		d.scrub(ctx, 0)
	}
	return d, nil
}

// ensureFile creates the bbolt file atomically when it is missing: it
// initialises a temporary file beside it and links that into place, so that
// a store file never exists empty, not even while another process creates
// it. An empty file is therefore refused: it is more likely a damaged store
// than a new one, and bbolt would silently start it afresh.
func ensureFile(file string) error {
	st, err := os.Stat(file)
	switch {
	case err == nil && st.Size() == 0:
		return driver.Invalidf("bolt: %s is empty (0 bytes); memos never leaves a store file empty, so it is more likely damaged (truncated) than new: restore it from a backup, or remove it to start a new store", file)
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("bolt: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".new-*")
	if err != nil {
		return fmt.Errorf("bolt: create %s: %w", file, err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("bolt: create %s: %w", file, err)
	}
	// Writes bbolt's meta pages, with the page size, into the empty file.
	bdb, err := bbolt.Open(name, 0o600, &bbolt.Options{PageSize: pageSize})
	if err == nil {
		err = bdb.Close()
	}
	if err != nil {
		return fmt.Errorf("bolt: create %s: %w", file, err)
	}
	if err := os.Link(name, file); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("bolt: create %s: %w", file, err)
	}
	return nil
}

// Buckets of the bbolt file. Keys are big-endian so that cursors visit ids
// and sequence numbers in ascending order.
var (
	bktSys   = []byte("sys")   // store-level counters, see key* below
	bktMem   = []byte("mem")   // id → current version (record); its sequence numbers ids
	bktVer   = []byte("ver")   // id, version → older versions (record)
	bktChg   = []byte("chg")   // change seq → id, one entry per changed memory
	bktTomb  = []byte("tomb")  // id → seq of its deletion
	bktEdge  = []byte("edge")  // from, to, type → edge
	bktRedge = []byte("redge") // to, from, type → nothing (reverse index)
	bktMeta  = []byte("meta")  // key → value, for Tx.SetMeta
	bktAudit = []byte("audit") // seq → audit entry (JSON); its sequence numbers entries
	buckets  = [][]byte{bktSys, bktMem, bktVer, bktChg, bktTomb, bktEdge, bktRedge, bktMeta, bktAudit}
)

// Keys of bktSys.
var (
	keyFormat = []byte("format") // storeFormat
	keyStore  = []byte("store")  // random store id, also recorded in the index
	keySeq    = []byte("seq")    // latest change sequence number
	keyCount  = []byte("count")  // number of memories
	keyTokens = []byte("tokens") // tokens in the current content of all memories
	keyScrub  = []byte("scrub")  // bumped by the transaction that scrubs free pages
	keyErase  = []byte("erase")  // present while a delete's scrub is pending: the seq of the delete
)

// storeFormat is the format of the bbolt file. 1: every record in
// recordFormat. 2: earlier versions in versionFormat, without what they
// share with the next version; a memos that reads format 1 only would take
// those for corrupt records, so the format number keeps it away. 3: records
// in packedRecord and packedVersion (their tails DEFLATE-compressed) and
// audit entries packed likewise (older records and entries stay readable).
// Open upgrades a format 1 store to 2 (upgradeRecords) and a format 2 store
// to 3 (packStore) in place.
const storeFormat = 3

// pageSize is the page size of a new store file (an existing file keeps
// its own). A memory's record with a 256-dimensional embedding and a packed
// conversation turn is about 1.7 KiB: on 4 KiB pages, one or two fit per
// page and bbolt's default fill (half a page) leaves the rest empty. A page
// ends with the part of a record that did not fit, about half a record:
// 5% of a 16 KiB page, 2.5% of a 32 KiB one (100k turns: 177.8 MiB on 16
// KiB pages, 174.7 on 32). A commit writes the pages it changed, so a small
// write writes more bytes on larger pages; it still fsyncs as often.
const pageSize = 32768

// appendFill is how full a page of the buckets whose keys only grow (ids,
// change and audit sequence numbers, and upd, whose keys grow with the
// update time within a namespace) is left when it splits: new keys go to
// the last page, so the pages before it stay as they are, full. Not for
// buckets written in random key order (sess, rank): with full pages every
// insert into the middle splits off a nearly empty page (100k turns: sess
// took 62 MiB for 7 MiB of keys). (An edit
// that makes a record of mem longer than the room left in its page, about
// half a record, splits the page in two.)
const appendFill = 1.0

// allocSize is how much bbolt grows the file by when it needs pages: a
// growth costs a truncate and an fsync, and what is not used yet is empty
// file (bbolt's default, 16 MiB, is up to 16 MiB of it).
const allocSize = 1 << 20

// fillPages sets the fill of the append-only buckets for a write
// transaction (bbolt keeps it per transaction).
func fillPages(tx *bbolt.Tx) {
	for _, name := range [][]byte{bktMem, bktChg, bktAudit, bktUpd} {
		if b := tx.Bucket(name); b != nil {
			b.FillPercent = appendFill
		}
	}
	for _, name := range [][]byte{bktSess, bktRank, bktLrec, bktLsig} {
		if b := tx.Bucket(name); b != nil {
			b.FillPercent = randomFill
		}
	}
}

// initStore creates the buckets of a new store, checks the format of an
// existing one, and returns its id and keyword statistics.
func (d *DB) initStore() (string, error) {
	var id string
	err := d.bdb.Update(func(tx *bbolt.Tx) error {
		sys := tx.Bucket(bktSys)
		if sys == nil {
			if tx.Bucket(bktMem) != nil || len(rootBuckets(tx)) > 0 {
				return driver.Invalidf("bolt: %s is a bbolt file but not a memos store; choose another path", d.dir)
			}
			for _, b := range buckets {
				if _, err := tx.CreateBucket(b); err != nil {
					return err
				}
			}
			sys = tx.Bucket(bktSys)
			var raw [16]byte
			if _, err := rand.Read(raw[:]); err != nil {
				return err
			}
			if err := sys.Put(keyStore, []byte(hex.EncodeToString(raw[:]))); err != nil {
				return err
			}
			if err := sys.Put(keyFormat, u64(storeFormat)); err != nil {
				return err
			}
		}
		f := getU64(sys, keyFormat)
		if f < 1 || f > storeFormat {
			return driver.Invalidf("bolt: %s has store format %d, this memos understands %d; upgrade memos", d.dir, f, storeFormat)
		}
		for _, b := range buckets {
			if tx.Bucket(b) == nil {
				return fmt.Errorf("bolt: %s lacks bucket %q; restore it from a backup", d.dir, b)
			}
		}
		if f == 1 {
			if err := upgradeRecords(tx); err != nil {
				return fmt.Errorf("upgrade from store format 1: %w", err)
			}
			// Format 2 until packStore has packed it.
			if err := sys.Put(keyFormat, u64(2)); err != nil {
				return err
			}
		}
		id = string(sys.Get(keyStore))
		d.kstats = keywordStats{docs: getU64(sys, keyCount), tokens: getU64(sys, keyTokens)}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("bolt: open %s: %w", d.dir, err)
	}
	return id, nil
}

// upgradeRecords rewrites the earlier versions of a format 1 store in
// versionFormat, leaving out what each shares with the version after it.
// It runs in the transaction that opens the store. The file keeps its size
// (bbolt does not shrink it); later writes reuse the freed pages.
func upgradeRecords(tx *bbolt.Tx) error {
	ver, mem := tx.Bucket(bktVer), tx.Bucket(bktMem)
	if ver == nil || mem == nil {
		return nil // checked by the caller
	}
	type kv struct{ k, v []byte }
	var out []kv
	c := ver.Cursor()
	k, v := c.First()
	for k != nil {
		if len(k) != 12 {
			return errCorrupt
		}
		id := int64(binary.BigEndian.Uint64(k))
		prefix := k[:8:8]
		// This memory's earlier versions, then its current one.
		var keys [][]byte
		var ms []*driver.Memory
		var ntoks []int
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			m, h, err := decodeRecord(id, v)
			if err != nil {
				return err
			}
			if h.Flags != 0 {
				return fmt.Errorf("memory %d: a format 1 store holds a record in format %d: %w", id, v[0], errCorrupt)
			}
			keys, ms, ntoks = append(keys, bytes.Clone(k)), append(ms, m), append(ntoks, h.NTok)
		}
		cur := mem.Get(prefix)
		if cur == nil {
			return fmt.Errorf("memory %d has earlier versions but no current one: %w", id, errCorrupt)
		}
		m, _, err := decodeRecord(id, cur)
		if err != nil {
			return err
		}
		ms = append(ms, m)
		for i, key := range keys {
			rec, err := encodeVersion(ms[i], ms[i+1], ntoks[i])
			if err != nil {
				return err
			}
			out = append(out, kv{key, rec})
		}
	}
	for _, e := range out {
		if err := ver.Put(e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}

// packBatch is how many records or audit entries a transaction of
// packStore rewrites: enough that the commits are few, few enough that a
// transaction holds some megabytes, and that the pages the one before it
// freed are reused instead of the file growing by a copy of the store.
var packBatch = 4096

// packStore upgrades a format 2 store to format 3: it rewrites its records
// in packedRecord and packedVersion and its audit entries packed, a batch
// per transaction, then sets the format. A record keeps its head byte for
// byte; only its format byte changes and its tail is packed. Until the
// last transaction the store says format 2 (a memos that reads format 2
// only then reports the packed records as corrupt, and changes none of
// them); an upgrade that stops half-way resumes at the next open, skipping
// what is packed.
func (d *DB) packStore(ctx context.Context) error {
	if f, err := d.sysU64(keyFormat); err != nil || f != 2 {
		return err
	}
	repack := func(v []byte) ([]byte, error) {
		var f byte
		switch {
		case len(v) == 0:
			return nil, errCorrupt
		case v[0] == recordFormat:
			f = packedRecord
		case v[0] == versionFormat:
			f = packedVersion
		default:
			return nil, nil // packed already
		}
		_, dec := decodeHead(v)
		if dec.err != nil {
			return nil, dec.err
		}
		head := len(v) - len(dec.b)
		out := append([]byte{f}, v[1:head]...)
		return pack(out, dec.b, true), nil
	}
	packJSON := func(v []byte) ([]byte, error) {
		if len(v) == 0 || v[0] != '{' {
			return nil, nil
		}
		return packAudit(v), nil
	}
	for _, b := range []struct {
		name []byte
		what string
		conv func([]byte) ([]byte, error)
	}{{bktMem, "current versions", repack}, {bktVer, "earlier versions", repack}, {bktAudit, "audit log", packJSON}} {
		var from []byte
		for first := true; first || from != nil; first = false {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("bolt: open %s: upgrade to store format %d: %w", d.dir, storeFormat, err)
			}
			err := d.bdb.Update(func(tx *bbolt.Tx) error {
				var err error
				from, err = rewrite(tx.Bucket(b.name), from, packBatch, b.conv)
				return err
			})
			if err != nil {
				return fmt.Errorf("bolt: open %s: upgrade to store format %d: pack the %s: %w", d.dir, storeFormat, b.what, err)
			}
		}
	}
	err := d.bdb.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bktSys).Put(keyFormat, u64(storeFormat))
	})
	if err != nil {
		return fmt.Errorf("bolt: open %s: upgrade to store format %d: %w", d.dir, storeFormat, err)
	}
	return nil
}

// rewrite replaces the value v of up to n keys of b, from key from on (the
// first when nil), by conv(v) unless that is nil, and returns the key to go
// on from (nil at the end). It writes a thousand values at a time and then
// repositions its cursor, since bbolt's cursors do not survive writes.
func rewrite(b *bbolt.Bucket, from []byte, n int, conv func(v []byte) ([]byte, error)) ([]byte, error) {
	type kv struct{ k, v []byte }
	out := make([]kv, 0, 1000)
	// The pages are rewritten in key order, like an append: left full,
	// they are fewer than the ones freed (bbolt's default fill, half a
	// page, would double them and grow the file).
	b.FillPercent = 1.0
	c := b.Cursor()
	var k, v []byte
	if from == nil {
		k, v = c.First()
	} else {
		k, v = c.Seek(from)
	}
	for k != nil && n > 0 {
		out = out[:0]
		for ; k != nil && n > 0 && len(out) < cap(out); k, v = c.Next() {
			n--
			nv, err := conv(v)
			if err != nil {
				return nil, fmt.Errorf("key %x: %w", k, err)
			}
			if nv != nil {
				out = append(out, kv{bytes.Clone(k), nv})
			}
		}
		var next []byte
		if k != nil {
			next = bytes.Clone(k)
		}
		for _, e := range out {
			if err := b.Put(e.k, e.v); err != nil {
				return nil, err
			}
		}
		if next == nil {
			return nil, nil
		}
		k, v = c.Seek(next)
	}
	if k == nil {
		return nil, nil
	}
	return bytes.Clone(k), nil
}

func rootBuckets(tx *bbolt.Tx) [][]byte {
	var names [][]byte
	tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
		names = append(names, name)
		return nil
	})
	return names
}

// enter registers an operation, or returns ErrClosed after Close.
func (d *DB) enter(op string) error { return d.guard.Enter(op) }

func (d *DB) leave() { d.guard.Leave() }

// View runs fn in a read transaction on one snapshot of the store. Several
// Views run at once, also while an Update is in progress; they see only
// committed writes.
func (d *DB) View(ctx context.Context, fn func(tx driver.ReadTx) error) error {
	return d.guard.Run(ctx, "view", func() error { return d.view(ctx, fn) })
}

func (d *DB) view(ctx context.Context, fn func(tx driver.ReadTx) error) error {
	defer d.scrubAfterReaders()
	epoch := d.readers.begin()
	defer d.readers.end(epoch)
	btx, err := d.bdb.Begin(false)
	if err != nil {
		return fmt.Errorf("bolt: begin read transaction: %w", err)
	}
	t := &readTx{ctx: ctx, tx: btx}
	defer func() {
		t.done = true
		btx.Rollback()
	}()
	return fn(t)
}

// Update runs fn in a write transaction. Writers are serialised; they queue
// (honouring ctx) for the one in progress, so fn should be short. Update must
// not be called from inside fn or from inside a View's fn.
//
// When fn returns nil, the records commit to the bbolt file first and the
// keyword index follows before Update returns; a crash in between is
// repaired by the next Open. Update returns nil once the records committed:
// when the index update fails after that (a full disk), it logs a warning
// and the next Update or Open repairs the index from the records.
func (d *DB) Update(ctx context.Context, fn func(tx driver.Tx) error) error {
	return d.guard.Run(ctx, "update", func() error { return d.update(ctx, fn) })
}

func (d *DB) update(ctx context.Context, fn func(tx driver.Tx) error) error {
	select {
	case d.writeSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("bolt: update: waiting for another writer: %w", ctx.Err())
	}
	defer func() { <-d.writeSem }()

	if d.stale.Load() {
		if err := d.repairIndex(ctx); err != nil {
			return err
		}
	}
	btx, err := d.bdb.Begin(true)
	if err != nil {
		return fmt.Errorf("bolt: begin write transaction: %w", err)
	}
	fillPages(btx)
	t := &writeTx{readTx: readTx{ctx: ctx, tx: btx}, docs: map[int64]*indexDoc{}}
	committed := false
	defer func() {
		t.done = true
		if !committed {
			btx.Rollback() // also when fn panics
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bolt: update: %w", err)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if err := btx.Commit(); err != nil {
		return fmt.Errorf("bolt: commit: %w", err)
	}
	committed = true
	t.done = true
	if err := d.applyIndex(t); err != nil {
		// The write is stored: reporting an error would make a caller
		// retry it and store it twice. The index catches up at the next
		// write or open; until then keyword searches miss this write.
		slog.Warn("memos: the write is stored, but the keyword index could not be updated; keyword search misses it until the next write or open of the store repairs the index", "store", d.dir, "err", err)
	}
	switch {
	case t.deleted:
		d.scrubIndex.Store(true)
		d.scrubFile.Store(true)
		d.scrub(ctx, scrubWait)
	case d.scrubIndex.Load() || d.scrubFile.Load():
		d.scrub(ctx, 0) // retry, without making this writer wait for readers
	}
	return nil
}

// Close waits for the transactions and searches in progress, overwrites
// free pages that may still hold forgotten bytes, and releases the store.
// Later calls of any method, Close included, return driver.ErrClosed. Close
// must not be called from inside View or Update.
func (d *DB) Close() error {
	if err := d.guard.Close(); err != nil {
		return err
	}
	if d.scrubIndex.Load() || d.scrubFile.Load() {
		d.scrub(context.Background(), 0)
	}
	var errs []error
	if d.idx != nil {
		if err := d.idx.Close(); err != nil {
			errs = append(errs, fmt.Errorf("keyword index: %w", err))
		}
	}
	if err := d.bdb.Close(); err != nil {
		errs = append(errs, fmt.Errorf("store: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bolt: close %s: %w", d.dir, err)
	}
	return nil
}

var _ driver.Remover = (*DB)(nil)

// Remove closes the store and deletes its files (StoreFile and IndexDir),
// and its directory when nothing else is left in it.
func (d *DB) Remove() error {
	err := d.Close()
	if err != nil && !errors.Is(err, driver.ErrClosed) {
		return err
	}
	if err := os.Remove(filepath.Join(d.dir, StoreFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("bolt: remove store: %w", err)
	}
	if err := os.RemoveAll(filepath.Join(d.dir, IndexDir)); err != nil {
		return fmt.Errorf("bolt: remove store: %w", err)
	}
	os.Remove(d.dir) // fails, harmlessly, when the directory holds other files
	return nil
}

// Path returns the absolute path of the store's directory.
func (d *DB) Path() string { return d.dir }

// BackendStats reports the sizes of the store's files and the number of
// memories and index documents, for core.Engine.Stats.
func (d *DB) BackendStats(ctx context.Context) (map[string]any, error) {
	if err := d.enter("stats"); err != nil {
		return nil, err
	}
	defer d.leave()
	st := map[string]any{"dir": d.dir}
	if fi, err := os.Stat(filepath.Join(d.dir, StoreFile)); err == nil {
		st["store_bytes"] = fi.Size()
	}
	st["index_bytes"] = dirSize(filepath.Join(d.dir, IndexDir))
	d.vis.RLock()
	defer d.vis.RUnlock()
	st["memories"] = d.kstats.docs
	if d.idx == nil {
		st["keyword_index"] = "unavailable: keyword search scans the records until a write or open rebuilds the index"
		return st, nil
	}
	n, err := d.idx.DocCount()
	if err != nil {
		return nil, fmt.Errorf("bolt: stats: %w", err)
	}
	st["index_documents"] = n
	return st, nil
}

// dirSize adds up the sizes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
