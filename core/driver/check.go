package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/memos-go/memos/core/query"
)

// The checks below are the argument checks of Tx and ReadTx methods that
// backends share, with the errors the contract asks for. A backend calls
// them first, so that every backend refuses the same calls with the same
// words.

// CheckGet checks the version asked of ReadTx.Get (0: the current one).
func CheckGet(id int64, v int) error {
	if v < 0 {
		return Invalidf("get memory %d: version %d is negative", id, v)
	}
	return nil
}

// MemoryNotFound is the error of a read of version v of memory id (0: the
// current version) that does not exist.
func MemoryNotFound(id int64, v int) error {
	if v == 0 {
		return fmt.Errorf("memory %d: %w", id, ErrNotFound)
	}
	return fmt.Errorf("memory %d version %d: %w", id, v, ErrNotFound)
}

// CheckScan checks ReadTx.Scan's options.
func CheckScan(opts ScanOptions) error {
	if opts.Limit < 0 {
		return Invalidf("scan: limit %d is negative", opts.Limit)
	}
	return nil
}

// CheckInsert checks a memory given to Tx.Insert, or with at set to
// Importer.InsertAt, which keeps m.ID: it must be positive, and no memory
// in tx may have it (an error wrapping ErrConflict).
func CheckInsert(tx ReadTx, m *Memory, at bool) error {
	if at && m != nil && m.ID <= 0 {
		return Invalidf("insert at: id %d is not positive", m.ID)
	}
	if m == nil {
		return Invalidf("insert: nil memory")
	}
	if m.Version != 1 {
		return Invalidf("insert: a new memory has version 1, not %d", m.Version)
	}
	if !at {
		return nil
	}
	_, err := tx.Get(m.ID, 0)
	if err == nil {
		return fmt.Errorf("insert at: memory %d exists: %w", m.ID, ErrConflict)
	}
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// CheckSearch checks the arguments of KeywordIndex.SearchKeyword: ctx is
// not done, q is a query that query.Validate accepts (else ErrInvalid) and
// limit is positive.
func CheckSearch(ctx context.Context, q query.Node, limit int) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("keyword search: %w", err)
	}
	if q == nil {
		return Invalidf("keyword search: no query")
	}
	if err := query.Validate(q); err != nil {
		return fmt.Errorf("keyword search: %w: %v", ErrInvalid, err)
	}
	if limit <= 0 {
		return Invalidf("keyword search: limit %d is not positive", limit)
	}
	return nil
}

// CheckLink checks an edge given to Tx.Link: its type is known and both of
// its memories exist (exists returns an error wrapping ErrNotFound for one
// that does not, naming op). It returns the operation's name for the
// caller's errors.
func CheckLink(e Edge, exists func(op string, id int64) error) (op string, err error) {
	op = fmt.Sprintf("link %d→%d (%s)", e.From, e.To, e.Type)
	if err := ValidateEdgeType(e.Type); err != nil {
		return op, fmt.Errorf("%s: %w", op, err)
	}
	for _, id := range []int64{e.From, e.To} {
		if err := exists(op, id); err != nil {
			return op, err
		}
	}
	return op, nil
}

// CheckPut checks a memory given to Tx.Put against cur, the memory's current
// version: m must be the next one.
func CheckPut(m *Memory, cur int) error {
	if m.Version != cur+1 {
		return fmt.Errorf("put memory %d: it is at version %d, so the next version is %d, not %d (someone else wrote it in between?): %w",
			m.ID, cur, cur+1, m.Version, ErrConflict)
	}
	return nil
}

// CheckMetaKey checks a key given to Tx.SetMeta by a caller of backend,
// which reserves the keys that start with reserved for itself.
func CheckMetaKey(backend, reserved, key string) error {
	if key == "" {
		return Invalidf("set meta: empty key")
	}
	if reserved != "" && strings.HasPrefix(key, reserved) {
		return Invalidf("set meta: key %q is reserved for the %s backend (keys starting with %q)", key, backend, reserved)
	}
	return nil
}
