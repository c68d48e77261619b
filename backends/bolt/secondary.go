package bolt

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/core/driver"
)

// This file holds the secondary indexes of the bbolt file: five buckets
// (and two dictionaries of names) that order the current version of every memory the way the engine reads
// them besides by id, so that none of those reads scans the store; and
// how they are kept and built, also for the counts and audit indexes of
// counts.go.
//
//   - sess: session number, id → valid_from, created_at, for memories
//     with a session (driver.SessionReader: session expansion).
//   - nsn: namespace → namespace number, which upd and rank keys start
//     with instead of the namespace (numbered like sesn).
//   - sess values: valid_from, and created_at unless it is the same
//     (appendSessTimes).
//   - sesn: namespace, session → session number, numbered in the order
//     sessions first appear (NextSequence), so that a session's entries are
//     together in sess and a new session's go to its end: sess grows by
//     appends, not by inserts at random places (which leave its pages half
//     empty). A name leaves sesn or nsn with the last entry filed under
//     its number (dropUnused): names are user data, which a forget must
//     not leave behind.
//   - upd: namespace number, updated_at's Unix second, id → nothing
//     (driver.UpdateReader: the memories a search as of a past time
//     rewinds; those of at's own second are read and checked).
//   - rank: namespace number, status, type, then the rank order of
//     driver.CompareRank (significance and access count descending, last
//     access descending, id) → nothing (driver.RankReader: the bootstrap
//     pack).
//   - lrec, lsig: namespace number, status, then the list order
//     driver.ListRecent (created_at descending, id descending) or
//     driver.ListSignificant (significance descending, then the same) →
//     nothing (driver.ListReader: `memos list`).
//
// Every field of a key is self-delimiting and sorts bytewise as the value
// it stands for (see appendUint, appendIntKey, appendTimeKey), inverted
// for descending order, so that keys sort as the order they stand for:
// strings are length-prefixed (uvarint), a status or type is its 1-based
// place in driver.Statuses or driver.Types (0 and the name when it is not
// in them), small numbers take the bytes they need, and a time is tagged
// by its range: the zero time is 1 byte, one within int64 Unix nanoseconds
// 9.
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
	bktSesn = []byte("sesn")
	bktNsn  = []byte("nsn")
	bktUpd  = []byte("upd")
	bktRank = []byte("rank")
	bktLrec = []byte("lrec")
	bktLsig = []byte("lsig")
	// secondaryBuckets are the buckets this file keeps; they are not part of
	// storeFormat (a store without them is whole).
	secondaryBuckets = [][]byte{bktSess, bktSesn, bktNsn, bktUpd, bktRank, bktLrec, bktLsig, bktFacet, bktEdgeNS, bktAuditMem, bktAuditBind}
	// listBuckets holds the bucket of each list order.
	listBuckets = [...][]byte{driver.ListRecent: bktLrec, driver.ListSignificant: bktLsig}
	// keySecondary, in bktSys, holds secondaryVersion and the change
	// sequence number the buckets are up to date with (16 bytes).
	keySecondary = []byte("secondary")
)

// secondaryVersion is the layout of the secondary buckets; Open rebuilds
// them when the store's is different. 1: fixed-width numbers and times,
// names spelt out. 2: the compact fields of appendUint, appendIntKey,
// appendTimeKey and appendCode; sess keyed by session number (sesn), upd
// and rank by namespace number (nsn). 3: lrec and lsig. 4: facet, edgens
// and auditmem (counts.go).
const secondaryVersion = 4

// randomFill is how full a page of the buckets written in random key order
// (sess, rank) is left when it splits: the room left takes later inserts
// into the page without a split (bbolt splits a page only once it
// overflows), and bbolt's default, half, leaves pages that are no longer
// written half empty.
const randomFill = 0.9

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// invert flips the bits of b[from:] (descending order).
func invert(b []byte, from int, desc bool) []byte {
	if desc {
		for i := from; i < len(b); i++ {
			b[i] = ^b[i]
		}
	}
	return b
}

// appendUint appends u as the number of bytes it needs (0–8) and those
// bytes, big-endian: shorter numbers are smaller, so keys sort by u, or by
// -u when desc.
func appendUint(b []byte, u uint64, desc bool) []byte {
	n := (bits.Len64(u) + 7) / 8
	from := len(b)
	b = append(b, byte(n))
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(u>>(8*i)))
	}
	return invert(b, from, desc)
}

// appendIntKey appends v so that keys sort by v, or by -v when desc: a
// negative v as 0 and its 8 bytes with the sign bit flipped, any other as
// appendUint with its length byte shifted by one.
func appendIntKey(b []byte, v int64, desc bool) []byte {
	from := len(b)
	if v < 0 {
		b = binary.BigEndian.AppendUint64(append(b, 0), uint64(v)^1<<63)
	} else {
		b = appendUint(b, uint64(v), false)
		b[from]++
	}
	return invert(b, from, desc)
}

// Tags of a time's range in appendTimeKey.
const (
	timeBeforeZero = iota // before the zero time: Unix seconds and nanoseconds, 12 bytes
	timeZero              // the zero time: nothing
	timeEarly             // after the zero time, before int64 Unix nanoseconds: 12 bytes
	timeNanos             // Unix nanoseconds, 8 bytes
	timeLate              // after int64 Unix nanoseconds: 12 bytes
)

// Bounds of the times with int64 Unix nanoseconds.
var (
	minNanos = time.Unix(0, math.MinInt64)
	maxNanos = time.Unix(0, math.MaxInt64)
)

// appendTimeKey appends t so that keys sort by t, or in reverse when desc.
func appendTimeKey(b []byte, t time.Time, desc bool) []byte {
	from := len(b)
	secs := func(tag byte) []byte {
		b = appendInt(append(b, tag), t.Unix())
		return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
	}
	switch {
	case t.IsZero():
		b = append(b, timeZero)
	case t.Before(time.Time{}):
		b = secs(timeBeforeZero)
	case t.Before(minNanos):
		b = secs(timeEarly)
	case t.After(maxNanos):
		b = secs(timeLate)
	default:
		b = appendInt(append(b, timeNanos), t.UnixNano())
	}
	return invert(b, from, desc)
}

// keyFieldLen returns the length of the field of kind ('u': appendUint,
// 'i': appendIntKey, 't': appendTimeKey) at the start of p, or -1 if p is
// too short for it.
func keyFieldLen(p []byte, kind byte, desc bool) int {
	if len(p) == 0 {
		return -1
	}
	tag := p[0]
	if desc {
		tag = ^tag
	}
	n := -1
	switch kind {
	case 'u':
		if tag <= 8 {
			n = 1 + int(tag)
		}
	case 'i':
		if tag == 0 {
			n = 9
		} else if tag <= 9 {
			n = int(tag)
		}
	case 't':
		switch tag {
		case timeZero:
			n = 1
		case timeNanos:
			n = 9
		case timeBeforeZero, timeEarly, timeLate:
			n = 13
		}
	}
	if n > len(p) {
		return -1
	}
	return n
}

// decodeUint decodes an ascending appendUint field that is all of p.
func decodeUint(p []byte) (uint64, bool) {
	if keyFieldLen(p, 'u', false) != len(p) {
		return 0, false
	}
	var u uint64
	for _, c := range p[1:] {
		u = u<<8 | uint64(c)
	}
	return u, true
}

// decodeTimeKey decodes an ascending appendTimeKey field that is all of p.
func decodeTimeKey(p []byte) (time.Time, bool) {
	if keyFieldLen(p, 't', false) != len(p) {
		return time.Time{}, false
	}
	switch p[0] {
	case timeZero:
		return time.Time{}, true
	case timeNanos:
		return time.Unix(0, int64(binary.BigEndian.Uint64(p[1:])^1<<63)).UTC(), true
	}
	sec := int64(binary.BigEndian.Uint64(p[1:]) ^ 1<<63)
	return time.Unix(sec, int64(binary.BigEndian.Uint32(p[9:]))).UTC(), true
}

// splitKey splits p into fields of kinds (see keyFieldLen; desc[i] for the
// i-th), reporting false unless they are all of p.
func splitKey(p []byte, kinds string, desc []bool) ([][]byte, bool) {
	out := make([][]byte, len(kinds))
	for i := range kinds {
		n := keyFieldLen(p, kinds[i], desc[i])
		if n < 0 {
			return nil, false
		}
		out[i], p = p[:n], p[n:]
	}
	return out, len(p) == 0
}

// appendCode appends s as its 1-based place in names, or 0 and s when it
// is not there.
func appendCode[T ~string](b []byte, s T, names []T) []byte {
	if i := slices.Index(names, s); i >= 0 && i < 255 {
		return append(b, byte(i+1))
	}
	return appendStr(append(b, 0), string(s))
}

// appendInt appends v, 8 bytes big-endian with the sign bit flipped, so
// that keys sort by v.
func appendInt(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(v)^1<<63)
}

// Keys of the dictionaries, sesn and nsn.
func sessName(ns, session string) []byte { return appendStr(appendStr(nil, ns), session) }
func nsName(ns string) []byte            { return appendStr(nil, ns) }

// rankGroup is the part of a rank key after the namespace's number that
// names the group.
func rankGroup(g ranked.Group) []byte {
	return appendCode(appendCode(nil, g.Status, driver.Statuses), g.Type, driver.Types)
}

// rankKinds and rankDesc are the fields of a rank key after its group:
// significance, access count, last access, id.
var (
	rankKinds = "iitu"
	rankDesc  = []bool{true, true, true, false}
)

// appendSessTimes appends the value of a sess entry: valid_from, then
// created_at unless it is the same instant. A value need not sort: a time
// is its nanoseconds (uvarint; 1 byte when none) and its Unix seconds
// (varint).
func appendSessTimes(b []byte, validFrom, createdAt time.Time) []byte {
	b = appendValueTime(b, validFrom)
	if !createdAt.Equal(validFrom) {
		b = appendValueTime(b, createdAt)
	}
	return b
}

func appendValueTime(b []byte, t time.Time) []byte {
	return binary.AppendVarint(binary.AppendUvarint(b, uint64(t.Nanosecond())), t.Unix())
}

// decodeSessTimes decodes a value of appendSessTimes.
func decodeSessTimes(v []byte) (validFrom, createdAt time.Time, ok bool) {
	next := func() (time.Time, bool) {
		ns, n := binary.Uvarint(v)
		if n <= 0 || ns >= 1e9 {
			return time.Time{}, false
		}
		sec, m := binary.Varint(v[n:])
		if m <= 0 {
			return time.Time{}, false
		}
		v = v[n+m:]
		return time.Unix(sec, int64(ns)).UTC(), true
	}
	if validFrom, ok = next(); !ok {
		return
	}
	if len(v) == 0 {
		return validFrom, validFrom, true
	}
	if createdAt, ok = next(); !ok || len(v) != 0 {
		return time.Time{}, time.Time{}, false
	}
	return validFrom, createdAt, true
}

// secondaryKV is one entry of a secondary bucket: its key is the number
// that dictionary dict (sesn or nsn) gives name, then rest (see key).
type secondaryKV struct {
	bucket, dict []byte
	name, rest   []byte
	v            []byte
}

// same reports whether a and b are the same entry.
func (a secondaryKV) same(b secondaryKV) bool {
	return bytes.Equal(a.bucket, b.bucket) && bytes.Equal(a.name, b.name) && bytes.Equal(a.rest, b.rest) && bytes.Equal(a.v, b.v)
}

// number returns the number dict gives name, as appendUint (the prefix of
// keys); nil if it has none and !create.
func number(dict *bbolt.Bucket, name []byte, create bool) ([]byte, error) {
	if v := dict.Get(name); v != nil {
		if keyFieldLen(v, 'u', false) != len(v) {
			return nil, errCorrupt
		}
		return v, nil
	}
	if !create {
		return nil, nil
	}
	n, err := dict.NextSequence()
	if err != nil {
		return nil, err
	}
	v := appendUint(nil, n, false)
	return v, dict.Put(name, v)
}

// key returns the key of e in its bucket: nil when its name has no number
// and !create.
func (e secondaryKV) key(tx *bbolt.Tx, create bool) ([]byte, error) {
	num, err := number(tx.Bucket(e.dict), e.name, create)
	if num == nil || err != nil {
		return nil, err
	}
	return append(bytes.Clone(num), e.rest...), nil
}

// secondaryEntries returns the entries of the secondary buckets for m.
func secondaryEntries(m *driver.Memory) []secondaryKV {
	id := uint64(m.ID)
	ns := nsName(m.Namespace)
	out := make([]secondaryKV, 0, 5)
	if m.Session != "" {
		v := appendSessTimes(nil, m.ValidFrom, m.CreatedAt)
		out = append(out, secondaryKV{bucket: bktSess, dict: bktSesn, name: sessName(m.Namespace, m.Session),
			rest: appendUint(nil, id, false), v: v})
	}
	out = append(out, secondaryKV{bucket: bktUpd, dict: bktNsn, name: ns,
		rest: appendUint(appendIntKey(nil, m.UpdatedAt.Unix(), false), id, false)})
	k := rankGroup(ranked.Group{Namespace: m.Namespace, Status: m.Status, Type: m.Type})
	k = appendIntKey(k, int64(m.Significance), true)
	k = appendIntKey(k, m.AccessCount, true)
	k = appendTimeKey(k, m.LastAccessedAt, true)
	out = append(out, secondaryKV{bucket: bktRank, dict: bktNsn, name: ns, rest: appendUint(k, id, false)})
	for o, b := range listBuckets {
		out = append(out, secondaryKV{bucket: b, dict: bktNsn, name: ns,
			rest: append(listGroup(m.Status), listKey(driver.ListOrder(o), driver.KeyOf(m))...)})
	}
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
	same := func(a secondaryKV, in []secondaryKV) bool { return slices.ContainsFunc(in, a.same) }
	for _, e := range before {
		if !same(e, after) {
			k, err := e.key(tx, false)
			if err == nil && k != nil {
				err = tx.Bucket(e.bucket).Delete(k)
			}
			if err != nil {
				return fmt.Errorf("bolt: secondary index %s of memory %d: %w", e.bucket, was.ID, err)
			}
		}
	}
	for _, e := range after {
		if !same(e, before) {
			k, err := e.key(tx, true)
			if err == nil {
				err = tx.Bucket(e.bucket).Put(k, e.v)
			}
			if err != nil {
				return fmt.Errorf("bolt: secondary index %s of memory %d: %w", e.bucket, now.ID, err)
			}
		}
	}
	// A name no entry is filed under any more leaves its dictionary: a
	// namespace or session name is the user's data, which a forget must
	// not leave behind.
	for _, e := range before {
		if slices.ContainsFunc(after, func(a secondaryKV) bool { return bytes.Equal(a.dict, e.dict) && bytes.Equal(a.name, e.name) }) {
			continue
		}
		if err := dropUnused(tx, e.dict, e.name); err != nil {
			return fmt.Errorf("bolt: secondary index %s of memory %d: %w", e.dict, was.ID, err)
		}
	}
	if err := updateCounts(tx, was, now); err != nil {
		id := int64(0)
		if now != nil {
			id = now.ID
		} else if was != nil {
			id = was.ID
		}
		return fmt.Errorf("bolt: counts of memory %d: %w", id, err)
	}
	return nil
}

// dropUnused deletes name from dict if no key of the buckets numbered by
// dict starts with its number.
func dropUnused(tx *bbolt.Tx, dict, name []byte) error {
	d := tx.Bucket(dict)
	num, err := number(d, name, false)
	if num == nil || err != nil {
		return err
	}
	users := [][]byte{bktUpd, bktRank, bktLrec, bktLsig}
	if bytes.Equal(dict, bktSesn) {
		users = [][]byte{bktSess}
	}
	for _, b := range users {
		if k, _ := tx.Bucket(b).Cursor().Seek(num); k != nil && bytes.HasPrefix(k, num) {
			return nil
		}
	}
	return d.Delete(name)
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
		for _, name := range secondaryBuckets {
			if tx.Bucket(name) != nil {
				if err := tx.DeleteBucket(name); err != nil {
					return err
				}
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		// Sessions and namespaces are numbered in the order of their
		// first memory.
		type kv struct{ k, v []byte }
		entries := map[string][]kv{}
		namespaces := map[int64]string{}
		facets := map[string][2]uint64{}
		c := tx.Bucket(bktMem).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				return errCorrupt
			}
			m, _, err := decodeRecord(int64(binary.BigEndian.Uint64(k)), v)
			if err != nil {
				return err
			}
			namespaces[m.ID] = m.Namespace
			fk := string(facetKey(m))
			facets[fk] = [2]uint64{facets[fk][0] + 1, facets[fk][1] + uint64(m.Version)}
			for _, e := range secondaryEntries(m) {
				k, err := e.key(tx, true)
				if err != nil {
					return err
				}
				entries[string(e.bucket)] = append(entries[string(e.bucket)], kv{k, e.v})
			}
		}
		for _, name := range [][]byte{bktSess, bktUpd, bktRank, bktLrec, bktLsig} {
			b := tx.Bucket(name)
			// Written in key order; later writes to sess (a session that
			// is not the newest) and rank land anywhere in them.
			b.FillPercent = appendFill
			if !bytes.Equal(name, bktUpd) {
				b.FillPercent = randomFill
			}
			es := entries[string(name)]
			slices.SortFunc(es, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
			for _, e := range es {
				if err := b.Put(e.k, e.v); err != nil {
					return err
				}
			}
		}
		if err := buildCounts(tx, namespaces, facets); err != nil {
			return err
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
	prefix, err := number(t.tx.Bucket(bktSesn), sessName(namespace, session), false)
	if err != nil || prefix == nil {
		if err != nil {
			err = fmt.Errorf("bolt: session %q: %w", session, err)
		}
		return nil, err
	}
	var out []driver.SessionMember
	c := t.tx.Bucket(bktSess).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		id, ok := decodeUint(k[len(prefix):])
		vf, ca, okv := decodeSessTimes(v)
		if !ok || !okv {
			return nil, fmt.Errorf("bolt: session %q: %w", session, errCorrupt)
		}
		out = append(out, driver.SessionMember{ID: int64(id), ValidFrom: vf, CreatedAt: ca})
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
		prefix, err := number(t.tx.Bucket(bktNsn), nsName(ns), false)
		if err != nil {
			return fmt.Errorf("bolt: updated after: %w", err)
		}
		if prefix == nil {
			continue // no memory was ever in ns
		}
		// From the second of at on; the memories of that second that
		// are not after it are left out below.
		from := appendIntKey(bytes.Clone(prefix), at.Unix(), false)
		for k, _ := c.Seek(from); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			fs, ok := splitKey(k[len(prefix):], "iu", []bool{false, false})
			var id uint64
			if ok {
				id, ok = decodeUint(fs[1])
			}
			if !ok {
				return fmt.Errorf("bolt: updated after: %w", errCorrupt)
			}
			ids = append(ids, int64(id))
		}
	}
	return t.each(ids, func(m *driver.Memory) error {
		if !m.UpdatedAt.After(at) {
			return nil
		}
		return fn(m)
	})
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
		num, err := number(t.tx.Bucket(bktNsn), nsName(g.Namespace), false)
		if err != nil {
			return fmt.Errorf("bolt: ranked: %w", err)
		}
		if num == nil {
			continue // no memory was ever in the namespace
		}
		p := append(bytes.Clone(num), rankGroup(g)...)
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
		fs, ok := splitKey(k[len(rc.prefix):], rankKinds, rankDesc)
		var u uint64
		if ok {
			u, ok = decodeUint(fs[3])
		}
		if !ok {
			return fmt.Errorf("bolt: ranked: %w", errCorrupt)
		}
		id := int64(u)
		h.advance()
		m, err := indexedRecord(mem, "rank", id)
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

// advance moves the cursor on top of h to its next key under its prefix,
// or drops it when it has none.
func (h *rankHeap) advance() {
	rc := (*h)[0]
	if next, _ := rc.c.Next(); next != nil && bytes.HasPrefix(next, rc.prefix) {
		rc.key = next
		heap.Fix(h, 0)
	} else {
		heap.Pop(h)
	}
}

// indexedRecord reads the memory the index named (list, rank) points at
// with id; a missing record is a corrupt index.
func indexedRecord(mem *bbolt.Bucket, index string, id int64) (*driver.Memory, error) {
	rec := mem.Get(idKey(id))
	if rec == nil {
		return nil, fmt.Errorf("bolt: the %s index names memory %d, which is not stored: %w", index, id, errCorrupt)
	}
	m, _, err := decodeRecord(id, rec)
	return m, err
}

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
