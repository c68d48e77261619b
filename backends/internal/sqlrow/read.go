package sqlrow

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/memos-go/memos/core/driver"
)

// Querier is what the shared reads need of a backend's transaction.
type Querier interface {
	// Each runs q with args and calls row for every row of the result, in
	// order; row must not use the transaction.
	Each(q string, args []any, row func(Scanner) error) error
	// Fail turns a driver error during op into the backend's error.
	Fail(op string, err error) error
}

// Collect runs q with args on db and reads every row with scan.
func Collect[T any](db Querier, q string, args []any, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	err := db.Each(q, args, func(s Scanner) error {
		v, err := scan(s)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// Statements are a backend's SQL for the reads that Reads shares, each in
// the backend's own dialect (placeholders, index hints).
type Statements struct {
	// Get reads the current version of memory ?1 (MemoryCols,
	// last_accessed_at, access_count); GetVersion version ?2 of it;
	// History every version of it, oldest first.
	Get, GetVersion, History string
	// GetMany reads the current versions of the ids bound by IDs as one
	// argument.
	GetMany string
	IDs     func(ids []int64) any
	// Edges reads EdgeCols of the edges at memory ?1.
	Edges string
	// Session reads id, valid_from and created_at of the members of
	// session ?2 in namespace ?1.
	Session string
	// Meta reads the value of meta key ?1.
	Meta string
	// Changes reads a page of ?3 change-log rows (ScanChange) after (seq
	// ?1, id ?2).
	Changes string
	// Audit reads a page of ?2 entries (AuditCols) after seq ?1; AuditOf a
	// page of ?3 entries about memory ?1 after seq ?2; AuditBefore a page
	// of ?2 entries below seq ?1, newest first.
	Audit, AuditOf, AuditBefore string
	// Count counts memories per facet (see Reads.Count): the statement up
	// to its WHERE, with the embedding model ?1 and dimension ?2.
	Count string
	// CountEdges counts every edge; CountEdgesJoin is the statement that
	// counts the edges between memories aliased a and b, up to its WHERE.
	CountEdges, CountEdgesJoin string
	// In renders the condition that a column is one of vals (non-empty),
	// as it follows the column (" IN (?, ?)", " = ANY($3)"), with its
	// arguments; next is how many arguments come before.
	In func(vals []string, next int) (string, []any)

	// PageSize is how many rows Scan, Changes and Audit read at a time;
	// MaxChangePage, if larger, is how far a read of the change log
	// doubles its pages, so that one that reads the whole log takes a
	// dozen round trips rather than hundreds.
	PageSize, MaxChangePage int
}

// Reads implements the reads of driver.ReadTx, and of the optional
// readers, that the SQL backends share: each runs a statement of S
// through DB. A backend's transaction embeds it, with DB itself, and so
// implements the optional readers below.
type Reads struct {
	DB Querier
	S  *Statements
}

var (
	_ driver.MultiGetter       = Reads{}
	_ driver.SessionReader     = Reads{}
	_ driver.AuditReader       = Reads{}
	_ driver.AuditMemoryReader = Reads{}
	_ driver.AuditTailReader   = Reads{}
	_ driver.Counter           = Reads{}
)

// Get returns version v of memory id, or its current version when v is 0.
func (r Reads) Get(id int64, v int) (*driver.Memory, error) {
	if err := driver.CheckGet(id, v); err != nil {
		return nil, err
	}
	q, args := r.S.Get, []any{id}
	if v != 0 {
		q, args = r.S.GetVersion, []any{id, v}
	}
	ms, err := Collect(r.DB, q, args, ScanMemory)
	if err != nil {
		return nil, r.DB.Fail(fmt.Sprintf("get memory %d", id), err)
	}
	if len(ms) == 0 {
		return nil, driver.MemoryNotFound(id, v)
	}
	return ms[0], nil
}

// GetMany returns the current version of every memory of ids that exists
// (driver.MultiGetter), in one statement.
func (r Reads) GetMany(ids []int64) (map[int64]*driver.Memory, error) {
	out := make(map[int64]*driver.Memory, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	err := r.DB.Each(r.S.GetMany, []any{r.S.IDs(ids)}, func(s Scanner) error {
		m, err := ScanMemory(s)
		if err == nil {
			out[m.ID] = m
		}
		return err
	})
	if err != nil {
		return nil, r.DB.Fail(fmt.Sprintf("get %d memories", len(ids)), err)
	}
	return out, nil
}

// History returns every version of id, oldest first.
func (r Reads) History(id int64) ([]*driver.Memory, error) {
	out, err := Collect(r.DB, r.S.History, []any{id}, ScanMemory)
	if err != nil {
		return nil, r.DB.Fail(fmt.Sprintf("history of memory %d", id), err)
	}
	if len(out) == 0 {
		return nil, driver.MemoryNotFound(id, 0)
	}
	return out, nil
}

// Scan is ReadTx.Scan, a page of at most size memories at a time: page
// returns the query of a page and its arguments, which read the memories
// after id after, n at most, in id order.
func Scan(db Querier, opts driver.ScanOptions, size int, page func(after int64, n int) (string, []any), fn func(*driver.Memory) error) error {
	return ScanPages(opts, size, func(after int64, n int) ([]*driver.Memory, error) {
		q, args := page(after, n)
		ms, err := Collect(db, q, args, ScanMemory)
		if err != nil {
			return nil, db.Fail("scan memories", err)
		}
		return ms, nil
	}, fn)
}

// Edges returns the edges that start or end at id, ordered by (From, To,
// Type).
func (r Reads) Edges(id int64) ([]driver.Edge, error) {
	out, err := Collect(r.DB, r.S.Edges, []any{id}, ScanEdge)
	if err != nil {
		return nil, r.DB.Fail(fmt.Sprintf("edges of memory %d", id), err)
	}
	return out, nil
}

// Session returns the members of session in namespace (see
// driver.SessionReader).
func (r Reads) Session(namespace, session string) ([]driver.SessionMember, error) {
	out, err := Collect(r.DB, r.S.Session, []any{namespace, session}, ScanSessionMember)
	if err != nil {
		return nil, r.DB.Fail(fmt.Sprintf("members of session %q", session), err)
	}
	return out, nil
}

// Changes calls fn, in ascending (Seq, ID) order, once for every memory
// changed after since. A transaction's writes share one Seq.
func (r Reads) Changes(since uint64, fn func(driver.Change) error) error {
	return ChangePages(since, r.S.PageSize, r.S.MaxChangePage, func(afterSeq, afterID int64, n int) ([]driver.Change, error) {
		cs, err := Collect(r.DB, r.S.Changes, []any{afterSeq, afterID, n}, ScanChange)
		if err != nil {
			return nil, r.DB.Fail(fmt.Sprintf("read changes since %d", since), err)
		}
		return cs, nil
	}, fn)
}

// Audit calls fn for every audit entry in ascending Seq order
// (driver.AuditReader).
func (r Reads) Audit(fn func(driver.AuditEntry) error) error {
	return r.AuditWith(r.S.Audit, nil, fn)
}

// AuditOf calls fn for every audit entry about memory id, in ascending Seq
// order (driver.AuditMemoryReader).
func (r Reads) AuditOf(id int64, fn func(driver.AuditEntry) error) error {
	return r.AuditWith(r.S.AuditOf, []any{id}, fn)
}

// AuditBefore calls fn for every audit entry below before (0: every one),
// newest first (driver.AuditTailReader).
func (r Reads) AuditBefore(before uint64, fn func(driver.AuditEntry) error) error {
	return AuditBackPages(before, r.S.PageSize, func(before int64, n int) ([]driver.AuditEntry, error) {
		es, err := Collect(r.DB, r.S.AuditBefore, []any{before, n}, ScanAudit)
		if err != nil {
			return nil, r.DB.Fail("read audit log", err)
		}
		return es, nil
	}, fn)
}

// AuditWith reads the audit entries of q, whose arguments are args, then
// the seq to read after and the page size, in pages, in ascending Seq
// order.
func (r Reads) AuditWith(q string, args []any, fn func(driver.AuditEntry) error) error {
	return AuditPages(r.S.PageSize, func(after int64) ([]driver.AuditEntry, error) {
		es, err := Collect(r.DB, q, append(args[:len(args):len(args)], after, r.S.PageSize), ScanAudit)
		if err != nil {
			return nil, r.DB.Fail("read audit log", err)
		}
		return es, nil
	}, fn)
}

// Count counts memories per facet (driver.Counter) with one aggregate:
// S.Count reads namespace, pool, type, status, the number of memories,
// the sum of their versions and how many active ones are embedded with
// opts' model.
func (r Reads) Count(opts driver.CountOptions) ([]driver.FacetCount, error) {
	q, args := r.S.Count, []any{opts.Model, opts.Dim}
	if opts.Namespaces != nil {
		if len(opts.Namespaces) == 0 {
			return nil, nil
		}
		cond, a := r.S.In(opts.Namespaces, len(args))
		q += ` WHERE namespace` + cond
		args = append(args, a...)
	}
	out, err := Collect(r.DB, q+` GROUP BY namespace, pool, type, status`, args, func(s Scanner) (driver.FacetCount, error) {
		var c driver.FacetCount
		var pool, typ, status string
		var n, versions, embedded int64
		err := s.Scan(&c.Namespace, &pool, &typ, &status, &n, &versions, &embedded)
		c.Pool, c.Type, c.Status = driver.Pool(pool), driver.Type(typ), driver.Status(status)
		c.Memories, c.Versions, c.Embedded = int(n), int(versions), int(embedded)
		return c, err
	})
	if err != nil {
		return nil, r.DB.Fail("count memories", err)
	}
	return out, nil
}

// CountEdges counts the edges between memories of namespaces (nil: every
// edge; see driver.Counter).
func (r Reads) CountEdges(namespaces []string) (int, error) {
	q, args := r.S.CountEdges, []any(nil)
	if namespaces != nil {
		if len(namespaces) == 0 {
			return 0, nil
		}
		a, aArgs := r.S.In(namespaces, 0)
		b, bArgs := r.S.In(namespaces, len(aArgs))
		q, args = r.S.CountEdgesJoin+` WHERE a.namespace`+a+` AND b.namespace`+b, append(aArgs, bArgs...)
	}
	ns, err := Collect(r.DB, q, args, func(s Scanner) (n int64, err error) { return n, s.Scan(&n) })
	if err != nil || len(ns) != 1 {
		return 0, r.DB.Fail("count edges", cmp.Or(err, fmt.Errorf("%d rows, want one", len(ns))))
	}
	return int(ns[0]), nil
}

// Filter renders f as conditions (" AND ...") on the memories table aliased
// m, with their arguments, after next arguments. in renders the condition
// on a column for a non-empty list of values, as it follows the column
// (Statements.In). none is the condition for an empty, non-nil list, which
// matches nothing.
func Filter(f driver.Filter, none string, next int, in func(vals []string, next int) (string, []any)) (string, []any) {
	var b strings.Builder
	var args []any
	add := func(col string, vals []string, set bool) {
		switch {
		case !set:
		case len(vals) == 0:
			b.WriteString(" AND " + none)
		default:
			cond, a := in(vals, next+len(args))
			b.WriteString(" AND m." + col + cond)
			args = append(args, a...)
		}
	}
	add("namespace", f.Namespaces, f.Namespaces != nil)
	add("pool", Strings(f.Pools), f.Pools != nil)
	add("status", Strings(f.Statuses), f.Statuses != nil)
	add("type", Strings(f.Types), f.Types != nil)
	return b.String(), args
}

// Strings converts a list of a string type (driver.Pool, ...) to strings.
func Strings[T ~string](s []T) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}

// Meta returns a store-level setting, or ErrNotFound.
func (r Reads) Meta(key string) (string, error) {
	vs, err := Collect(r.DB, r.S.Meta, []any{key}, func(s Scanner) (v string, err error) { return v, s.Scan(&v) })
	if err != nil {
		return "", r.DB.Fail(fmt.Sprintf("read meta key %q", key), err)
	}
	if len(vs) == 0 {
		return "", fmt.Errorf("meta key %q: %w", key, driver.ErrNotFound)
	}
	return vs[0], nil
}
