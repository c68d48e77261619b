package bolt

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

// readTx implements driver.ReadTx and driver.AuditReader over a bbolt transaction.
type readTx struct {
	ctx  context.Context
	tx   *bbolt.Tx
	done bool
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func getU64(b *bbolt.Bucket, k []byte) uint64 {
	v := b.Get(k)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// sysU64 reads one counter of the sys bucket in a read transaction of its
// own.
func (d *DB) sysU64(k []byte) (uint64, error) {
	var v uint64
	err := d.bdb.View(func(tx *bbolt.Tx) error {
		v = getU64(tx.Bucket(bktSys), k)
		return nil
	})
	return v, err
}

func idKey(id int64) []byte { return u64(uint64(id)) }

func verKey(id int64, v int) []byte {
	return binary.BigEndian.AppendUint32(idKey(id), uint32(v))
}

// check returns an error when the transaction may no longer be used.
func (t *readTx) check(op string) error {
	if t.done {
		return fmt.Errorf("bolt: %s: the transaction has ended (a ReadTx or Tx must not be used after its View or Update returns): %w", op, driver.ErrClosed)
	}
	if err := t.ctx.Err(); err != nil {
		return fmt.Errorf("bolt: %s: %w", op, err)
	}
	return nil
}

func notFound(op string, id int64) error {
	return fmt.Errorf("bolt: %s %d: %w", op, id, driver.ErrNotFound)
}

// Get returns version v of memory id, or its current version when v is 0.
func (t *readTx) Get(id int64, v int) (*driver.Memory, error) {
	if err := t.check("get"); err != nil {
		return nil, err
	}
	cur := t.tx.Bucket(bktMem).Get(idKey(id))
	if cur == nil || v < 0 {
		return nil, notFound("get", id)
	}
	m, _, err := decodeRecord(id, cur)
	if err != nil || v == 0 || v == m.Version {
		return m, err
	}
	c := t.tx.Bucket(bktVer).Cursor()
	k, old := c.Seek(verKey(id, v))
	if k == nil || !bytes.Equal(k, verKey(id, v)) {
		return nil, fmt.Errorf("bolt: get %d version %d: %w", id, v, driver.ErrNotFound)
	}
	// Read later versions until they supply what this one left out.
	var ms []*driver.Memory
	var hs []recordHead
	prefix := idKey(id)
	for ; k != nil && bytes.HasPrefix(k, prefix); k, old = c.Next() {
		om, h, err := decodeRecord(id, old)
		if err != nil {
			return nil, err
		}
		if ms, hs = append(ms, om), append(hs, h); resolveVersions(ms, hs) {
			return ms[0], nil
		}
	}
	if err := t.resolve(id, append(ms, m), append(hs, recordHead{})); err != nil {
		return nil, err
	}
	return ms[0], nil
}

// resolve fills in what earlier versions' records left out from later
// ones (see versionFormat); ms ends with the current version.
func (t *readTx) resolve(id int64, ms []*driver.Memory, hs []recordHead) error {
	if !resolveVersions(ms, hs) {
		return fmt.Errorf("bolt: memory %d: %w: an earlier version refers to a later one that does not match; restore the store from a backup", id, errCorrupt)
	}
	return nil
}

// History returns every version of id, oldest first.
func (t *readTx) History(id int64) ([]*driver.Memory, error) {
	if err := t.check("history"); err != nil {
		return nil, err
	}
	cur := t.tx.Bucket(bktMem).Get(idKey(id))
	if cur == nil {
		return nil, notFound("history", id)
	}
	var hist []*driver.Memory
	var hs []recordHead
	prefix := idKey(id)
	c := t.tx.Bucket(bktVer).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		m, h, err := decodeRecord(id, v)
		if err != nil {
			return nil, err
		}
		hist, hs = append(hist, m), append(hs, h)
	}
	m, h, err := decodeRecord(id, cur)
	if err != nil {
		return nil, err
	}
	hist, hs = append(hist, m), append(hs, h)
	if err := t.resolve(id, hist, hs); err != nil {
		return nil, err
	}
	return hist, nil
}

// matchFilter reports whether a memory with these attributes passes f.
func matchFilter(f *driver.Filter, ns string, pool driver.Pool, st driver.Status, ty driver.Type) bool {
	return (f.Namespaces == nil || slices.Contains(f.Namespaces, ns)) &&
		(f.Pools == nil || slices.Contains(f.Pools, pool)) &&
		(f.Statuses == nil || slices.Contains(f.Statuses, st)) &&
		(f.Types == nil || slices.Contains(f.Types, ty))
}

// Scan calls fn with the current version of every memory that matches opts,
// in ascending id order.
func (t *readTx) Scan(opts driver.ScanOptions, fn func(*driver.Memory) error) error {
	if err := t.check("scan"); err != nil {
		return err
	}
	c := t.tx.Bucket(bktMem).Cursor()
	n := 0
	for k, v := c.Seek(idKey(max(opts.AfterID+1, 1))); k != nil; k, v = c.Next() {
		if n%256 == 255 {
			if err := t.ctx.Err(); err != nil {
				return fmt.Errorf("bolt: scan: %w", err)
			}
		}
		id := int64(binary.BigEndian.Uint64(k))
		h, d := decodeHead(v)
		if d.err != nil {
			return fmt.Errorf("bolt: scan: %w of memory %d; restore the store from a backup", d.err, id)
		}
		if !matchFilter(&opts.Filter, h.Namespace, h.Pool, h.Status, h.Type) {
			continue
		}
		m, _, err := decodeRecord(id, v)
		if err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
		n++
		if opts.Limit > 0 && n >= opts.Limit {
			break
		}
	}
	return nil
}

// edgeKey is from, to, type.
func edgeKey(from, to int64, typ driver.EdgeType) []byte {
	return append(binary.BigEndian.AppendUint64(idKey(from), uint64(to)), typ...)
}

func encodeEdge(e driver.Edge) []byte {
	enc := encoder{}
	enc.f64(e.Weight)
	enc.time(e.CreatedAt)
	enc.str(e.Source)
	return enc.b
}

func decodeEdge(k, v []byte) (driver.Edge, error) {
	if len(k) < 16 {
		return driver.Edge{}, errCorrupt
	}
	d := decoder{b: v}
	e := driver.Edge{
		From: int64(binary.BigEndian.Uint64(k)),
		To:   int64(binary.BigEndian.Uint64(k[8:])),
		Type: driver.EdgeType(k[16:]),
	}
	e.Weight = d.f64()
	e.CreatedAt = d.time()
	e.Source = d.str()
	if d.err != nil {
		return driver.Edge{}, fmt.Errorf("%w: edge %d→%d (%s); restore the store from a backup", d.err, e.From, e.To, e.Type)
	}
	return e, nil
}

// Edges returns the edges that start or end at id, ordered by (From, To, Type).
func (t *readTx) Edges(id int64) ([]driver.Edge, error) {
	if err := t.check("edges"); err != nil {
		return nil, err
	}
	edges := t.tx.Bucket(bktEdge)
	prefix := idKey(id)
	var out []driver.Edge
	c := edges.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		e, err := decodeEdge(k, v)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	rc := t.tx.Bucket(bktRedge).Cursor()
	for k, _ := rc.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = rc.Next() {
		if len(k) < 16 {
			return nil, errCorrupt
		}
		from := int64(binary.BigEndian.Uint64(k[8:]))
		if from == id {
			continue // a self-loop, already listed
		}
		fk := edgeKey(from, id, driver.EdgeType(k[16:]))
		e, err := decodeEdge(fk, edges.Get(fk))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b driver.Edge) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Type, b.Type))
	})
	return out, nil
}

// Seq returns the sequence number of the latest committed change.
func (t *readTx) Seq() (uint64, error) {
	if err := t.check("seq"); err != nil {
		return 0, err
	}
	return getU64(t.tx.Bucket(bktSys), keySeq), nil
}

// Changes calls fn for every memory changed after since, in ascending Seq
// order, with its latest state or Deleted.
func (t *readTx) Changes(since uint64, fn func(driver.Change) error) error {
	if err := t.check("changes"); err != nil {
		return err
	}
	mem, tomb := t.tx.Bucket(bktMem), t.tx.Bucket(bktTomb)
	c := t.tx.Bucket(bktChg).Cursor()
	n := 0
	for k, v := c.Seek(u64(since + 1)); k != nil; k, v = c.Next() {
		if n++; n%1024 == 0 {
			if err := t.ctx.Err(); err != nil {
				return fmt.Errorf("bolt: changes: %w", err)
			}
		}
		seq := binary.BigEndian.Uint64(k)
		id := int64(binary.BigEndian.Uint64(v))
		ch := driver.Change{Seq: seq, ID: id}
		if rec := mem.Get(v); rec != nil {
			h, d := decodeHead(rec)
			if d.err != nil {
				return fmt.Errorf("bolt: changes: %w of memory %d; restore the store from a backup", d.err, id)
			}
			ch.Namespace, ch.Pool, ch.Status, ch.Embedding = h.Namespace, h.Pool, h.Status, h.Embedding
		} else if tomb.Get(v) != nil {
			ch.Deleted = true
		} else {
			return fmt.Errorf("bolt: changes: change %d names memory %d, which is neither stored nor deleted; restore the store from a backup", seq, id)
		}
		if err := fn(ch); err != nil {
			return err
		}
	}
	return nil
}

// Meta returns a store-level setting, or ErrNotFound.
func (t *readTx) Meta(key string) (string, error) {
	if err := t.check("meta"); err != nil {
		return "", err
	}
	v := t.tx.Bucket(bktMeta).Get([]byte(key))
	if v == nil {
		return "", fmt.Errorf("bolt: meta %q: %w", key, driver.ErrNotFound)
	}
	return string(v), nil
}

// Audit calls fn for every audit entry in ascending Seq order.
func (t *readTx) Audit(fn func(driver.AuditEntry) error) error {
	if err := t.check("audit"); err != nil {
		return err
	}
	c := t.tx.Bucket(bktAudit).Cursor()
	k, v := c.First()
	return auditFrom(k, v, c.Next, fn)
}

// writeTx implements driver.Tx. Counters are read lazily and written back by
// flush before the commit; keyword index changes are collected in docs and
// applied after the commit.
type writeTx struct {
	readTx
	loaded        bool
	seq           uint64
	count, tokens uint64
	dirty         bool
	docs          map[int64]*indexDoc // nil value: delete from the index
	deleted       bool
}

// next advances the change sequence number and returns it.
func (t *writeTx) next() uint64 {
	t.load()
	t.seq++
	t.dirty = true
	return t.seq
}

func (t *writeTx) load() {
	if !t.loaded {
		sys := t.tx.Bucket(bktSys)
		t.seq, t.count, t.tokens = getU64(sys, keySeq), getU64(sys, keyCount), getU64(sys, keyTokens)
		t.loaded = true
	}
}

// Seq returns the transaction's own latest sequence number.
func (t *writeTx) Seq() (uint64, error) {
	if err := t.check("seq"); err != nil {
		return 0, err
	}
	t.load()
	return t.seq, nil
}

// flush writes the counters back.
func (t *writeTx) flush() error {
	if !t.dirty {
		return nil
	}
	sys := t.tx.Bucket(bktSys)
	for _, kv := range []struct {
		k []byte
		v uint64
	}{{keySeq, t.seq}, {keyCount, t.count}, {keyTokens, t.tokens}} {
		if err := sys.Put(kv.k, u64(kv.v)); err != nil {
			return fmt.Errorf("bolt: commit: %w", err)
		}
	}
	if err := markSecondary(sys, t.seq); err != nil {
		return fmt.Errorf("bolt: commit: %w", err)
	}
	if t.deleted {
		// Durable, so that the next Open finishes the scrub when this
		// process ends before it does (see scrub.go).
		if err := sys.Put(keyErase, u64(t.seq)); err != nil {
			return fmt.Errorf("bolt: commit: %w", err)
		}
	}
	return nil
}

// storeErr wraps an error from bbolt while writing.
func storeErr(op string, id int64, err error) error {
	return fmt.Errorf("bolt: %s %d: %w", op, id, err)
}

// putCurrent writes m as the current version of its memory under a new
// sequence number and queues it for the keyword index.
func (t *writeTx) putCurrent(op string, m *driver.Memory) (ntok int, err error) {
	toks := text.Tokenize(m.Content)
	seq := t.next()
	rec, err := encodeRecord(m, seq, len(toks))
	if err != nil {
		return 0, err
	}
	key := idKey(m.ID)
	old, err := secondaryOf(m.ID, t.tx.Bucket(bktMem).Get(key))
	if err != nil {
		return 0, err
	}
	if err := updateSecondary(t.tx, old, m); err != nil {
		return 0, err
	}
	if err := t.tx.Bucket(bktMem).Put(key, rec); err != nil {
		return 0, storeErr(op, m.ID, err)
	}
	if err := t.tx.Bucket(bktChg).Put(u64(seq), key); err != nil {
		return 0, storeErr(op, m.ID, err)
	}
	t.docs[m.ID] = newIndexDoc(m, toks)
	return len(toks), nil
}

// Insert stores m as version 1 of a new memory and assigns m.ID.
func (t *writeTx) Insert(m *driver.Memory) error { return t.insert(m, false) }

// InsertAt stores m as version 1 of memory m.ID (see driver.Importer).
func (t *writeTx) InsertAt(m *driver.Memory) error {
	if m.ID <= 0 {
		return fmt.Errorf("bolt: insert at: %w", driver.Invalidf("id %d is not positive", m.ID))
	}
	return t.insert(m, true)
}

// ReserveIDs makes sure Insert never assigns an id up to id (see driver.Importer).
func (t *writeTx) ReserveIDs(id int64) error {
	if err := t.check("reserve ids"); err != nil {
		return err
	}
	b := t.tx.Bucket(bktMem)
	if id > 0 && uint64(id) > b.Sequence() {
		if err := b.SetSequence(uint64(id)); err != nil {
			return fmt.Errorf("bolt: reserve ids: %w", err)
		}
	}
	return nil
}

func (t *writeTx) insert(m *driver.Memory, keepID bool) error {
	if err := t.check("insert"); err != nil {
		return err
	}
	if m.Version != 1 {
		return fmt.Errorf("bolt: insert: %w", driver.Invalidf("a new memory must have version 1, not %d", m.Version))
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("bolt: insert: %w", err)
	}
	if keepID {
		if t.tx.Bucket(bktMem).Get(idKey(m.ID)) != nil {
			return fmt.Errorf("bolt: insert at: memory %d exists: %w", m.ID, driver.ErrConflict)
		}
		if err := t.ReserveIDs(m.ID); err != nil {
			return err
		}
	} else {
		id, err := t.tx.Bucket(bktMem).NextSequence()
		if err != nil {
			return fmt.Errorf("bolt: insert: %w", err)
		}
		m.ID = int64(id)
	}
	ntok, err := t.putCurrent("insert", m)
	if err != nil {
		return err
	}
	t.count++
	t.tokens += uint64(ntok)
	return nil
}

// Put stores m as the next version of its memory.
func (t *writeTx) Put(m *driver.Memory) error {
	if err := t.check("put"); err != nil {
		return err
	}
	key := idKey(m.ID)
	cur := t.tx.Bucket(bktMem).Get(key)
	if cur == nil {
		return notFound("put", m.ID)
	}
	old, h, err := decodeRecord(m.ID, cur)
	if err != nil {
		return err
	}
	if m.Version != old.Version+1 {
		return fmt.Errorf("bolt: put %d: version %d, but the current version is %d; reload the memory and retry: %w", m.ID, m.Version, old.Version, driver.ErrConflict)
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("bolt: put %d: %w", m.ID, err)
	}
	// The superseded version moves to the version bucket without its
	// sequence number, and without what the new version has too.
	prev, err := encodeVersion(old, m, h.NTok)
	if err != nil {
		return err
	}
	if err := t.tx.Bucket(bktVer).Put(verKey(m.ID, old.Version), prev); err != nil {
		return storeErr("put", m.ID, err)
	}
	if err := t.tx.Bucket(bktChg).Delete(u64(h.Seq)); err != nil {
		return storeErr("put", m.ID, err)
	}
	ntok, err := t.putCurrent("put", m)
	if err != nil {
		return err
	}
	t.tokens += uint64(ntok) - uint64(h.NTok)
	return nil
}

// Delete removes every version, keyword entry, vector and edge of id.
func (t *writeTx) Delete(id int64) error {
	if err := t.check("delete"); err != nil {
		return err
	}
	key := idKey(id)
	mem := t.tx.Bucket(bktMem)
	cur := mem.Get(key)
	if cur == nil {
		return notFound("delete", id)
	}
	h, d := decodeHead(cur)
	if d.err != nil {
		return fmt.Errorf("bolt: delete: %w of memory %d; restore the store from a backup", d.err, id)
	}
	old, err := secondaryOf(id, cur)
	if err != nil {
		return err
	}
	if err := updateSecondary(t.tx, old, nil); err != nil {
		return err
	}
	if err := mem.Delete(key); err != nil {
		return storeErr("delete", id, err)
	}
	if err := deletePrefix(t.tx.Bucket(bktVer), key); err != nil {
		return storeErr("delete", id, err)
	}
	if err := t.unlinkAll(id, h.Namespace); err != nil {
		return storeErr("delete", id, err)
	}
	chg := t.tx.Bucket(bktChg)
	if err := chg.Delete(u64(h.Seq)); err != nil {
		return storeErr("delete", id, err)
	}
	seq := t.next()
	if err := chg.Put(u64(seq), key); err != nil {
		return storeErr("delete", id, err)
	}
	if err := t.tx.Bucket(bktTomb).Put(key, u64(seq)); err != nil {
		return storeErr("delete", id, err)
	}
	t.count--
	t.tokens -= uint64(h.NTok)
	t.docs[id] = nil
	t.deleted = true
	return nil
}

// deletePrefix deletes every key of b that starts with prefix.
func deletePrefix(b *bbolt.Bucket, prefix []byte) error {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// unlinkAll removes every edge that starts or ends at id, a memory of
// namespace ns that the mem bucket no longer holds.
func (t *writeTx) unlinkAll(id int64, ns string) error {
	edges, redges := t.tx.Bucket(bktEdge), t.tx.Bucket(bktRedge)
	prefix := idKey(id)
	var out, in [][]byte
	c := edges.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) < 16 {
			return errCorrupt
		}
		out = append(out, bytes.Clone(k))
	}
	rc := redges.Cursor()
	for k, _ := rc.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = rc.Next() {
		if len(k) < 16 {
			return errCorrupt
		}
		in = append(in, bytes.Clone(k))
	}
	mem, en := t.tx.Bucket(bktMem), t.tx.Bucket(bktEdgeNS)
	// uncount drops the count of an edge between id and other.
	uncount := func(other int64, out bool) error {
		ons := ns
		if other != id {
			var err error
			if ons, err = namespaceOf(mem, other); err != nil {
				return err
			}
		}
		k := edgeNSKey(ons, ns)
		if out {
			k = edgeNSKey(ns, ons)
		}
		return addCount(en, k, -1, 0, false)
	}
	for _, k := range out { // from=id, to, type: also drop the reverse entry
		if err := edges.Delete(k); err != nil {
			return err
		}
		if err := redges.Delete(swapKey(k)); err != nil {
			return err
		}
		if err := uncount(int64(binary.BigEndian.Uint64(k[8:])), true); err != nil {
			return err
		}
	}
	for _, k := range in { // to=id, from, type
		from := int64(binary.BigEndian.Uint64(k[8:]))
		if from == id {
			continue // a self-loop, removed above
		}
		if err := redges.Delete(k); err != nil {
			return err
		}
		if err := edges.Delete(swapKey(k)); err != nil {
			return err
		}
		if err := uncount(from, false); err != nil {
			return err
		}
	}
	return nil
}

// swapKey turns a, b, type into b, a, type.
func swapKey(k []byte) []byte {
	s := make([]byte, len(k))
	copy(s, k[8:16])
	copy(s[8:], k[:8])
	copy(s[16:], k[16:])
	return s
}

// Touch records an access to ids at t. It writes no version and does not
// advance Seq; unknown ids are ignored.
func (t *writeTx) Touch(ids []int64, at time.Time) error {
	if err := t.check("touch"); err != nil {
		return err
	}
	mem := t.tx.Bucket(bktMem)
	for _, id := range ids {
		key := idKey(id)
		v := mem.Get(key)
		if v == nil {
			continue
		}
		nv, err := touchRecord(v, at)
		if err != nil {
			return fmt.Errorf("bolt: touch: %w of memory %d; restore the store from a backup", err, id)
		}
		old, err := secondaryOf(id, v)
		if err != nil {
			return err
		}
		touched := *old
		touched.LastAccessedAt, touched.AccessCount = at, old.AccessCount+1
		if err := updateSecondary(t.tx, old, &touched); err != nil {
			return err
		}
		if err := mem.Put(key, nv); err != nil {
			return storeErr("touch", id, err)
		}
	}
	return nil
}

// Link adds or replaces the edge (From, To, Type).
func (t *writeTx) Link(e driver.Edge) error {
	if err := t.check("link"); err != nil {
		return err
	}
	if err := driver.ValidateEdgeType(e.Type); err != nil {
		return fmt.Errorf("bolt: link: %w", err)
	}
	mem := t.tx.Bucket(bktMem)
	for _, id := range []int64{e.From, e.To} {
		if mem.Get(idKey(id)) == nil {
			return fmt.Errorf("bolt: link %d→%d: memory %d: %w", e.From, e.To, id, driver.ErrNotFound)
		}
	}
	k := edgeKey(e.From, e.To, e.Type)
	if t.tx.Bucket(bktEdge).Get(k) == nil {
		if err := countEdge(t.tx, e.From, e.To, 1); err != nil {
			return storeErr("link", e.From, err)
		}
	}
	if err := t.tx.Bucket(bktEdge).Put(k, encodeEdge(e)); err != nil {
		return storeErr("link", e.From, err)
	}
	if err := t.tx.Bucket(bktRedge).Put(swapKey(k), nil); err != nil {
		return storeErr("link", e.From, err)
	}
	t.next()
	return nil
}

// Unlink removes the edge (from, to, typ).
func (t *writeTx) Unlink(from, to int64, typ driver.EdgeType) error {
	if err := t.check("unlink"); err != nil {
		return err
	}
	k := edgeKey(from, to, typ)
	edges := t.tx.Bucket(bktEdge)
	if edges.Get(k) == nil {
		return fmt.Errorf("bolt: unlink %d→%d (%s): %w", from, to, typ, driver.ErrNotFound)
	}
	if err := countEdge(t.tx, from, to, -1); err != nil {
		return storeErr("unlink", from, err)
	}
	if err := edges.Delete(k); err != nil {
		return storeErr("unlink", from, err)
	}
	if err := t.tx.Bucket(bktRedge).Delete(swapKey(k)); err != nil {
		return storeErr("unlink", from, err)
	}
	t.next()
	return nil
}

// SetMeta stores a store-level setting.
func (t *writeTx) SetMeta(key, value string) error {
	if err := t.check("set meta"); err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("bolt: set meta: %w", driver.Invalidf("meta key is empty"))
	}
	if err := t.tx.Bucket(bktMeta).Put([]byte(key), []byte(value)); err != nil {
		return fmt.Errorf("bolt: set meta %q: %w", key, err)
	}
	t.next()
	return nil
}

// AppendAudit appends e to the audit log, assigning e.Seq.
func (t *writeTx) AppendAudit(e *driver.AuditEntry) error {
	if err := t.check("audit"); err != nil {
		return err
	}
	b := t.tx.Bucket(bktAudit)
	seq, err := b.NextSequence()
	if err != nil {
		return fmt.Errorf("bolt: audit: %w", err)
	}
	entry := *e
	entry.Seq = seq
	entry.Time = entry.Time.UTC()
	v, err := json.Marshal(entry)
	if err != nil {
		return fmt.Errorf("bolt: audit: %w", err)
	}
	if err := b.Put(u64(seq), packAudit(v)); err != nil {
		return fmt.Errorf("bolt: audit: %w", err)
	}
	if err := indexAudit(t.tx, &entry); err != nil {
		return fmt.Errorf("bolt: audit: %w", err)
	}
	e.Seq = seq
	t.next()
	return nil
}
