package bolt

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/core/driver"
)

// This file holds the secondary indexes of the bbolt file: three buckets
// that order the current version of every memory the way the engine reads
// them besides by id, so that none of those reads scans the store.
//
//   - sess: namespace, session, id → valid_from, created_at, for memories
//     with a session (driver.SessionReader: session expansion).
//   - upd: namespace, updated_at, id → nothing (driver.UpdateReader: the
//     memories a search as of a past time rewinds).
//   - rank: namespace, status, type, then the rank order of
//     driver.CompareRank (significance and access count descending, last
//     access descending, id) → nothing (driver.RankReader: the bootstrap
//     pack).
//
// Strings are length-prefixed (uvarint) and numbers big-endian with the
// sign bit flipped, inverted for descending order, so that keys sort as
// the order they stand for; a time is its Unix seconds and nanoseconds.
//
// Every write of a current version (Insert, Put, Delete, Touch) updates
// them in its own transaction (updateSecondary), from the memory it writes
// and the one it replaces, so that a write decodes at most the record it
// replaces. They are derived data:
// Open builds them when they are missing or were built by an older memos
// (keySecondary), and when a memos that does not know them wrote to the
// store since (their recorded change sequence number is not the store's).
// Accesses that such a memos recorded (Touch does not advance the change
// sequence number) are not detected: until the next open after a write
// they may leave the bootstrap pack's order slightly stale.

var (
	bktSess = []byte("sess")
	bktUpd  = []byte("upd")
	bktRank = []byte("rank")
	// secondaryBuckets are the buckets this file keeps; they are not part of
	// storeFormat (a store without them is whole).
	secondaryBuckets = [][]byte{bktSess, bktUpd, bktRank}
	// keySecondary, in bktSys, holds secondaryVersion and the change
	// sequence number the buckets are up to date with (16 bytes).
	keySecondary = []byte("secondary")
)

// secondaryVersion is the layout of the secondary buckets; Open rebuilds
// them when the store's is different.
const secondaryVersion = 1

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendInt appends v so that keys sort by v, or by -v when desc.
func appendInt(b []byte, v int64, desc bool) []byte {
	u := uint64(v) ^ 1<<63
	if desc {
		u = ^u
	}
	return binary.BigEndian.AppendUint64(b, u)
}

// appendTime appends t so that keys sort by t (the zero time first), or in
// reverse when desc.
func appendTime(b []byte, t time.Time, desc bool) []byte {
	b = appendInt(b, t.Unix(), desc)
	n := uint32(t.Nanosecond())
	if desc {
		n = ^n
	}
	return binary.BigEndian.AppendUint32(b, n)
}

func decodeTime(p []byte) time.Time {
	sec := int64(binary.BigEndian.Uint64(p) ^ 1<<63)
	return time.Unix(sec, int64(binary.BigEndian.Uint32(p[8:]))).UTC()
}

// Key prefixes.
func sessPrefix(ns, session string) []byte { return appendStr(appendStr(nil, ns), session) }
func updPrefix(ns string) []byte           { return appendStr(nil, ns) }
func rankPrefix(g ranked.Group) []byte {
	return appendStr(appendStr(appendStr(nil, g.Namespace), string(g.Status)), string(g.Type))
}

// secondaryKV is one entry of a secondary bucket.
type secondaryKV struct {
	bucket []byte
	k, v   []byte
}

// secondaryEntries returns the entries of the secondary buckets for m.
func secondaryEntries(m *driver.Memory) []secondaryKV {
	id := idKey(m.ID)
	out := make([]secondaryKV, 0, 3)
	if m.Session != "" {
		v := appendTime(appendTime(nil, m.ValidFrom, false), m.CreatedAt, false)
		out = append(out, secondaryKV{bktSess, append(sessPrefix(m.Namespace, m.Session), id...), v})
	}
	out = append(out, secondaryKV{bktUpd, append(appendTime(updPrefix(m.Namespace), m.UpdatedAt, false), id...), nil})
	k := rankPrefix(ranked.Group{Namespace: m.Namespace, Status: m.Status, Type: m.Type})
	k = appendInt(k, int64(m.Significance), true)
	k = appendInt(k, m.AccessCount, true)
	k = appendTime(k, m.LastAccessedAt, true)
	out = append(out, secondaryKV{bktRank, append(k, id...), nil})
	return out
}

// secondaryOf decodes rec, the record of memory id (nil: none), for
// updateSecondary.
func secondaryOf(id int64, rec []byte) (*driver.Memory, error) {
	if rec == nil {
		return nil, nil
	}
	m, _, err := decodeRecord(id, rec)
	return m, err
}

// updateSecondary replaces the secondary entries of a memory as it was
// (nil: absent) by those of the memory as it is now (nil: deleted). A
// caller that reads was from the mem bucket decodes it before it changes
// the bucket (bbolt reuses a value's bytes once its bucket changes).
func updateSecondary(tx *bbolt.Tx, was, now *driver.Memory) error {
	var before, after []secondaryKV
	if was != nil {
		before = secondaryEntries(was)
	}
	if now != nil {
		after = secondaryEntries(now)
	}
	same := func(a secondaryKV, in []secondaryKV) bool {
		return slices.ContainsFunc(in, func(b secondaryKV) bool {
			return bytes.Equal(a.bucket, b.bucket) && bytes.Equal(a.k, b.k) && bytes.Equal(a.v, b.v)
		})
	}
	for _, e := range before {
		if !same(e, after) {
			if err := tx.Bucket(e.bucket).Delete(e.k); err != nil {
				return fmt.Errorf("bolt: secondary index %s of memory %d: %w", e.bucket, was.ID, err)
			}
		}
	}
	for _, e := range after {
		if !same(e, before) {
			if err := tx.Bucket(e.bucket).Put(e.k, e.v); err != nil {
				return fmt.Errorf("bolt: secondary index %s of memory %d: %w", e.bucket, now.ID, err)
			}
		}
	}
	return nil
}

// markSecondary records that the secondary buckets are up to date with
// change sequence number seq.
func markSecondary(sys *bbolt.Bucket, seq uint64) error {
	return sys.Put(keySecondary, binary.BigEndian.AppendUint64(u64(secondaryVersion), seq))
}

// ensureSecondary builds the secondary buckets at open when they are
// missing, of another layout, or behind the store (see the top of this
// file). It reads every memory once, then writes each bucket in key order.
func (d *DB) ensureSecondary() error {
	err := d.bdb.Update(func(tx *bbolt.Tx) error {
		sys := tx.Bucket(bktSys)
		seq := getU64(sys, keySeq)
		mark := sys.Get(keySecondary)
		if len(mark) == 16 && binary.BigEndian.Uint64(mark) == secondaryVersion && binary.BigEndian.Uint64(mark[8:]) == seq {
			fresh := true
			for _, name := range secondaryBuckets {
				fresh = fresh && tx.Bucket(name) != nil
			}
			if fresh {
				return nil
			}
		}
		entries := map[string][]secondaryKV{}
		c := tx.Bucket(bktMem).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				return errCorrupt
			}
			m, _, err := decodeRecord(int64(binary.BigEndian.Uint64(k)), v)
			if err != nil {
				return err
			}
			for _, e := range secondaryEntries(m) {
				entries[string(e.bucket)] = append(entries[string(e.bucket)], e)
			}
		}
		for _, name := range secondaryBuckets {
			if tx.Bucket(name) != nil {
				if err := tx.DeleteBucket(name); err != nil {
					return err
				}
			}
			b, err := tx.CreateBucket(name)
			if err != nil {
				return err
			}
			b.FillPercent = appendFill // filled in key order
			es := entries[string(name)]
			slices.SortFunc(es, func(a, b secondaryKV) int { return bytes.Compare(a.k, b.k) })
			for _, e := range es {
				if err := b.Put(e.k, e.v); err != nil {
					return err
				}
			}
		}
		return markSecondary(sys, seq)
	})
	if err != nil {
		return fmt.Errorf("bolt: build the secondary indexes of %s: %w", d.dir, err)
	}
	return nil
}

// Session returns the current version of every memory of session in
// namespace (see driver.SessionReader), from the sess bucket.
func (t *readTx) Session(namespace, session string) ([]driver.SessionMember, error) {
	if err := t.check("session"); err != nil {
		return nil, err
	}
	prefix := sessPrefix(namespace, session)
	var out []driver.SessionMember
	c := t.tx.Bucket(bktSess).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+8 || len(v) != 24 {
			return nil, fmt.Errorf("bolt: session %q: %w", session, errCorrupt)
		}
		out = append(out, driver.SessionMember{ID: int64(binary.BigEndian.Uint64(k[len(prefix):])),
			ValidFrom: decodeTime(v), CreatedAt: decodeTime(v[12:])})
	}
	return out, nil
}

// UpdatedAfter calls fn with the current version of every memory of
// namespaces whose UpdatedAt is after at (see driver.UpdateReader), from
// the upd bucket.
func (t *readTx) UpdatedAfter(namespaces []string, at time.Time, fn func(*driver.Memory) error) error {
	if err := t.check("updated after"); err != nil {
		return err
	}
	var ids []int64
	c := t.tx.Bucket(bktUpd).Cursor()
	for i, ns := range namespaces {
		if slices.Contains(namespaces[:i], ns) {
			continue
		}
		prefix := updPrefix(ns)
		// After every key of time at: no id is 2^64-1.
		from := binary.BigEndian.AppendUint64(appendTime(bytes.Clone(prefix), at, false), ^uint64(0))
		for k, _ := c.Seek(from); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if len(k) != len(prefix)+20 {
				return fmt.Errorf("bolt: updated after: %w", errCorrupt)
			}
			ids = append(ids, int64(binary.BigEndian.Uint64(k[len(prefix)+12:])))
		}
	}
	return t.each(ids, fn)
}

// each calls fn with the current version of every one of ids.
func (t *readTx) each(ids []int64, fn func(*driver.Memory) error) error {
	mem := t.tx.Bucket(bktMem)
	for i, id := range ids {
		if i%256 == 255 {
			if err := t.ctx.Err(); err != nil {
				return fmt.Errorf("bolt: %w", err)
			}
		}
		rec := mem.Get(idKey(id))
		if rec == nil {
			return fmt.Errorf("bolt: a secondary index names memory %d, which is not stored: %w", id, errCorrupt)
		}
		m, _, err := decodeRecord(id, rec)
		if err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// Ranked calls fn with the current version of every memory that matches f,
// in rank order (see driver.RankReader): it merges the rank bucket's
// ranges of the groups f names.
func (t *readTx) Ranked(f driver.Filter, fn func(*driver.Memory) error) error {
	if err := t.check("ranked"); err != nil {
		return err
	}
	groups, err := ranked.Groups(f)
	if err != nil {
		return fmt.Errorf("bolt: %w", err)
	}
	if f.Pools != nil && len(f.Pools) == 0 {
		return nil
	}
	b := t.tx.Bucket(bktRank)
	var h rankHeap
	for _, g := range groups {
		p := rankPrefix(g)
		c := b.Cursor()
		if k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p) {
			h = append(h, &rankCursor{c: c, prefix: p, key: k})
		}
	}
	heap.Init(&h)
	mem := t.tx.Bucket(bktMem)
	for n := 0; len(h) > 0; n++ {
		if n%256 == 255 {
			if err := t.ctx.Err(); err != nil {
				return fmt.Errorf("bolt: ranked: %w", err)
			}
		}
		rc := h[0]
		k := rc.key
		if len(k) != len(rc.prefix)+36 {
			return fmt.Errorf("bolt: ranked: %w", errCorrupt)
		}
		id := int64(binary.BigEndian.Uint64(k[len(k)-8:]))
		if next, _ := rc.c.Next(); next != nil && bytes.HasPrefix(next, rc.prefix) {
			rc.key = next
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
		rec := mem.Get(idKey(id))
		if rec == nil {
			return fmt.Errorf("bolt: the rank index names memory %d, which is not stored: %w", id, errCorrupt)
		}
		m, _, err := decodeRecord(id, rec)
		if err != nil {
			return err
		}
		if f.Pools != nil && !slices.Contains(f.Pools, m.Pool) {
			continue
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// rankCursor is a group's position in the rank bucket.
type rankCursor struct {
	c      *bbolt.Cursor
	prefix []byte
	key    []byte
}

// rankHeap orders groups' cursors by the rank part of their current key.
type rankHeap []*rankCursor

func (h rankHeap) Len() int { return len(h) }
func (h rankHeap) Less(i, j int) bool {
	return bytes.Compare(h[i].key[len(h[i].prefix):], h[j].key[len(h[j].prefix):]) < 0
}
func (h rankHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *rankHeap) Push(x any)   { *h = append(*h, x.(*rankCursor)) }
func (h *rankHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

var (
	_ driver.SessionReader = (*readTx)(nil)
	_ driver.UpdateReader  = (*readTx)(nil)
	_ driver.RankReader    = (*readTx)(nil)
)
