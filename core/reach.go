package core

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memos-go/memos/core/query"
)

// reach is what a handle may read and change, and the namespace rules
// every operation applies with it (see In and Limit).
type reach struct {
	ns string // the namespace this handle writes to and reads from (with default)
	// only, when not nil, are the namespaces this handle may change (see
	// Limit); nil: every namespace it reads.
	only []string
}

// scope is the set of namespaces a read of this handle may return.
func (r reach) scope() []string {
	if r.ns == DefaultNamespace {
		return []string{DefaultNamespace}
	}
	return []string{r.ns, DefaultNamespace}
}

func (r reach) inScope(m *Memory) bool { return slices.Contains(r.scope(), m.Namespace) }

// mayChange reports whether this handle may change memories of namespace ns.
func (r reach) mayChange(ns string) bool { return r.only == nil || slices.Contains(r.only, ns) }

// readOnly is the error for a change to memory m, which this handle reads
// but may not change.
func (r reach) readOnly(m *Memory) error {
	return fmt.Errorf("%w: memory %d is in namespace %s, which this caller may read but not change (it may change %s)",
		ErrForbidden, m.ID, m.Namespace, strings.Join(r.only, ", "))
}

// whole refuses an operation op that reaches the whole store on a limited
// handle.
func (r reach) whole(op string) error {
	if r.only == nil {
		return nil
	}
	return &Error{Op: op, Err: fmt.Errorf("%w: %s reaches every namespace of the store; this caller is limited to %s", ErrForbidden, op, strings.Join(r.only, ", "))}
}

// getScoped returns version v (0: the current one) of memory id, or
// ErrNotFound when it is outside the scope.
func (r reach) getScoped(tx ReadTx, id int64, v int) (*Memory, error) {
	cur, err := tx.Get(id, 0)
	if err != nil {
		return nil, err
	}
	if !r.inScope(cur) {
		// Reads see the namespace and the shared default one.
		if r.ns == DefaultNamespace {
			return nil, fmt.Errorf("%w in namespace %s", ErrNotFound, r.ns)
		}
		return nil, fmt.Errorf("%w in namespace %s or %s", ErrNotFound, r.ns, DefaultNamespace)
	}
	if v == 0 || v == cur.Version {
		return cur, nil
	}
	if v < 0 || v > cur.Version {
		return nil, fmt.Errorf("%w: memory %d has versions 1 to %d, not %d", ErrNotFound, id, cur.Version, v)
	}
	return tx.Get(id, v)
}

// getWritable returns the current version of memory id for a change:
// ErrNotFound outside this handle's scope, ErrForbidden for a memory it
// reads but may not change (see Limit).
func (r reach) getWritable(tx ReadTx, id int64) (*Memory, error) {
	cur, err := r.getScoped(tx, id, 0)
	if err != nil {
		return nil, err
	}
	if !r.mayChange(cur.Namespace) {
		return nil, r.readOnly(cur)
	}
	return cur, nil
}

// refused is the backend of a limited handle (see Engine.Backend): every
// call is ErrForbidden.
type refused struct{ r reach }

func (b refused) View(context.Context, func(ReadTx) error) error { return b.r.whole("backend view") }
func (b refused) Update(context.Context, func(Tx) error) error   { return b.r.whole("backend update") }
func (b refused) Close() error                                   { return b.r.whole("backend close") }

func (b refused) SearchKeyword(context.Context, query.Node, Filter, int) ([]Hit, error) {
	return nil, b.r.whole("keyword search")
}
