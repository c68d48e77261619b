// Package listing is List's paging: a request's validation and defaults,
// its filters, keyset cursors, and the read of one page through a
// backend's list index (driver.ListReader) or, without one, a bounded scan.
//
// It is written over core/driver and never imports the engine; core
// re-exports Request, Result and Sort as ListRequest, ListResult and
// ListSort.
package listing

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

// Sort names an order of List.
type Sort string

const (
	// SortRecency is newest first: by created_at (when memos learned the
	// memory), then by id, both descending.
	SortRecency Sort = "recency"
	// SortSignificance is most significant first, then newest first.
	SortSignificance Sort = "significance"
)

// ParseSort validates a sort name; "" is recency.
func ParseSort(s string) (Sort, error) {
	switch Sort(s) {
	case "", SortRecency:
		return SortRecency, nil
	case SortSignificance:
		return SortSignificance, nil
	}
	return "", driver.Invalidf("unknown sort %q (want recency or significance)", s)
}

func (s Sort) order() driver.ListOrder {
	if s == SortSignificance {
		return driver.ListSignificant
	}
	return driver.ListRecent
}

// Bounds of Request.Limit.
const (
	DefaultLimit = 20
	MaxLimit     = 1000
)

// MaxScan bounds the memories a page of List reads: filters that no index
// serves (pools, types, trust, source, entity, updated and valid times)
// are checked on each memory of the namespaces and statuses asked for, in
// order, and a page that has read MaxScan of them ends there, with fewer
// memories than its limit (maybe none) and a cursor to read on from. A
// page's work is so bounded however few memories match.
const MaxScan = 5000

// Request selects memories to browse, in an order, a page at a time.
// Zero fields place no restriction, except Statuses.
type Request struct {
	// NamespaceOnly lists the handle's namespace alone, not the shared
	// default one that reads include.
	NamespaceOnly bool
	Pools         []driver.Pool
	Types         []driver.Type
	// Statuses: nil lists active memories; quarantined and archived ones
	// are listed only when named.
	Statuses    []driver.Status
	TrustLevels []driver.TrustLevel
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
	Sort                    Sort
	// Limit is the most memories a page holds (default DefaultLimit,
	// at most MaxLimit).
	Limit int
	// Cursor continues a listing: the NextCursor of its previous page.
	Cursor string
}

// Result is a page of List.
type Result struct {
	Memories []*driver.Memory `json:"memories"`
	// NextCursor continues the listing; "" when it has ended. A page may
	// hold fewer memories than its limit, even none, and still have a next
	// one (see MaxScan).
	NextCursor string `json:"next_cursor,omitempty"`
}

// Page is a validated request: the backend's options and where the page
// starts (after; nil: at the first memory).
type Page struct {
	req   Request
	opts  driver.ListOptions
	after *driver.ListKey
}

// Prepare validates req and fills its defaults, for a handle that reads
// the namespaces scope and writes to ns (NamespaceOnly lists ns alone).
func Prepare(req Request, scope []string, ns string) (*Page, error) {
	opts, after, err := options(&req, scope, ns)
	if err != nil {
		return nil, err
	}
	return &Page{req: req, opts: opts, after: after}, nil
}

// Read reads the page through tx: through its list index when it has one
// (driver.ListReader), else by scanning the scope.
func (p *Page) Read(ctx context.Context, tx driver.ReadTx) (*Result, error) {
	if lr, ok := tx.(driver.ListReader); ok {
		return indexed(ctx, lr, &p.req, p.opts, p.after)
	}
	return scanned(ctx, tx, &p.req, p.opts, p.after)
}

// options validates req, fills its defaults and returns the backend's
// options and where the page starts (nil: at the first memory).
func options(req *Request, scope []string, ns string) (driver.ListOptions, *driver.ListKey, error) {
	var opts driver.ListOptions
	sort, err := ParseSort(string(req.Sort))
	if err != nil {
		return opts, nil, err
	}
	req.Sort = sort
	switch {
	case req.Limit == 0:
		req.Limit = DefaultLimit
	case req.Limit < 0 || req.Limit > MaxLimit:
		return opts, nil, driver.Invalidf("limit %d is outside 1–%d", req.Limit, MaxLimit)
	}
	for _, p := range req.Pools {
		if _, err := driver.ParsePool(string(p)); err != nil {
			return opts, nil, err
		}
	}
	for _, t := range req.Types {
		if _, err := driver.ParseType(string(t)); err != nil {
			return opts, nil, err
		}
	}
	for _, s := range req.Statuses {
		if _, err := driver.ParseStatus(string(s)); err != nil {
			return opts, nil, err
		}
	}
	for _, l := range req.TrustLevels {
		if _, err := driver.ParseTrustLevel(string(l)); err != nil {
			return opts, nil, err
		}
	}
	for _, r := range []struct {
		name     string
		from, to time.Time
	}{{"created", req.CreatedAfter, req.CreatedBefore}, {"updated", req.UpdatedAfter, req.UpdatedBefore}, {"valid", req.ValidAfter, req.ValidBefore}} {
		if !r.from.IsZero() && !r.to.IsZero() && !r.to.After(r.from) {
			return opts, nil, driver.Invalidf("%s_before %s is not after %s_after %s: nothing can match", r.name, r.to.Format(time.RFC3339Nano), r.name, r.from.Format(time.RFC3339Nano))
		}
	}
	opts = driver.ListOptions{Order: sort.order(), Namespaces: scope, Statuses: req.Statuses}
	if req.NamespaceOnly {
		opts.Namespaces = []string{ns}
	}
	if opts.Statuses == nil {
		opts.Statuses = []driver.Status{driver.StatusActive}
	}
	var after *driver.ListKey
	if req.Cursor != "" {
		k, err := decodeCursor(req.Cursor, opts.Order)
		if err != nil {
			return opts, nil, err
		}
		after = &k
	}
	// Newest first, memories created at or after CreatedBefore come before
	// every one that matches: start past them.
	if opts.Order == driver.ListRecent && !req.CreatedBefore.IsZero() {
		k := driver.ListKey{CreatedAt: req.CreatedBefore, ID: 0}
		if after == nil || opts.Order.Compare(*after, k) < 0 {
			after = &k
		}
	}
	return opts, after, nil
}

// match reports whether m passes the filters of req that the backend
// does not apply (all but namespaces and statuses).
func match(req *Request, m *driver.Memory) bool {
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

// indexed reads a page through the backend's list index: the
// memories after the start, in order, checked against the other filters,
// until the page is full, MaxScan memories were read, or (newest first)
// the memories are older than req.CreatedAfter.
func indexed(ctx context.Context, lr driver.ListReader, req *Request, opts driver.ListOptions, after *driver.ListKey) (*Result, error) {
	res := &Result{Memories: []*driver.Memory{}}
	opts.After = after
	scanned, more := 0, false
	var last driver.ListKey
	err := lr.List(opts, func(m *driver.Memory) error {
		if scanned%256 == 255 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if opts.Order == driver.ListRecent && !req.CreatedAfter.IsZero() && !m.CreatedAt.After(req.CreatedAfter) {
			return errPageDone // the rest is older still
		}
		if match(req, m) {
			if len(res.Memories) == req.Limit {
				more = true // a next page has at least this one
				return errPageDone
			}
			res.Memories = append(res.Memories, m)
		}
		scanned++
		last = driver.KeyOf(m)
		if scanned == MaxScan {
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

// scanned reads a page by scanning the scope, for a backend without a
// list index: every memory after the start that matches, sorted, of which
// the page keeps the first.
func scanned(ctx context.Context, tx driver.ReadTx, req *Request, opts driver.ListOptions, after *driver.ListKey) (*Result, error) {
	var ms []*driver.Memory
	cmpKeys := func(a, b *driver.Memory) int { return opts.Order.Compare(driver.KeyOf(a), driver.KeyOf(b)) }
	keep := func() {
		slices.SortFunc(ms, cmpKeys)
		ms = ms[:min(len(ms), req.Limit+1)]
	}
	f := driver.Filter{Namespaces: opts.Namespaces, Statuses: opts.Statuses, Pools: req.Pools, Types: req.Types}
	err := tx.Scan(driver.ScanOptions{Filter: f}, func(m *driver.Memory) error {
		if after != nil && opts.Order.Compare(*after, driver.KeyOf(m)) >= 0 || !match(req, m) {
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
	res := &Result{Memories: append([]*driver.Memory{}, ms...)}
	if len(ms) > req.Limit {
		res.Memories = ms[:req.Limit]
		res.NextCursor = encodeCursor(opts.Order, driver.KeyOf(ms[req.Limit-1]))
	}
	return res, nil
}

// A cursor is the URL-safe base64 of "1 <order> <significance> <created_at>
// <id>": the version of the form, r or s, and the key of the memory the
// next page starts after (created_at in RFC 3339, "-" for the zero time).
func encodeCursor(o driver.ListOrder, k driver.ListKey) string {
	letter, created := "r", "-"
	if o == driver.ListSignificant {
		letter = "s"
	}
	if !k.CreatedAt.IsZero() {
		created = k.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "1 %s %d %s %d", letter, k.Significance, created, k.ID))
}

// decodeCursor reads a cursor of a listing in order o.
func decodeCursor(c string, o driver.ListOrder) (driver.ListKey, error) {
	bad := func(why string) (driver.ListKey, error) {
		return driver.ListKey{}, driver.Invalidf("cursor %q is not one a list page returned (%s); pass next_cursor exactly as given, or leave it out to start over", c, why)
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return bad("not base64")
	}
	f := strings.Split(string(b), " ")
	if len(f) != 5 || f[0] != "1" {
		return bad("unknown form")
	}
	var k driver.ListKey
	switch {
	case f[1] == "r" && o == driver.ListSignificant:
		return driver.ListKey{}, driver.Invalidf("the cursor continues a listing sorted by recency; ask with sort recency, or leave the cursor out to start over")
	case f[1] == "s" && o == driver.ListRecent:
		return driver.ListKey{}, driver.Invalidf("the cursor continues a listing sorted by significance; ask with sort significance, or leave the cursor out to start over")
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
