package bolt

import (
	"bytes"
	"container/heap"
	"fmt"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/core/driver"
)

// listGroup is the part of a list key after the namespace's number that
// names the group: the status.
func listGroup(st driver.Status) []byte { return appendCode(nil, st, driver.Statuses) }

// listKey is the part of a list key after its group: k's place in o, every
// field descending (see the top of secondary.go).
func listKey(o driver.ListOrder, k driver.ListKey) []byte {
	var b []byte
	if o == driver.ListSignificant {
		b = appendIntKey(b, int64(k.Significance), true)
	}
	b = appendTimeKey(b, k.CreatedAt, true)
	return appendUint(b, uint64(max(k.ID, 0)), true)
}

// listKinds returns the fields of a list key of o after its group.
func listKinds(o driver.ListOrder) (string, []bool) {
	if o == driver.ListSignificant {
		return "itu", []bool{true, true, true}
	}
	return "tu", []bool{true, true}
}

// List calls fn with the current version of every memory of opts, in its
// list order (see driver.ListReader): it merges the ranges of the groups
// opts names in the order's bucket (lrec or lsig), each starting after
// opts.After.
func (t *readTx) List(opts driver.ListOptions, fn func(*driver.Memory) error) error {
	if err := t.check("list"); err != nil {
		return err
	}
	namespaces, statuses, err := ranked.ListGroups(opts)
	if err != nil {
		return fmt.Errorf("bolt: %w", err)
	}
	kinds, desc := listKinds(opts.Order)
	var after []byte
	if opts.After != nil {
		after = listKey(opts.Order, *opts.After)
	}
	b := t.tx.Bucket(listBuckets[opts.Order])
	var h rankHeap
	for i, ns := range namespaces {
		num, err := number(t.tx.Bucket(bktNsn), nsName(ns), false)
		if err != nil {
			return fmt.Errorf("bolt: list: %w", err)
		}
		if num == nil {
			continue // no memory was ever in the namespace
		}
		p := append(bytes.Clone(num), listGroup(statuses[i])...)
		c := b.Cursor()
		k, _ := c.Seek(append(bytes.Clone(p), after...))
		if after != nil && k != nil && bytes.Equal(k[len(p):], after) {
			k, _ = c.Next() // the memory the read starts after
		}
		if k != nil && bytes.HasPrefix(k, p) {
			h = append(h, &rankCursor{c: c, prefix: p, key: k})
		}
	}
	heap.Init(&h)
	mem := t.tx.Bucket(bktMem)
	for n := 0; len(h) > 0; n++ {
		if n%256 == 255 {
			if err := t.ctx.Err(); err != nil {
				return fmt.Errorf("bolt: list: %w", err)
			}
		}
		rc := h[0]
		fs, ok := splitKey(rc.key[len(rc.prefix):], kinds, desc)
		var u uint64
		if ok {
			u, ok = decodeUint(invert(bytes.Clone(fs[len(fs)-1]), 0, true))
		}
		if !ok {
			return fmt.Errorf("bolt: list: %w", errCorrupt)
		}
		id := int64(u)
		h.advance()
		m, err := indexedRecord(mem, "list", id)
		if err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

var _ driver.ListReader = (*readTx)(nil)
