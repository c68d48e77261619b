package core

import (
	"context"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/listing"
)

// The list contract for backends (see driver.ListReader).
type (
	ListReader  = driver.ListReader
	ListOptions = driver.ListOptions
	ListOrder   = driver.ListOrder
	ListKey     = driver.ListKey
)

// List orders.
const (
	ListRecent      = driver.ListRecent
	ListSignificant = driver.ListSignificant
)

// List's paging lives in core/internal/listing; these are the names a user
// of the engine gives it.
type (
	// ListSort names an order of List.
	ListSort = listing.Sort
	// ListRequest selects memories to browse, in an order, a page at a
	// time.
	ListRequest = listing.Request
	// ListResult is a page of List.
	ListResult = listing.Result
)

const (
	// SortRecency is newest first: by created_at (when memos learned the
	// memory), then by id, both descending.
	SortRecency = listing.SortRecency
	// SortSignificance is most significant first, then newest first.
	SortSignificance = listing.SortSignificance
)

// ParseListSort validates a sort name; "" is recency.
func ParseListSort(s string) (ListSort, error) { return listing.ParseSort(s) }

// Bounds of ListRequest.Limit.
const (
	DefaultListLimit = listing.DefaultLimit
	MaxListLimit     = listing.MaxLimit
)

// ListScan bounds the memories a page of List reads: filters that no index
// serves (pools, types, trust, source, entity, updated and valid times)
// are checked on each memory of the namespaces and statuses asked for, in
// order, and a page that has read ListScan of them ends there, with fewer
// memories than its limit (maybe none) and a cursor to read on from. A
// page's work is so bounded however few memories match.
const ListScan = listing.MaxScan

// List returns a page of the memories of this handle's scope that match
// req, in req.Sort's order. Pages are keyset-paged: each continues after
// the last memory the one before read, so a page costs the same at any
// depth, and a memory that matches throughout a listing in recency order
// is listed exactly once whatever is written meanwhile (in significance
// order, one whose significance changes meanwhile may be listed twice or
// not at all).
// Quarantined memories are listed only when req.Statuses names them.
func (e *Engine) List(ctx context.Context, req ListRequest) (*ListResult, error) {
	const op = "list"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	page, err := listing.Prepare(req, e.scope(), e.ns)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	var res *ListResult
	err = e.b.View(ctx, func(tx ReadTx) error {
		res, err = page.Read(ctx, tx)
		return err
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	for _, m := range res.Memories {
		m.Embedding.Vector = nil
		if e.access != nil {
			e.access.overlay(m) // accesses not written yet
		}
	}
	return res, nil
}

// KeyOf returns m's place in a list order.
func KeyOf(m *Memory) ListKey { return driver.KeyOf(m) }
