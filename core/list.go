package core

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
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

// ListSort names an order of List.
type ListSort string

const (
	// SortRecency is newest first: by created_at (when memos learned the
	// memory), then by id, both descending.
	SortRecency ListSort = "recency"
	// SortSignificance is most significant first, then newest first.
	SortSignificance ListSort = "significance"
)

// ParseListSort validates a sort name; "" is recency.
func ParseListSort(s string) (ListSort, error) {
	switch ListSort(s) {
	case "", SortRecency:
		return SortRecency, nil
	case SortSignificance:
		return SortSignificance, nil
	}
	return "", invalidf("unknown sort %q (want recency or significance)", s)
}

func (s ListSort) order() ListOrder {
	if s == SortSignificance {
		return ListSignificant
	}
	return ListRecent
}

// Bounds of ListRequest.Limit.
const (
	DefaultListLimit = 20
	MaxListLimit     = 1000
)

// ListScan bounds the memories a page of List reads: filters that no index
// serves (pools, types, trust, source, entity, updated and valid times)
// are checked on each memory of the namespaces and statuses asked for, in
// order, and a page that has read ListScan of them ends there, with fewer
// memories than its limit (maybe none) and a cursor to read on from. A
// page's work is so bounded however few memories match.
const ListScan = 5000

// ListRequest selects memories to browse, in an order, a page at a time.
// Zero fields place no restriction, except Statuses.
type ListRequest struct {
	// NamespaceOnly lists the handle's namespace alone, not the shared
	// default one that reads include.
	NamespaceOnly bool
	Pools         []Pool
	Types         []Type
	// Statuses: nil lists active memories; quarantined and archived ones
	// are listed only when named.
	Statuses    []Status
	TrustLevels []TrustLevel
	// SourcePrefix keeps memories whose source starts with it.
	SourcePrefix string
	// Entity keeps memories that name this entity (case-insensitive).
	Entity string
	// CreatedAfter and CreatedBefore bound created_at; UpdatedAfter and
	// UpdatedBefore bound updated_at (exclusive bounds).
	CreatedAfter, CreatedBefore time.Time
	UpdatedAfter, UpdatedBefore time.Time
	// ValidAfter and ValidBefore keep memories true at some time between
	// them: valid_to unset or after ValidAfter, valid_from unset or before
	// ValidBefore.
	ValidAfter, ValidBefore time.Time
	Sort                    ListSort
	// Limit is the most memories a page holds (default DefaultListLimit,
	// at most MaxListLimit).
	Limit int
	// Cursor continues a listing: the NextCursor of its previous page.
	Cursor string
}

// ListResult is a page of List.
type ListResult struct {
	Memories []*Memory `json:"memories"`
	// NextCursor continues the listing; "" when it has ended. A page may
	// hold fewer memories than its limit, even none, and still have a next
	// one (see ListScan).
	NextCursor string `json:"next_cursor,omitempty"`
}

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
	opts, after, err := e.listOptions(&req)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	var res *ListResult
	err = e.b.View(ctx, func(tx ReadTx) error {
		if lr, ok := tx.(ListReader); ok {
			res, err = e.listIndexed(ctx, lr, &req, opts, after)
		} else {
			res, err = e.listScanned(ctx, tx, &req, opts, after)
		}
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

// listOptions validates req, fills its defaults and returns the backend's
// options and where the page starts (nil: at the first memory).
func (e *Engine) listOptions(req *ListRequest) (ListOptions, *ListKey, error) {
	var opts ListOptions
	sort, err := ParseListSort(string(req.Sort))
	if err != nil {
		return opts, nil, err
	}
	req.Sort = sort
	switch {
	case req.Limit == 0:
		req.Limit = DefaultListLimit
	case req.Limit < 0 || req.Limit > MaxListLimit:
		return opts, nil, invalidf("limit %d is outside 1–%d", req.Limit, MaxListLimit)
	}
	for _, p := range req.Pools {
		if _, err := ParsePool(string(p)); err != nil {
			return opts, nil, err
		}
	}
	for _, t := range req.Types {
		if _, err := ParseType(string(t)); err != nil {
			return opts, nil, err
		}
	}
	for _, s := range req.Statuses {
		if _, err := ParseStatus(string(s)); err != nil {
			return opts, nil, err
		}
	}
	for _, l := range req.TrustLevels {
		if _, err := ParseTrustLevel(string(l)); err != nil {
			return opts, nil, err
		}
	}
	for _, r := range []struct {
		name     string
		from, to time.Time
	}{{"created", req.CreatedAfter, req.CreatedBefore}, {"updated", req.UpdatedAfter, req.UpdatedBefore}, {"valid", req.ValidAfter, req.ValidBefore}} {
		if !r.from.IsZero() && !r.to.IsZero() && !r.to.After(r.from) {
			return opts, nil, invalidf("%s_before %s is not after %s_after %s: nothing can match", r.name, r.to.Format(time.RFC3339Nano), r.name, r.from.Format(time.RFC3339Nano))
		}
	}
	opts = ListOptions{Order: sort.order(), Namespaces: e.scope(), Statuses: req.Statuses}
	if req.NamespaceOnly {
		opts.Namespaces = []string{e.ns}
	}
	if opts.Statuses == nil {
		opts.Statuses = []Status{StatusActive}
	}
	var after *ListKey
	if req.Cursor != "" {
		k, err := decodeCursor(req.Cursor, opts.Order)
		if err != nil {
			return opts, nil, err
		}
		after = &k
	}
	// Newest first, memories created at or after CreatedBefore come before
	// every one that matches: start past them.
	if opts.Order == ListRecent && !req.CreatedBefore.IsZero() {
		k := ListKey{CreatedAt: req.CreatedBefore, ID: 0}
		if after == nil || opts.Order.Compare(*after, k) < 0 {
			after = &k
		}
	}
	return opts, after, nil
}

// listMatch reports whether m passes the filters of req that the backend
// does not apply (all but namespaces and statuses).
func listMatch(req *ListRequest, m *Memory) bool {
	switch {
	case req.Pools != nil && !slices.Contains(req.Pools, m.Pool),
		req.Types != nil && !slices.Contains(req.Types, m.Type),
		req.TrustLevels != nil && !slices.Contains(req.TrustLevels, m.Trust.Level),
		!strings.HasPrefix(m.Source, req.SourcePrefix),
		req.Entity != "" && !slices.ContainsFunc(m.Entities, func(s string) bool { return strings.EqualFold(s, req.Entity) }),
		!req.CreatedAfter.IsZero() && !m.CreatedAt.After(req.CreatedAfter),
		!req.CreatedBefore.IsZero() && !m.CreatedAt.Before(req.CreatedBefore),
		!req.UpdatedAfter.IsZero() && !m.UpdatedAt.After(req.UpdatedAfter),
		!req.UpdatedBefore.IsZero() && !m.UpdatedAt.Before(req.UpdatedBefore),
		!req.ValidAfter.IsZero() && !m.ValidTo.IsZero() && !m.ValidTo.After(req.ValidAfter),
		!req.ValidBefore.IsZero() && !m.ValidFrom.IsZero() && !m.ValidFrom.Before(req.ValidBefore):
		return false
	}
	return true
}

// errPageDone ends a backend's list read at the end of a page.
var errPageDone = errors.New("page done")

// listIndexed reads a page through the backend's list index: the
// memories after the start, in order, checked against the other filters,
// until the page is full, ListScan memories were read, or (newest first)
// the memories are older than req.CreatedAfter.
func (e *Engine) listIndexed(ctx context.Context, lr ListReader, req *ListRequest, opts ListOptions, after *ListKey) (*ListResult, error) {
	res := &ListResult{Memories: []*Memory{}}
	opts.After = after
	scanned, more := 0, false
	var last ListKey
	err := lr.List(opts, func(m *Memory) error {
		if scanned%256 == 255 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if opts.Order == ListRecent && !req.CreatedAfter.IsZero() && !m.CreatedAt.After(req.CreatedAfter) {
			return errPageDone // the rest is older still
		}
		if listMatch(req, m) {
			if len(res.Memories) == req.Limit {
				more = true // a next page has at least this one
				return errPageDone
			}
			res.Memories = append(res.Memories, m)
		}
		scanned++
		last = KeyOf(m)
		if scanned == ListScan {
			more = true
			return errPageDone
		}
		return nil
	})
	if err != nil && !errors.Is(err, errPageDone) {
		return nil, err
	}
	if more {
		res.NextCursor = encodeCursor(opts.Order, last)
	}
	return res, nil
}

// listScanned reads a page by scanning the scope, for a backend without a
// list index: every memory after the start that matches, sorted, of which
// the page keeps the first.
func (e *Engine) listScanned(ctx context.Context, tx ReadTx, req *ListRequest, opts ListOptions, after *ListKey) (*ListResult, error) {
	var ms []*Memory
	cmpKeys := func(a, b *Memory) int { return opts.Order.Compare(KeyOf(a), KeyOf(b)) }
	keep := func() {
		slices.SortFunc(ms, cmpKeys)
		ms = ms[:min(len(ms), req.Limit+1)]
	}
	f := Filter{Namespaces: opts.Namespaces, Statuses: opts.Statuses, Pools: req.Pools, Types: req.Types}
	err := tx.Scan(ScanOptions{Filter: f}, func(m *Memory) error {
		if after != nil && opts.Order.Compare(*after, KeyOf(m)) >= 0 || !listMatch(req, m) {
			return ctx.Err()
		}
		m.Embedding.Vector = nil
		if ms = append(ms, m); len(ms) > 4*(req.Limit+1) {
			keep()
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	keep()
	res := &ListResult{Memories: append([]*Memory{}, ms...)}
	if len(ms) > req.Limit {
		res.Memories = ms[:req.Limit]
		res.NextCursor = encodeCursor(opts.Order, KeyOf(ms[req.Limit-1]))
	}
	return res, nil
}

// KeyOf returns m's place in a list order.
func KeyOf(m *Memory) ListKey { return driver.KeyOf(m) }

// A cursor is the URL-safe base64 of "1 <order> <significance> <created_at>
// <id>": the version of the form, r or s, and the key of the memory the
// next page starts after (created_at in RFC 3339, "-" for the zero time).
func encodeCursor(o ListOrder, k ListKey) string {
	letter, created := "r", "-"
	if o == ListSignificant {
		letter = "s"
	}
	if !k.CreatedAt.IsZero() {
		created = k.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "1 %s %d %s %d", letter, k.Significance, created, k.ID))
}

// decodeCursor reads a cursor of a listing in order o.
func decodeCursor(c string, o ListOrder) (ListKey, error) {
	bad := func(why string) (ListKey, error) {
		return ListKey{}, invalidf("cursor %q is not one a list page returned (%s); pass next_cursor exactly as given, or leave it out to start over", c, why)
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return bad("not base64")
	}
	f := strings.Split(string(b), " ")
	if len(f) != 5 || f[0] != "1" {
		return bad("unknown form")
	}
	var k ListKey
	switch {
	case f[1] == "r" && o == ListSignificant:
		return ListKey{}, invalidf("the cursor continues a listing sorted by recency; ask with sort recency, or leave the cursor out to start over")
	case f[1] == "s" && o == ListRecent:
		return ListKey{}, invalidf("the cursor continues a listing sorted by significance; ask with sort significance, or leave the cursor out to start over")
	case f[1] != "r" && f[1] != "s":
		return bad("unknown order")
	}
	if k.Significance, err = strconv.Atoi(f[2]); err != nil {
		return bad("bad significance")
	}
	if f[3] != "-" {
		if k.CreatedAt, err = time.Parse(time.RFC3339Nano, f[3]); err != nil {
			return bad("bad time")
		}
		k.CreatedAt = k.CreatedAt.UTC()
	}
	if k.ID, err = strconv.ParseInt(f[4], 10, 64); err != nil || k.ID <= 0 {
		return bad("bad id")
	}
	return k, nil
}
