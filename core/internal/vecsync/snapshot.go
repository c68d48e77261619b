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

// snapshot is the state of the snapshot file of one Index.
type snapshot struct {
	path   string // Config.Snapshot; "" means none
	header header // what a snapshot of this store and model says
	mu     sync.Mutex
	seq    uint64 // the seq of the snapshot on disk, when ok
	ok     bool   // the file holds what this index loaded or saved
	old    bool   // ... in an older format, which Save rewrites
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
	var head bytes.Buffer
	head.WriteString(snapshotMagicAligned)
	err = errors.Join(writeString(&head, h.Store), writeString(&head, h.Model), binary.Write(&head, binary.LittleEndian, uint32(h.Dim)),
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
	w := bufio.NewWriterSize(tmp, 1<<20)
	if _, err = w.Write(head.Bytes()); err != nil {
		return err
	}
	if err = idx.Save(w); err != nil {
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

// loadSnapshot reads the snapshot at path if it matches want (model, dim,
// index kind, precision). It returns the index, the seq it reflects and
// whether the file is of an older format; a missing file is (nil, 0,
// false, nil). The file is mapped (fmap), and load may keep reading the
// mapping; it calls release when it no longer does.
func loadSnapshot(path string, want header, load loader) (idx driver.VectorIndex, seq uint64, old bool, err error) {
	data, release, err := fmap.Map(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	handed := false
	defer func() {
		if !handed {
			release()
		}
	}()
	r := bytes.NewReader(data)
	h, err := readHeader(r)
	if err != nil {
		return nil, 0, false, fmt.Errorf("snapshot %s: %w", path, err)
	}
	if h.Index != want.Index || h.Precision != want.Precision {
		return nil, 0, false, nil // a snapshot of another kind of index or precision: of no use here
	}
	if h.Store != want.Store || h.Model != want.Model || h.Dim != want.Dim {
		return nil, 0, false, fmt.Errorf("snapshot %s is of store %s, %s/%d; the engine uses store %s, %s/%d",
			path, h.Store, h.Model, h.Dim, want.Store, want.Model, want.Dim)
	}
	if h.Gen != want.Gen {
		return nil, 0, false, fmt.Errorf("snapshot %s was saved from another state of the store (generation %s, the store records %q): was memory.db restored from a backup?",
			path, h.Gen, want.Gen)
	}
	handed = true
	idx, err = load(data[len(data)-r.Len():], release)
	if err != nil {
		return nil, 0, false, fmt.Errorf("snapshot %s: %w", path, err)
	}
	if p := precisionOf(idx); p != want.Precision {
		return nil, 0, false, fmt.Errorf("snapshot %s: the header says %s vectors, the index holds %s", path, want.Precision, p)
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

// peekSnapshot reads the header of the snapshot at path.
func peekSnapshot(path string) (header, error) {
	f, err := os.Open(path)
	if err != nil {
		return header{}, err
	}
	defer f.Close()
	return readHeader(bufio.NewReader(f))
}

// newID returns 16 random bytes in hex.
func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// storeID returns the store's id, creating one in a store that has none.
func (x *Index) storeID(ctx context.Context) (string, error) {
	var id string
	err := x.b.View(ctx, func(tx driver.ReadTx) error {
		var err error
		id, err = tx.Meta(metaStoreID)
		return err
	})
	if !errors.Is(err, driver.ErrNotFound) {
		return id, err
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
		if x.snap.path != "" {
			if h, err := peekSnapshot(x.snap.path); err == nil && h.Index == "hnsw" && h.Precision == x.prec {
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
	if x.snap.path != "" && k.load != nil {
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

// loadSnapshot sets the live index from the snapshot file when it matches
// this store, model, kind and generation and is not ahead of the store. A
// snapshot that does not is logged and left alone (the caller builds the
// index from the store); only failing to read the store is an error.
func (x *Index) loadSnapshot(ctx context.Context, name string, k kind) error {
	id, err := x.storeID(ctx)
	if err != nil {
		return err
	}
	x.snap.header = header{Store: id, Model: x.model.ID, Dim: x.model.Dim, Index: name, Precision: x.prec}
	want := x.snap.header
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
	idx, seq, old, err := loadSnapshot(x.snap.path, want, k.load)
	var cur uint64
	if err == nil && idx != nil {
		err = x.b.View(ctx, func(tx driver.ReadTx) error {
			var err error
			cur, err = tx.Seq()
			return err
		})
		if err == nil && seq > cur {
			err = fmt.Errorf("snapshot %s is ahead of the store (seq %d > %d)", x.snap.path, seq, cur)
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
				return fmt.Errorf("snapshot %s does not hold the store's vector of memory %d", x.snap.path, m.ID)
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
			return fmt.Errorf("snapshot %s does not hold the store's vector of memory %d", x.snap.path, m.ID)
		}
	}
	return nil
}

// Save writes the snapshot, if the index keeps one, after catching up with
// the change log. Nothing is written when the file already holds the
// index as it is. The snapshot is a cache: failing to write it loses
// nothing but the next open's time.
func (x *Index) Save() error {
	if x.snap.path == "" || x.live == nil || !x.live.persistent() {
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

// dropSnapshot deletes the snapshot (after a forget), so that no derived copy
// of a forgotten memory's vector stays on disk; Save writes a fresh one.
func (x *Index) dropSnapshot() error {
	if x.snap.path == "" {
		return nil
	}
	x.snap.mu.Lock()
	defer x.snap.mu.Unlock()
	x.snap.ok = false
	if err := os.Remove(x.snap.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove vector snapshot: %w", err)
	}
	return nil
}

// size is the snapshot file's size; 0 without one.
func (s *snapshot) size() int64 {
	if s.path == "" {
		return 0
	}
	if fi, err := os.Stat(s.path); err == nil {
		return fi.Size()
	}
	return 0
}
