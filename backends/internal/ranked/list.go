package ranked

import (
	"fmt"

	"github.com/memos-go/memos/core/driver"
)

// ListGroups returns the (namespace, status) pairs opts names, without
// duplicates, as two parallel slices, or an error when opts leaves
// namespaces or statuses open (nil), which driver.ListReader does not
// allow. A backend's list indexes keep each pair's memories in list order.
func ListGroups(opts driver.ListOptions) (namespaces []string, statuses []driver.Status, err error) {
	switch {
	case opts.Namespaces == nil:
		return nil, nil, driver.Invalidf("list: the options name no namespaces")
	case opts.Statuses == nil:
		return nil, nil, driver.Invalidf("list: the options name no statuses")
	case opts.Order != driver.ListRecent && opts.Order != driver.ListSignificant:
		return nil, nil, driver.Invalidf("list: unknown order %d", opts.Order)
	}
	type pair struct {
		ns string
		st driver.Status
	}
	seen := map[pair]bool{}
	for _, ns := range opts.Namespaces {
		for _, st := range opts.Statuses {
			if p := (pair{ns, st}); !seen[p] {
				seen[p] = true
				namespaces, statuses = append(namespaces, ns), append(statuses, st)
			}
		}
	}
	return namespaces, statuses, nil
}

// ListRange is a stretch of a list order after a key that an index in
// that order (after namespace and status) lists contiguously: every
// condition but the last fixes a column to the key's value and the last
// bounds the next one, so a backend seeks to the stretch's start and reads
// on. A single row comparison, (created_at, id) < (?, ?), would say the
// same, but SQLite bounds an index scan by it only up to the last column
// before the row id, which leaves a run of memories created at the same
// time to be read again by every page that starts inside it. The nil
// ListRange is the whole order: the first page.
type ListRange []Cond

// ListAfter returns the ranges that, read one after the other, list every
// memory after a key in o, each exactly once.
func ListAfter(o driver.ListOrder) []ListRange {
	if o == driver.ListSignificant {
		return []ListRange{
			{{Significance, Eq}, {Created, Eq}, {ID, Less}},
			{{Significance, Eq}, {Created, Less}},
			{{Significance, Less}},
		}
	}
	return []ListRange{{{Created, Eq}, {ID, Less}}, {{Created, Less}}}
}

// Where renders r's conditions as SQL, each after " AND ", as Range.Where
// does; Args lists their values in the same order.
func (r ListRange) Where(col func(Column) string, param func() string) string {
	return where(r, col, param)
}

// Args returns the values of r's conditions for k, whose created_at is
// created in the backend's encoding.
func (r ListRange) Args(k driver.ListKey, created any) []any {
	var args []any
	for _, c := range r {
		switch c.Column {
		case Significance:
			args = append(args, k.Significance)
		case Created:
			args = append(args, created)
		case ID:
			args = append(args, k.ID)
		}
	}
	return args
}

// ListPages calls fn with the memories of a list read in order o, page
// after page, until they run out or fn returns an error (which ListPages
// returns). page(i, r, k, limit) returns, in list order, at most limit
// memories of the range r relative to k (nil, with r, for the first page),
// where i numbers r among the ranges (0 for the first page, 1 on for
// ListAfter's), for a backend to keep each range's query. Each page starts
// after the last memory of the one before (keyset paging): it reads the
// ranges after that memory, in turn, until it is full, so a read that
// stops early has read at most one page more than it used, however deep
// it starts. Pages grow from First to Max, as Walk's do, so that the first
// one stays cheap.
func ListPages(o driver.ListOrder, after *driver.ListKey, page func(i int, r ListRange, k *driver.ListKey, limit int) ([]*driver.Memory, error), fn func(*driver.Memory) error) error {
	k, ranges, first := after, []ListRange{nil}, 0
	if after != nil {
		ranges, first = ListAfter(o), 1
	}
	for n := First; ; n = min(2*n, Max) {
		got := 0
		var last *driver.Memory
		for i, r := range ranges {
			ms, err := page(first+i, r, k, n-got)
			if err != nil {
				if k == nil {
					return fmt.Errorf("list: %w", err)
				}
				return fmt.Errorf("list after memory %d: %w", k.ID, err)
			}
			for _, m := range ms {
				if err := fn(m); err != nil {
					return err
				}
			}
			if len(ms) > 0 {
				last = ms[len(ms)-1]
			}
			if got += len(ms); got >= n {
				break
			}
		}
		if got < n {
			return nil
		}
		lk := driver.KeyOf(last)
		k, ranges, first = &lk, ListAfter(o), 1
	}
}
