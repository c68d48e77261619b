package sqlrow

import (
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

// Get is ReadTx.Get: qGet reads the current version of memory ?1 (with
// MemoryCols, last_accessed_at, access_count), qVersion version ?2 of it.
func Get(db Querier, qGet, qVersion string, id int64, v int) (*driver.Memory, error) {
	if err := driver.CheckGet(id, v); err != nil {
		return nil, err
	}
	q, args := qGet, []any{id}
	if v != 0 {
		q, args = qVersion, []any{id, v}
	}
	ms, err := Collect(db, q, args, ScanMemory)
	if err != nil {
		return nil, db.Fail(fmt.Sprintf("get memory %d", id), err)
	}
	if len(ms) == 0 {
		return nil, driver.MemoryNotFound(id, v)
	}
	return ms[0], nil
}

// GetMany is driver.MultiGetter's GetMany of n ids: q reads the current
// versions of the ids bound as arg.
func GetMany(db Querier, q string, arg any, n int) (map[int64]*driver.Memory, error) {
	out := make(map[int64]*driver.Memory, n)
	if n == 0 {
		return out, nil
	}
	err := db.Each(q, []any{arg}, func(s Scanner) error {
		m, err := ScanMemory(s)
		if err == nil {
			out[m.ID] = m
		}
		return err
	})
	if err != nil {
		return nil, db.Fail(fmt.Sprintf("get %d memories", n), err)
	}
	return out, nil
}

// History is ReadTx.History: q reads every version of memory ?1, oldest
// first.
func History(db Querier, q string, id int64) ([]*driver.Memory, error) {
	out, err := Collect(db, q, []any{id}, ScanMemory)
	if err != nil {
		return nil, db.Fail(fmt.Sprintf("history of memory %d", id), err)
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

// Edges is ReadTx.Edges: q reads EdgeCols of the edges at memory ?1.
func Edges(db Querier, q string, id int64) ([]driver.Edge, error) {
	out, err := Collect(db, q, []any{id}, ScanEdge)
	if err != nil {
		return nil, db.Fail(fmt.Sprintf("edges of memory %d", id), err)
	}
	return out, nil
}

// Session is driver.SessionReader's Session: q reads id, valid_from and
// created_at of the members of session ?2 in namespace ?1.
func Session(db Querier, q, namespace, session string) ([]driver.SessionMember, error) {
	out, err := Collect(db, q, []any{namespace, session}, ScanSessionMember)
	if err != nil {
		return nil, db.Fail(fmt.Sprintf("members of session %q", session), err)
	}
	return out, nil
}

// Changes is ReadTx.Changes: q reads a page of ?3 change-log rows (see
// ScanChange) after (seq ?1, id ?2).
func Changes(db Querier, q string, since uint64, size int, fn func(driver.Change) error) error {
	return ChangePages(since, size, func(afterSeq, afterID int64) ([]driver.Change, error) {
		cs, err := Collect(db, q, []any{afterSeq, afterID, size}, ScanChange)
		if err != nil {
			return nil, db.Fail(fmt.Sprintf("read changes since %d", since), err)
		}
		return cs, nil
	}, fn)
}

// Audit is driver.AuditReader's Audit: q reads a page of ?2 entries
// (AuditCols) after seq ?1.
func Audit(db Querier, q string, size int, fn func(driver.AuditEntry) error) error {
	return AuditPages(size, func(after int64) ([]driver.AuditEntry, error) {
		es, err := Collect(db, q, []any{after, size}, ScanAudit)
		if err != nil {
			return nil, db.Fail("read audit log", err)
		}
		return es, nil
	}, fn)
}

// Filter renders f as conditions (" AND ...") on the memories table aliased
// m, with their arguments. in renders the condition on column col for a
// non-empty list of values after the column name (" IN (?, ?)"), with its
// arguments; next is how many arguments come before. none is the condition
// for an empty, non-nil list, which matches nothing.
func Filter(f driver.Filter, none string, in func(col string, vals []string, next int) (string, []any)) (string, []any) {
	var b strings.Builder
	var args []any
	add := func(col string, vals []string, set bool) {
		switch {
		case !set:
		case len(vals) == 0:
			b.WriteString(" AND " + none)
		default:
			cond, a := in(col, vals, len(args))
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

// Meta is ReadTx.Meta: q reads the value of meta key ?1.
func Meta(db Querier, q, key string) (string, error) {
	vs, err := Collect(db, q, []any{key}, func(s Scanner) (v string, err error) { return v, s.Scan(&v) })
	if err != nil {
		return "", db.Fail(fmt.Sprintf("read meta key %q", key), err)
	}
	if len(vs) == 0 {
		return "", fmt.Errorf("meta key %q: %w", key, driver.ErrNotFound)
	}
	return vs[0], nil
}
