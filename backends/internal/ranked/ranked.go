// Package ranked holds what the backends share to implement
// driver.RankReader: the groups of memories a filter names, each of which
// a backend keeps in rank order (driver.CompareRank) in one index and
// merges with the others, and the paging of a rank-ordered SQL query.
package ranked

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// Group is one (namespace, status, type) of a filter: a backend's rank
// index lists each group's memories in rank order.
type Group struct {
	Namespace string
	Status    driver.Status
	Type      driver.Type
}

// Groups returns the groups f names, without duplicates, or an error when
// f leaves namespaces, statuses or types open (nil), which RankReader
// does not allow.
func Groups(f driver.Filter) ([]Group, error) {
	switch {
	case f.Namespaces == nil:
		return nil, driver.Invalidf("ranked read: the filter names no namespaces")
	case f.Statuses == nil:
		return nil, driver.Invalidf("ranked read: the filter names no statuses")
	case f.Types == nil:
		return nil, driver.Invalidf("ranked read: the filter names no types")
	}
	var gs []Group
	for _, ns := range f.Namespaces {
		for _, st := range f.Statuses {
			for _, ty := range f.Types {
				if g := (Group{ns, st, ty}); !slices.Contains(gs, g) {
					gs = append(gs, g)
				}
			}
		}
	}
	return gs, nil
}

// First and Max bound the pages Pages asks for: the first page holds
// First memories, each next one twice as many as the one before, up to Max.
const (
	First = 64
	Max   = 4096
)

// Pages calls fn with the memories page returns, page after page, until a
// page comes back short or fn returns an error (which Pages returns).
// page(offset, limit) returns the memories at offset..offset+limit-1 of the
// rank order. Growing pages keep a read that stops early cheap, and the
// rows read at most about twice what fn consumed (a SQL OFFSET re-reads
// the rows before it).
func Pages(page func(offset, limit int) ([]*driver.Memory, error), fn func(*driver.Memory) error) error {
	offset, n := 0, First
	for {
		ms, err := page(offset, n)
		if err != nil {
			return fmt.Errorf("ranked read at %d: %w", offset, err)
		}
		for _, m := range ms {
			if err := fn(m); err != nil {
				return err
			}
		}
		if len(ms) < n {
			return nil
		}
		offset += n
		n = min(2*n, Max)
	}
}

// UpdatedPages calls fn with every memory a keyset-paged query returns, in
// (updated_at, id) order: page(from, fromID) reads at most size memories
// whose key comes after (from, fromID), and key encodes a memory's
// updated_at as the query compares it. The first page starts after
// (from, MaxInt64), past every memory updated at from itself; the walk
// ends with a page shorter than size. The errors of page and key are
// returned through fail, fn's as they are.
func UpdatedPages(size int, from string, page func(from string, fromID int64) ([]*driver.Memory, error),
	key func(time.Time) (string, error), fail func(error) error, fn func(*driver.Memory) error) error {
	fromID := int64(math.MaxInt64)
	for {
		p, err := page(from, fromID)
		if err != nil {
			return fail(err)
		}
		for _, m := range p {
			if err := fn(m); err != nil {
				return err
			}
		}
		if len(p) < size {
			return nil
		}
		last := p[len(p)-1]
		if from, err = key(last.UpdatedAt); err != nil {
			return fail(fmt.Errorf("memory %d: updated_at %v: %w", last.ID, last.UpdatedAt, err))
		}
		fromID = last.ID
	}
}
