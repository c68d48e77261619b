package driver

import (
	"cmp"
	"time"
)

// ListOrder is an order in which `memos list` browses memories.
type ListOrder int

const (
	// ListRecent is newest first: CreatedAt descending (when memos learned
	// the memory, which no later version changes), then ID descending.
	ListRecent ListOrder = iota
	// ListSignificant is most significant first: Significance descending,
	// then as ListRecent.
	ListSignificant
)

// ListKey is a memory's place in a list order: the fields of the memory
// the order compares. Significance is ignored by ListRecent.
type ListKey struct {
	Significance int
	CreatedAt    time.Time
	ID           int64
}

// KeyOf returns m's place in a list order.
func KeyOf(m *Memory) ListKey {
	return ListKey{Significance: m.Significance, CreatedAt: m.CreatedAt, ID: m.ID}
}

// Compare orders a and b in o: it returns a negative number when a comes
// first. Times compare as instants, whatever their location.
func (o ListOrder) Compare(a, b ListKey) int {
	if o == ListSignificant && a.Significance != b.Significance {
		return cmp.Compare(b.Significance, a.Significance)
	}
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// ListOptions selects the memories of ListReader.List.
type ListOptions struct {
	Order ListOrder
	// Namespaces and Statuses name every value wanted; neither may be nil
	// (an empty one matches nothing). Duplicates are allowed.
	Namespaces []string
	Statuses   []Status
	// After, when not nil, starts the read after this place in Order: a
	// page of a listing starts after the last memory of the page before
	// (keyset paging), whether or not that memory still exists.
	After *ListKey
}

// ListReader is an optional interface of ReadTx for backends that index
// memories by namespace and status in the list orders, so that `memos list`
// reads a page in time that does not grow with the store: it seeks past
// the last memory of the page before and reads on. Without it the engine
// scans the scope for every page. A backend that implements it must pass
// its conformance cases.
type ListReader interface {
	// List calls fn with the current version of every memory whose
	// namespace is in opts.Namespaces and status in opts.Statuses and that
	// comes after opts.After, in opts.Order, until fn returns an error
	// (which List returns). The work done before each call of fn must not
	// grow with the number of memories before opts.After or after the
	// memory passed: a caller stops a read early, at the end of a page.
	List(opts ListOptions, fn func(*Memory) error) error
}
