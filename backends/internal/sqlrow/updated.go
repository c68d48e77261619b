package sqlrow

import (
	"fmt"
	"slices"
	"time"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/core/driver"
)

// UpdatedAfter is driver.UpdateReader's UpdatedAfter: q reads a page of at
// most ?4 memories of namespace ?1 whose (updated_at, id) comes after (?2,
// ?3), in that order, with updated_at stored in TimeLayout ("" for the zero
// time with memu set, as MemoryArgs writes it). Each namespace is read once;
// then, if not nil, is called after each namespace's pages with the
// namespace and the operation's name for errors.
func UpdatedAfter(db Querier, q string, size int, memu bool, namespaces []string, at time.Time,
	then func(ns, op string) error, fn func(*driver.Memory) error) error {
	after, err := EncodeTime("time", at) // "", before every time, for a year before 0
	if err != nil && at.Year() > 9999 {
		return nil // nothing is written after the year 9999
	}
	key := func(u time.Time) (string, error) {
		s, err := EncodeTime("updated_at", u)
		if err == nil && s == "" && !memu {
			err = fmt.Errorf("no time")
		}
		return s, err
	}
	for i, ns := range namespaces {
		if slices.Contains(namespaces[:i], ns) {
			continue
		}
		op := fmt.Sprintf("memories of namespace %q changed after %s", ns, at.Format(time.RFC3339Nano))
		err := ranked.UpdatedPages(size, after, func(from string, fromID int64) ([]*driver.Memory, error) {
			return Collect(db, q, []any{ns, from, fromID, size}, ScanMemory)
		}, key, func(err error) error { return db.Fail(op, err) }, fn)
		if err == nil && then != nil {
			err = then(ns, op)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// InsertRow checks m for Tx.Insert, or with at set Importer.InsertAt, in tx
// (driver.CheckInsert) and returns its row (InsertArgs).
func InsertRow(tx driver.ReadTx, m *driver.Memory, at, memu bool) ([]any, error) {
	if err := driver.CheckInsert(tx, m, at); err != nil {
		return nil, err
	}
	return InsertArgs(m, memu)
}

// InsertArgs returns MemoryArgs followed by last_accessed_at and
// access_count: the row of a new memory, before the backend's own columns.
func InsertArgs(m *driver.Memory, memu bool) ([]any, error) {
	args, err := MemoryArgs(m, memu)
	if err != nil {
		return nil, fmt.Errorf("insert memory: %w", err)
	}
	accessed, err := NullTime("last_accessed_at", m.LastAccessedAt)
	if err != nil {
		return nil, fmt.Errorf("insert memory: %w", err)
	}
	return append(args, accessed, m.AccessCount), nil
}

// AuditArgs returns the values of an audit entry's row after its seq: time,
// action, memory_id, detail, prev_hash, hash. With memu set, the zero time
// is "" rather than NULL.
func AuditArgs(e *driver.AuditEntry, memu bool) ([]any, error) {
	if e == nil {
		return nil, driver.Invalidf("append audit: nil entry")
	}
	tm, err := NullTime("time", e.Time)
	if err != nil {
		return nil, fmt.Errorf("append audit: %w", err)
	}
	if tm == nil && memu {
		tm = ""
	}
	return []any{tm, e.Action, e.MemoryID, e.Detail, e.PrevHash, e.Hash}, nil
}

// EachRow calls row for every row of rows, then returns rows' error. The
// caller closes rows.
func EachRow(rows interface {
	Scanner
	Next() bool
	Err() error
}, row func(Scanner) error) error {
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
