package vecsync

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/fmap"
	"github.com/memos-go/memos/core/vector"
)

// A vector snapshot lets a large store open without re-reading every vector
// from the backend: the engine saves its vector index next to the store on
// Close and, on Open, loads it and replays only the change log written since.
// The header names the model, the index kind, the precision of the vectors
// and the change-log seq the snapshot reflects; a snapshot that does not match the store is ignored and
// the index is rebuilt from the store. Forget deletes the snapshot at once,
// so no derived copy of a forgotten memory's vector stays on disk.
//
// The seq alone does not tie a snapshot to one history of the store: an
// older memory.db restored from a backup and written to by an engine without
// a snapshot passes the snapshot's seq with other contents. So every save
// also writes a fresh random generation into the store (meta
// "vectors.snapshot") and the header; a snapshot whose generation is not the
// store's is ignored. On load the engine also compares a sample of vectors
// with the store and rebuilds when one differs.
//
// A backend that keeps blobs (driver.BlobStore: postgres) keeps the
// snapshot in the store itself when no file is configured, as the blob
// "vectors": every process on every host that opens the store starts from
// it, and a backup of the store holds the snapshot that goes with it, so no
// generation is needed. Several processes may write the store at once: a
// snapshot reflects the change log up to its seq, and the opening process
// replays every change after that seq (the change log lists each memory
// changed since with its latest state, forgotten ones too), so a write made
// after the snapshot was saved, on any host, is in the index. The save
// writes nothing when the change log, read in the blob's write transaction,
// has a forget after the snapshot's seq; a forget committed after that read
// is followed by the forgetting engine's delete of the blob, which waits for
// the write and removes it (driver.BlobStore). So no vector of a memory
// forgotten through an engine stays in the store, as with the file.

// snapshotMagic starts a snapshot of float32 vectors, as before precisions
// existed; snapshotMagicPrecision one whose header ends with the precision
// (Options.VectorPrecision) of the vectors in it; snapshotMagicAligned,
// which saveSnapshot writes, one whose header holds the precision of any
// vectors and then zero bytes up to a multiple of headerAlign, so that the
// index's own serialisation starts aligned in the file: the exact index
// then searches its vectors in the mapped file instead of copying them
// (vector.LoadExactBytes). An open that reads a snapshot of an older
// version rewrites it at Close.
const (
	snapshotMagic          = "MEMOSVS2"
	snapshotMagicPrecision = "MEMOSVS3"
	snapshotMagicAligned   = "MEMOSVS4"
	headerAlign            = 64
)

// metaSnapshotGen is the store's record of the generation of the last
// snapshot saved from it.
const metaSnapshotGen = "vectors.snapshot"

// metaStoreID names a store for its derived files.
const metaStoreID = "store.id"

// blobSnapshot is the name of the snapshot kept in the store.
const blobSnapshot = "vectors"

// snapshot is the state of the snapshot of one Index: a file, or a blob in
// the store.
type snapshot struct {
	path    string           // Config.Snapshot; "" means none, or in the store
	blobs   driver.BlobStore // the backend, when it keeps blobs
	inStore bool             // no path, and the backend keeps blobs
	header  header           // what a snapshot of this store and model says
	mu      sync.Mutex
	seq     uint64 // the seq of the snapshot on disk, when ok
	ok      bool   // the file holds what this index loaded or saved
	old     bool   // ... in an older format, which Save rewrites
	// bytes is the size of the snapshot in the store as last read or
	// written (a file's is read from the file).
	bytes atomic.Int64
}

// enabled reports whether the index keeps a snapshot.
func (s *snapshot) enabled() bool { return s.path != "" || s.inStore }

// where names the snapshot in messages.
func (s *snapshot) where() string {
	if s.path != "" {
		return s.path
	}
	return "in the store (blob " + blobSnapshot + ")"
}

// header precedes the index's own serialisation.
type header struct {
	Store string // the store's id (meta "store.id"): a snapshot never serves another store
	Model string
	Dim   int
	Index string
	Seq   uint64
	Gen   string // random per save, also recorded in the store (metaSnapshotGen)
	// Precision of the vectors; float32 in a snapshot of the first header
	// version.
	Precision vector.Precision
	// aligned: the header is of the latest version (snapshotMagicAligned).
	aligned bool
}

func writeString(w io.Writer, s string) error {
	if err := binary.Write(w, binary.LittleEndian, uint16(len(s))); err != nil {
		return err
	}
	_, err := io.WriteString(w, s)
	return err
}

func readString(r io.Reader) (string, error) {
	var n uint16
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return string(b), err
}

// saveSnapshot writes idx to path atomically (temporary file, then rename).
func saveSnapshot(path string, h header, idx driver.PersistentVectorIndex) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err = writeSnapshot(w, h, idx); err != nil {
		return err
	}
	if err = w.Flush(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeSnapshot writes the header h, padded so that the index starts at a
// multiple of headerAlign, and idx to w.
func writeSnapshot(w io.Writer, h header, idx driver.PersistentVectorIndex) error {
	var head bytes.Buffer
	head.WriteString(snapshotMagicAligned)
	err := errors.Join(writeString(&head, h.Store), writeString(&head, h.Model), binary.Write(&head, binary.LittleEndian, uint32(h.Dim)),
		writeString(&head, h.Index), binary.Write(&head, binary.LittleEndian, h.Seq), writeString(&head, h.Gen),
		writeString(&head, h.Precision.String()))
	if err != nil {
		return err
	}
	// The padding's length, then the padding: the index starts at a
	// multiple of headerAlign.
	pad := -(head.Len() + 1) & (headerAlign - 1)
	head.WriteByte(byte(pad))
	head.Write(make([]byte, pad))
	if _, err := w.Write(head.Bytes()); err != nil {
		return err
	}
	return idx.Save(w)
}

// loadSnapshotFile reads the snapshot at path (readSnapshot); a missing
// file is (nil, 0, false, nil). The file is mapped (fmap), and the index
// may keep reading the mapping; it calls release when it no longer does.
func loadSnapshotFile(path string, want header, load loader) (idx driver.VectorIndex, seq uint64, old bool, err error) {
	data, release, err := fmap.Map(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	return readSnapshot(data, release, path, want, load)
}

// readSnapshot reads the snapshot in data if it matches want (model, dim,
// index kind, precision). It returns the index, the seq it reflects and
// whether the snapshot is of an older format; nil for a snapshot of another
// kind of index or precision. where names it in errors. The index may keep
// reading data: release (nil: nothing to release) is handed to it, or
// called here when the snapshot is not used.
func readSnapshot(data []byte, release func(), where string, want header, load loader) (idx driver.VectorIndex, seq uint64, old bool, err error) {
	handed := false
	defer func() {
		if !handed && release != nil {
			release()
		}
	}()
	r := bytes.NewReader(data)
	h, err := readHeader(r)
	if err != nil {
		return nil, 0, false, fmt.Errorf("snapshot %s: %w", where, err)
	}
	if h.Index != want.Index || h.Precision != want.Precision {
		return nil, 0, false, nil // a snapshot of another kind of index or precision: of no use here
	}
	if h.Store != want.Store || h.Model != want.Model || h.Dim != want.Dim {
		return nil, 0, false, fmt.Errorf("snapshot %s is of store %s, %s/%d; the engine uses store %s, %s/%d",
			where, h.Store, h.Model, h.Dim, want.Store, want.Model, want.Dim)
	}
	if h.Gen != want.Gen {
		return nil, 0, false, fmt.Errorf("snapshot %s was saved from another state of the store (generation %s, the store records %q): was memory.db restored from a backup?",
			where, h.Gen, want.Gen)
	}
	handed = true
	idx, err = load(data[len(data)-r.Len():], release)
	if err != nil {
		return nil, 0, false, fmt.Errorf("snapshot %s: %w", where, err)
	}
	if p := precisionOf(idx); p != want.Precision {
		return nil, 0, false, fmt.Errorf("snapshot %s: the header says %s vectors, the index holds %s", where, want.Precision, p)
	}
	return idx, h.Seq, !h.aligned, nil
}

// readHeader reads the magic and the header.
func readHeader(r io.Reader) (header, error) {
	var h header
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r, magic); err != nil || !slices.Contains([]string{snapshotMagic, snapshotMagicPrecision, snapshotMagicAligned}, string(magic)) {
		return h, fmt.Errorf("not a memos vector snapshot")
	}
	h.aligned = string(magic) == snapshotMagicAligned
	var dim uint32
	steps := []func() error{
		func() (err error) { h.Store, err = readString(r); return },
		func() (err error) { h.Model, err = readString(r); return },
		func() error { return binary.Read(r, binary.LittleEndian, &dim) },
		func() (err error) { h.Index, err = readString(r); return },
		func() error { return binary.Read(r, binary.LittleEndian, &h.Seq) },
		func() (err error) { h.Gen, err = readString(r); return },
		func() error {
			if string(magic) == snapshotMagic {
				return nil
			}
			name, err := readString(r)
			if err != nil {
				return err
			}
			if h.Precision, err = vector.ParsePrecision(name); err == nil && h.Precision == vector.Float32 && !h.aligned {
				err = fmt.Errorf("precision %s in a header for reduced precisions", name)
			}
			return err
		},
		func() error {
			if !h.aligned {
				return nil
			}
			var pad [1]byte
			if _, err := io.ReadFull(r, pad[:]); err != nil {
				return err
			}
			_, err := io.CopyN(io.Discard, r, int64(pad[0]))
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return h, fmt.Errorf("header: %w", err)
		}
	}
	h.Dim = int(dim)
	return h, nil
}

// readStored calls fn with a reader of the snapshot and the bytes it holds
// (-1: unknown); found is false, and fn not called, when there is none. A
// snapshot in the store is read in a read transaction, which fn runs in.
func (x *Index) readStored(ctx context.Context, fn func(r io.Reader, size int64) error) (found bool, err error) {
	if x.snap.path != "" {
		f, err := os.Open(x.snap.path)
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		defer f.Close()
		size := int64(-1)
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		return true, fn(f, size)
	}
	if !x.snap.inStore {
		return false, nil
	}
	err = x.snap.blobs.ReadBlob(ctx, blobSnapshot, func(r io.Reader, size int64) error {
		found = true
		x.snap.bytes.Store(size)
		return fn(r, size)
	})
	if !found && errors.Is(err, driver.ErrNotFound) {
		err = nil
	}
	return found, err
}

// peekSnapshot reads the header of the snapshot; ErrNotExist when there is
// none.
func (x *Index) peekSnapshot(ctx context.Context) (header, error) {
	var h header
	found, err := x.readStored(ctx, func(r io.Reader, _ int64) error {
		var err error
		h, err = readHeader(bufio.NewReader(r))
		return err
	})
	if err == nil && !found {
		err = os.ErrNotExist
	}
	return h, err
}

// newID returns 16 random bytes in hex.
func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// storeID returns the store's id, creating one in a store that has none
// when create is set ("" otherwise).
func (x *Index) storeID(ctx context.Context, create bool) (string, error) {
	var id string
	err := x.b.View(ctx, func(tx driver.ReadTx) error {
		var err error
		id, err = tx.Meta(metaStoreID)
		return err
	})
	if !errors.Is(err, driver.ErrNotFound) {
		return id, err
	}
	if !create {
		return "", nil
	}
	fresh, err := newID()
	if err != nil {
		return "", err
	}
	err = x.b.Update(ctx, func(tx driver.Tx) error {
		// Another process may have set it meanwhile: keep the first one.
		if cur, err := tx.Meta(metaStoreID); err == nil {
			id = cur
			return nil
		}
		id = fresh
		return tx.SetMeta(metaStoreID, id)
	})
	return id, err
}

// open resolves the index kind ("auto" by store size) and opens it.
func (x *Index) open(ctx context.Context, cfg Config) error {
	name := cfg.Index
	switch name {
	case "":
		name = "exact"
	case "auto":
		// A store that already has an HNSW snapshot keeps using it.
		if x.snap.enabled() {
			if h, err := x.peekSnapshot(ctx); err == nil && h.Index == "hnsw" && h.Precision == x.prec {
				return x.openKind(ctx, "hnsw")
			}
		}
		// Past the threshold, the exact index answers until the graph,
		// built in the background, replaces it (maybeSwitch).
		if err := x.openKind(ctx, "exact"); err != nil {
			return err
		}
		x.auto.threshold = cfg.Threshold
		x.auto.minRecall = cfg.MinRecall
		x.maybeSwitch()
		return nil
	}
	return x.openKind(ctx, name)
}

// openKind creates the index of kind name, from the snapshot when one
// matches the store, and brings it up to date with the change log. A
// snapshot that disagrees with the store on a sample of its vectors is
// dropped and the index rebuilt from the store.
func (x *Index) openKind(ctx context.Context, name string) error {
	k, ok := kinds[name]
	if !ok {
		return fmt.Errorf("no vector index named %q", name)
	}
	x.snap.ok = false // whatever was loaded before is not this index
	if x.snap.enabled() && k.load != nil {
		if err := x.loadSnapshot(ctx, name, k); err != nil {
			return err
		}
	}
	if x.live == nil {
		idx, err := k.new(x.model.Dim, x.prec)
		if err != nil {
			return fmt.Errorf("vector index %s: %w", name, err)
		}
		x.live = newLive(idx, name)
	}
	if err := x.Sync(ctx); err != nil {
		return err
	}
	if !x.snap.ok {
		return nil
	}
	if err := x.checkSample(ctx); err != nil {
		slog.Warn("memos: ignoring the vector snapshot; rebuilding the index from the store", "err", err)
		x.snap.ok = false
		idx, err := k.new(x.model.Dim, x.prec)
		if err != nil {
			return fmt.Errorf("vector index %s: %w", name, err)
		}
		x.live = newLive(idx, name)
		x.seq.Store(0)
		return x.Sync(ctx)
	}
	return nil
}

// loadSnapshot sets the live index from the snapshot when it matches
// this store, model, kind and generation and is not ahead of the store. A
// snapshot that does not is logged and left alone (the caller builds the
// index from the store); only failing to read the store is an error.
func (x *Index) loadSnapshot(ctx context.Context, name string, k kind) error {
	// A snapshot in the store gives the store an id when it is first
	// saved: opening writes nothing.
	id, err := x.storeID(ctx, !x.snap.inStore)
	if err != nil {
		return err
	}
	x.snap.header = header{Store: id, Model: x.model.ID, Dim: x.model.Dim, Index: name, Precision: x.prec}
	want := x.snap.header
	if !x.snap.inStore {
		// A file may outlive the state of the store it was saved from.
		err = x.b.View(ctx, func(tx driver.ReadTx) error {
			gen, err := tx.Meta(metaSnapshotGen)
			if errors.Is(err, driver.ErrNotFound) {
				return nil // no snapshot was ever saved from this store
			}
			want.Gen = gen
			return err
		})
		if err != nil {
			return err
		}
	}
	var idx driver.VectorIndex
	var seq uint64
	var old bool
	if x.snap.inStore {
		_, err = x.readStored(ctx, func(r io.Reader, size int64) error {
			data, err := readAll(r, size)
			if err != nil {
				return err
			}
			var serr error
			idx, seq, old, serr = readSnapshot(data, nil, x.snap.where(), want, k.load)
			if serr != nil {
				return errSnapshot{serr}
			}
			return nil
		})
		var bad errSnapshot
		if errors.As(err, &bad) {
			err = bad.err
		} else if err != nil {
			return fmt.Errorf("read the vector snapshot: %w", err)
		}
	} else {
		idx, seq, old, err = loadSnapshotFile(x.snap.path, want, k.load)
	}
	var cur uint64
	if err == nil && idx != nil {
		err = x.b.View(ctx, func(tx driver.ReadTx) error {
			var err error
			cur, err = tx.Seq()
			return err
		})
		if err == nil && seq > cur {
			err = fmt.Errorf("snapshot %s is ahead of the store (seq %d > %d)", x.snap.where(), seq, cur)
		}
	}
	switch {
	case err != nil:
		slog.Warn("memos: ignoring the vector snapshot; rebuilding the index from the store", "err", err)
	case idx != nil:
		x.live = newLive(idx, name)
		x.seq.Store(seq)
		x.snap.seq, x.snap.ok, x.snap.old = seq, true, old
	}
	return nil
}

// errSnapshot marks an error of the snapshot itself (as opposed to one
// reading the store).
type errSnapshot struct{ err error }

func (e errSnapshot) Error() string { return e.err.Error() }

// checkSample compares the vectors of a few memories in the store (the
// first ones and some from a random id on) with the loaded index: a snapshot
// that passed the header checks but disagrees with the store is caught
// before a search trusts it. It reports the first memory whose vector is not
// in the index. An index that implements VectorHolder (both built-in ones)
// answers by lookup; another is asked by a filtered search per memory.
func (x *Index) checkSample(ctx context.Context) error {
	const per = 8
	active := driver.Filter{Statuses: []driver.Status{driver.StatusActive}}
	var sample []*driver.Memory
	err := x.b.View(ctx, func(tx driver.ReadTx) error {
		add := func(m *driver.Memory) error {
			if m.Embedding.Model == x.model.ID && m.Embedding.Dim() == x.model.Dim {
				sample = append(sample, m)
			}
			return nil
		}
		if err := tx.Scan(driver.ScanOptions{Filter: active, Limit: per}, add); err != nil {
			return err
		}
		if len(sample) == 0 {
			return nil
		}
		// Ids grow from the first; twice the index size is a fair bound on the
		// largest id for a store that forgot some.
		after := sample[len(sample)-1].ID + mrand.Int64N(2*int64(x.live.Len())+1)
		return tx.Scan(driver.ScanOptions{Filter: active, AfterID: after, Limit: per}, add)
	})
	if err != nil {
		return fmt.Errorf("check the vector snapshot: %w", err)
	}
	holder, _ := x.live.index().(driver.VectorHolder)
	const k, same = 8, driver.HoldsSimilarity
	for _, m := range sample {
		if holder != nil {
			// A lookup and a dot product, where a search walks the graph
			// (with the filter, wider than an unfiltered one).
			if !holder.Holds(driver.VectorEntry{ID: m.ID, Namespace: m.Namespace, Pool: m.Pool, Vector: m.Embedding.Vector}) {
				return fmt.Errorf("snapshot %s does not hold the store's vector of memory %d", x.snap.where(), m.ID)
			}
			continue
		}
		hits, err := x.live.Search(ctx, m.Embedding.Vector, k, driver.VectorFilter{Namespaces: []string{m.Namespace}, Pools: []driver.Pool{m.Pool}})
		if err != nil {
			return fmt.Errorf("check the vector snapshot: %w", err)
		}
		found := slices.ContainsFunc(hits, func(h driver.Hit) bool { return h.ID == m.ID && h.Score >= same })
		// k identical vectors that sort before m leave the check inconclusive.
		crowded := len(hits) == k && hits[k-1].Score >= same
		if !found && !crowded {
			return fmt.Errorf("snapshot %s does not hold the store's vector of memory %d", x.snap.where(), m.ID)
		}
	}
	return nil
}

// Save writes the snapshot, if the index keeps one, after catching up with
// the change log. Nothing is written when the snapshot already holds the
// index as it is. The snapshot is a cache: failing to write it loses
// nothing but the next open's time.
func (x *Index) Save() error {
	if !x.snap.enabled() || x.live == nil || !x.live.persistent() {
		return nil
	}
	// Catch up first, so that a memory another process forgot is not saved.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.Sync(ctx); err != nil {
		return err
	}
	x.snap.mu.Lock()
	defer x.snap.mu.Unlock()
	h := x.snap.header
	h.Seq = x.seq.Load()
	if x.snap.inStore {
		return x.saveInStore(ctx, h)
	}
	if x.snap.ok && !x.snap.old && x.snap.seq == h.Seq {
		if _, err := os.Stat(x.snap.path); err == nil {
			return nil // nothing changed since the snapshot was read or written
		}
	}
	gen, err := newID()
	if err != nil {
		return fmt.Errorf("save vector snapshot: %w", err)
	}
	after := h.Seq
	err = x.b.Update(ctx, func(tx driver.Tx) error {
		cur, err := tx.Seq()
		if err != nil {
			return err
		}
		if err := tx.SetMeta(metaSnapshotGen, gen); err != nil {
			return err
		}
		after = h.Seq
		if cur == h.Seq {
			// Only this write lies between the index and the store: the
			// snapshot reflects the seq after it, so that the next open
			// does not find a change and save again on its Close.
			after, err = tx.Seq()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("save vector snapshot: record its generation in the store: %w", err)
	}
	x.seq.CompareAndSwap(h.Seq, after)
	h.Seq, h.Gen = after, gen
	if err := saveSnapshot(x.snap.path, h, x.live); err != nil {
		return fmt.Errorf("save vector snapshot: %w", err)
	}
	x.snap.seq, x.snap.ok, x.snap.old = h.Seq, true, false
	return nil
}

// saveInStore writes the snapshot of the index at seq h.Seq into the store,
// unless the store holds one of this kind as recent already (another
// process saved it) or a memory was forgotten after h.Seq (the index may
// still hold its vector; the next save writes one). The caller holds
// x.snap.mu.
func (x *Index) saveInStore(ctx context.Context, h header) error {
	seq := h.Seq
	if x.snap.ok && !x.snap.old && x.snap.seq == h.Seq {
		return nil // nothing changed since the snapshot was read or written
	}
	if st, err := x.peekSnapshot(ctx); err == nil && st.Seq >= h.Seq && st.Store == h.Store &&
		st.Model == h.Model && st.Index == h.Index && st.Precision == h.Precision {
		return nil
	}
	if h.Store == "" {
		// The first snapshot of the store names it.
		err := x.b.Update(ctx, func(tx driver.Tx) error {
			h.Seq = seq
			cur, err := tx.Seq()
			if err != nil {
				return err
			}
			if h.Store, err = tx.Meta(metaStoreID); !errors.Is(err, driver.ErrNotFound) {
				return err
			}
			if h.Store, err = newID(); err != nil {
				return err
			}
			if err := tx.SetMeta(metaStoreID, h.Store); err != nil {
				return err
			}
			if cur == seq {
				// Only this write lies between the index and the store.
				h.Seq, err = tx.Seq()
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("save vector snapshot in the store: name the store: %w", err)
		}
		x.snap.header.Store = h.Store
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	started := false // the writer below runs
	check := func(tx driver.ReadTx) error {
		// The change log as committed now: a forget after the snapshot's
		// seq may leave its vector in the index.
		err := tx.Changes(h.Seq, func(c driver.Change) error {
			if c.Deleted {
				return errForgotten
			}
			return nil
		})
		if err == nil && !started {
			// Only now: the check may end the write without reading.
			started = true
			go func() {
				w := bufio.NewWriterSize(pw, 1<<20)
				err := writeSnapshot(w, h, x.live)
				if err == nil {
					err = w.Flush()
				}
				pw.CloseWithError(err)
				done <- err
			}()
		}
		return err
	}
	cr := &countReader{r: pr}
	err := x.snap.blobs.WriteBlob(ctx, blobSnapshot, check, cr)
	pr.CloseWithError(errors.New("the store stopped reading the snapshot"))
	if started {
		if werr := <-done; err == nil {
			err = werr
		}
	}
	switch {
	case errors.Is(err, errForgotten):
		slog.Debug("memos: vector snapshot not saved: a memory was forgotten since the index last synced")
		return nil
	case err != nil:
		return fmt.Errorf("save vector snapshot in the store: %w", err)
	}
	x.snap.bytes.Store(cr.n)
	x.snap.seq, x.snap.ok, x.snap.old = h.Seq, true, false
	x.seq.CompareAndSwap(seq, h.Seq)
	return nil
}

// errForgotten ends a save that may hold a vector forgotten since.
var errForgotten = errors.New("a memory was forgotten after the snapshot's seq")

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// dropSnapshot deletes the snapshot (after a forget), so that no derived copy
// of a forgotten memory's vector stays on disk; Save writes a fresh one. On
// a backend that keeps blobs the snapshot in the store goes too, also when
// this engine keeps a file: other processes may keep theirs there.
func (x *Index) dropSnapshot(ctx context.Context) error {
	if !x.snap.enabled() && x.snap.blobs == nil {
		return nil
	}
	x.snap.mu.Lock()
	defer x.snap.mu.Unlock()
	x.snap.ok = false
	if x.snap.blobs != nil {
		if err := x.snap.blobs.DeleteBlob(ctx, blobSnapshot); err != nil {
			return fmt.Errorf("remove vector snapshot from the store: %w", err)
		}
		x.snap.bytes.Store(0)
	}
	if x.snap.path == "" {
		return nil
	}
	if err := os.Remove(x.snap.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove vector snapshot: %w", err)
	}
	return nil
}

// size is the snapshot's size; 0 without one.
func (s *snapshot) size() int64 {
	if s.inStore {
		return s.bytes.Load()
	}
	if s.path == "" {
		return 0
	}
	if fi, err := os.Stat(s.path); err == nil {
		return fi.Size()
	}
	return 0
}

// readAll reads r, which holds size bytes (-1: unknown), into one buffer
// allocated at once when the size is known.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size < 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}
