package bolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/driver"
)

// This file holds three more secondary buckets (see secondary.go: kept in
// the write transaction, built at open when missing or stale), so that the
// engine's Stats and a memory's audit entries read no memory and no other
// memory's entries:
//
//   - facet: namespace, pool, type, status, embedding model, dimension →
//     the number of memories with them and the sum of their version
//     numbers (uvarints) (driver.Counter.Count). A key leaves with its last
//     memory: a namespace is user data, which a forget must not leave
//     behind.
//   - edgens: the namespaces of an edge's ends (from, to) → the number of
//     edges between them (driver.Counter.CountEdges). A memory that moves
//     to another namespace moves its edges' counts.
//   - auditmem: memory id (0: none), audit sequence number → nothing
//     (driver.AuditMemoryReader).
//   - auditbind: memory id, audit sequence number → nothing, for every
//     memory a batch entry binds (driver.BoundIDs; driver.AuditBindingReader).
//
// Strings in keys are length-prefixed (appendStr), a type or status is
// appendCode's, so keys decode back and a namespace's keys share a prefix.

var (
	bktFacet     = []byte("facet")
	bktEdgeNS    = []byte("edgens")
	bktAuditMem  = []byte("auditmem")
	bktAuditBind = []byte("auditbind")
)

var (
	_ driver.Counter            = (*readTx)(nil)
	_ driver.AuditMemoryReader  = (*readTx)(nil)
	_ driver.AuditTailReader    = (*readTx)(nil)
	_ driver.AuditBindingReader = (*readTx)(nil)
)

// facetKey is m's key in the facet bucket.
func facetKey(m *driver.Memory) []byte {
	k := appendStr(appendStr(nil, m.Namespace), string(m.Pool))
	k = appendCode(appendCode(k, m.Type, driver.Types), m.Status, driver.Statuses)
	return binary.AppendUvarint(appendStr(k, m.Embedding.Model), uint64(m.Embedding.Dim()))
}

// keyReader decodes the fields of a key written with appendStr, appendCode
// and uvarints; ok turns false at the first malformed field.
type keyReader struct {
	p  []byte
	ok bool
}

func (r *keyReader) uvarint() uint64 {
	u, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.ok = false
		return 0
	}
	r.p = r.p[n:]
	return u
}

func (r *keyReader) str() string {
	n := r.uvarint()
	if !r.ok || n > uint64(len(r.p)) {
		r.ok = false
		return ""
	}
	s := string(r.p[:n])
	r.p = r.p[n:]
	return s
}

// code decodes a field of appendCode over names.
func code[T ~string](r *keyReader, names []T) T {
	if len(r.p) == 0 {
		r.ok = false
		return ""
	}
	c := r.p[0]
	r.p = r.p[1:]
	if c == 0 {
		return T(r.str())
	}
	if int(c) > len(names) {
		r.ok = false
		return ""
	}
	return names[c-1]
}

// addCount adds delta to the count at key k of b and, when sum is set, sum
// to the second number of its value; a count that reaches 0 deletes the
// key.
func addCount(b *bbolt.Bucket, k []byte, delta, sum int64, hasSum bool) error {
	var n, s int64
	if v := b.Get(k); v != nil {
		r := keyReader{p: v, ok: true}
		n = int64(r.uvarint())
		if hasSum {
			s = int64(r.uvarint())
		}
		if !r.ok || len(r.p) != 0 {
			return errCorrupt
		}
	}
	n, s = n+delta, s+sum
	switch {
	case n < 0 || s < 0:
		return fmt.Errorf("%w: a count went below zero", errCorrupt)
	case n == 0:
		return b.Delete(k)
	}
	v := binary.AppendUvarint(nil, uint64(n))
	if hasSum {
		v = binary.AppendUvarint(v, uint64(s))
	}
	return b.Put(k, v)
}

// edgeNSKey is the key of the edges from namespace from to namespace to.
func edgeNSKey(from, to string) []byte { return appendStr(appendStr(nil, from), to) }

// namespaceOf returns the namespace of the stored memory id.
func namespaceOf(mem *bbolt.Bucket, id int64) (string, error) {
	rec := mem.Get(idKey(id))
	if rec == nil {
		return "", fmt.Errorf("%w: an edge names memory %d, which is not stored", errCorrupt, id)
	}
	h, d := decodeHead(rec)
	if d.err != nil {
		return "", fmt.Errorf("%w of memory %d", d.err, id)
	}
	return h.Namespace, nil
}

// updateCounts moves a memory's counts from was (nil: absent) to now (nil:
// deleted; its edges' counts are dropped by unlinkAll). The mem bucket
// still holds was.
func updateCounts(tx *bbolt.Tx, was, now *driver.Memory) error {
	var wk, nk []byte
	if was != nil {
		wk = facetKey(was)
	}
	if now != nil {
		nk = facetKey(now)
	}
	if was == nil || now == nil || !bytes.Equal(wk, nk) || was.Version != now.Version {
		fb := tx.Bucket(bktFacet)
		if was != nil {
			if err := addCount(fb, wk, -1, -int64(was.Version), true); err != nil {
				return err
			}
		}
		if now != nil {
			if err := addCount(fb, nk, 1, int64(now.Version), true); err != nil {
				return err
			}
		}
	}
	if was == nil || now == nil || was.Namespace == now.Namespace {
		return nil
	}
	return moveEdgeCounts(tx, was.ID, was.Namespace, now.Namespace)
}

// moveEdgeCounts moves the counts of the edges of memory id from namespace
// from to namespace to.
func moveEdgeCounts(tx *bbolt.Tx, id int64, from, to string) error {
	mem, en := tx.Bucket(bktMem), tx.Bucket(bktEdgeNS)
	move := func(a, b, c, d string) error {
		if err := addCount(en, edgeNSKey(a, b), -1, 0, false); err != nil {
			return err
		}
		return addCount(en, edgeNSKey(c, d), 1, 0, false)
	}
	prefix := idKey(id)
	for _, out := range []bool{true, false} { // edges from id (edge), to id (redge)
		b := bktEdge
		if !out {
			b = bktRedge
		}
		c := tx.Bucket(b).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) < 16 {
				return errCorrupt
			}
			other := int64(binary.BigEndian.Uint64(k[8:]))
			if other == id {
				if !out {
					continue // a self-loop, moved with the edges from id
				}
				if err := move(from, from, to, to); err != nil {
					return err
				}
				continue
			}
			ns, err := namespaceOf(mem, other)
			if err == nil && out {
				err = move(from, ns, to, ns)
			} else if err == nil {
				err = move(ns, from, ns, to)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// countEdge adds delta to the count of the edges between the namespaces of
// memories from and to, which are stored.
func countEdge(tx *bbolt.Tx, from, to int64, delta int64) error {
	mem := tx.Bucket(bktMem)
	a, err := namespaceOf(mem, from)
	if err != nil {
		return err
	}
	b, err := namespaceOf(mem, to)
	if err != nil {
		return err
	}
	return addCount(tx.Bucket(bktEdgeNS), edgeNSKey(a, b), delta, 0, false)
}

// auditMemKey is the key of audit entry seq about memory id in auditmem.
func auditMemKey(id int64, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(idKey(id), seq)
}

// buildCounts fills the empty buckets of this file from the store: memory
// ns maps every stored memory's id to its namespace, facets holds each
// facet key's count and sum of versions.
func buildCounts(tx *bbolt.Tx, ns map[int64]string, facets map[string][2]uint64) error {
	fb := tx.Bucket(bktFacet)
	for _, k := range slices.Sorted(mapKeys(facets)) {
		c := facets[k]
		if err := fb.Put([]byte(k), binary.AppendUvarint(binary.AppendUvarint(nil, c[0]), c[1])); err != nil {
			return err
		}
	}
	edges := map[string]uint64{}
	c := tx.Bucket(bktEdge).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) < 16 {
			return errCorrupt
		}
		from, okf := ns[int64(binary.BigEndian.Uint64(k))]
		to, okt := ns[int64(binary.BigEndian.Uint64(k[8:]))]
		if !okf || !okt {
			return fmt.Errorf("%w: edge %x names a memory that is not stored", errCorrupt, k)
		}
		edges[string(edgeNSKey(from, to))]++
	}
	en := tx.Bucket(bktEdgeNS)
	for _, k := range slices.Sorted(mapKeys(edges)) {
		if err := en.Put([]byte(k), binary.AppendUvarint(nil, edges[k])); err != nil {
			return err
		}
	}
	var mems, binds [][]byte
	ac := tx.Bucket(bktAudit).Cursor()
	for k, v := ac.First(); k != nil; k, v = ac.Next() {
		e, err := decodeAudit(k, v)
		if err != nil {
			return err
		}
		mems = append(mems, auditMemKey(e.MemoryID, e.Seq))
		for _, id := range driver.BoundIDs(&e) {
			binds = append(binds, auditMemKey(id, e.Seq))
		}
	}
	for _, b := range []struct {
		name []byte
		keys [][]byte
	}{{bktAuditMem, mems}, {bktAuditBind, binds}} {
		bk := tx.Bucket(b.name)
		bk.FillPercent = appendFill // written in key order
		slices.SortFunc(b.keys, bytes.Compare)
		for _, k := range b.keys {
			if err := bk.Put(k, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexAudit adds entry e, just appended, to auditmem and auditbind.
func indexAudit(tx *bbolt.Tx, e *driver.AuditEntry) error {
	if err := tx.Bucket(bktAuditMem).Put(auditMemKey(e.MemoryID, e.Seq), nil); err != nil {
		return err
	}
	for _, id := range driver.BoundIDs(e) {
		if err := tx.Bucket(bktAuditBind).Put(auditMemKey(id, e.Seq), nil); err != nil {
			return err
		}
	}
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// decodeAudit decodes the audit entry stored at key k.
func decodeAudit(k, v []byte) (driver.AuditEntry, error) {
	var e driver.AuditEntry
	js, release, err := unpackAudit(v)
	if err == nil {
		err = json.Unmarshal(js, &e)
		release()
	}
	if err != nil {
		seq := uint64(0)
		if len(k) == 8 {
			seq = binary.BigEndian.Uint64(k)
		}
		return e, fmt.Errorf("bolt: audit entry %d is corrupt (%v); restore the store from a backup", seq, err)
	}
	return e, nil
}

// Count counts the memories per facet (driver.Counter) from the facet
// bucket: a few keys per namespace, no memory read.
func (t *readTx) Count(opts driver.CountOptions) ([]driver.FacetCount, error) {
	if err := t.check("count"); err != nil {
		return nil, err
	}
	type group struct {
		ns     string
		pool   driver.Pool
		typ    driver.Type
		status driver.Status
	}
	sums := map[group]*driver.FacetCount{}
	var order []group
	read := func(k, v []byte) error {
		r := keyReader{p: k, ok: true}
		g := group{ns: r.str(), pool: driver.Pool(r.str())}
		g.typ = code(&r, driver.Types)
		g.status = code(&r, driver.Statuses)
		model, dim := r.str(), r.uvarint()
		vr := keyReader{p: v, ok: true}
		n, vs := vr.uvarint(), vr.uvarint()
		if !r.ok || len(r.p) != 0 || !vr.ok || len(vr.p) != 0 {
			return fmt.Errorf("bolt: count: facet %x: %w", k, errCorrupt)
		}
		fc := sums[g]
		if fc == nil {
			fc = &driver.FacetCount{Namespace: g.ns, Pool: g.pool, Type: g.typ, Status: g.status}
			sums[g] = fc
			order = append(order, g)
		}
		fc.Memories += int(n)
		fc.Versions += int(vs)
		if g.status == driver.StatusActive && model == opts.Model && dim == uint64(opts.Dim) {
			fc.Embedded += int(n)
		}
		return nil
	}
	c := t.tx.Bucket(bktFacet).Cursor()
	if opts.Namespaces == nil {
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := read(k, v); err != nil {
				return nil, err
			}
		}
	}
	for i, ns := range opts.Namespaces {
		if slices.Contains(opts.Namespaces[:i], ns) {
			continue
		}
		p := nsName(ns)
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			if err := read(k, v); err != nil {
				return nil, err
			}
		}
	}
	out := make([]driver.FacetCount, len(order))
	for i, g := range order {
		out[i] = *sums[g]
	}
	return out, nil
}

// CountEdges counts the edges both of whose ends are memories of
// namespaces (driver.Counter) from the edgens bucket.
func (t *readTx) CountEdges(namespaces []string) (int, error) {
	if err := t.check("count edges"); err != nil {
		return 0, err
	}
	n := 0
	err := t.tx.Bucket(bktEdgeNS).ForEach(func(k, v []byte) error {
		r := keyReader{p: k, ok: true}
		from, to := r.str(), r.str()
		vr := keyReader{p: v, ok: true}
		c := vr.uvarint()
		if !r.ok || len(r.p) != 0 || !vr.ok || len(vr.p) != 0 {
			return fmt.Errorf("bolt: count edges: %x: %w", k, errCorrupt)
		}
		if namespaces == nil || (slices.Contains(namespaces, from) && slices.Contains(namespaces, to)) {
			n += int(c)
		}
		return nil
	})
	return n, err
}

// AuditOf calls fn for every audit entry about memory id (0: about none),
// in ascending Seq order (driver.AuditMemoryReader), through the auditmem
// bucket.
func (t *readTx) AuditOf(id int64, fn func(driver.AuditEntry) error) error {
	return t.auditIndexed("audit of", bktAuditMem, id, fn)
}

// AuditBound calls fn for every audit entry that binds memory id in a
// batch, in ascending Seq order (driver.AuditBindingReader), through the
// auditbind bucket.
func (t *readTx) AuditBound(id int64, fn func(driver.AuditEntry) error) error {
	return t.auditIndexed("audit bound", bktAuditBind, id, fn)
}

// auditIndexed calls fn for every audit entry that index (auditmem,
// auditbind) files under memory id.
func (t *readTx) auditIndexed(op string, index []byte, id int64, fn func(driver.AuditEntry) error) error {
	if err := t.check(op); err != nil {
		return err
	}
	audit := t.tx.Bucket(bktAudit)
	prefix := idKey(id)
	c := t.tx.Bucket(index).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) != 16 {
			return fmt.Errorf("bolt: %s %d: %w", op, id, errCorrupt)
		}
		v := audit.Get(k[8:])
		if v == nil {
			return fmt.Errorf("bolt: %s %d: the audit index names entry %d, which is not stored: %w", op, id, binary.BigEndian.Uint64(k[8:]), errCorrupt)
		}
		e, err := decodeAudit(k[8:], v)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// AuditBefore calls fn for every audit entry below before (0: every one),
// newest first (driver.AuditTailReader).
func (t *readTx) AuditBefore(before uint64, fn func(driver.AuditEntry) error) error {
	if err := t.check("audit before"); err != nil {
		return err
	}
	c := t.tx.Bucket(bktAudit).Cursor()
	var k, v []byte
	if before == 0 {
		k, v = c.Last()
	} else if k, _ = c.Seek(u64(before)); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	return auditFrom(k, v, c.Prev, fn)
}

// auditFrom calls fn with the audit entry at k, v and each one step
// leads to after it, until step returns no key.
func auditFrom(k, v []byte, step func() ([]byte, []byte), fn func(driver.AuditEntry) error) error {
	for ; k != nil; k, v = step() {
		e, err := decodeAudit(k, v)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
