package govern

import (
	"context"
	"errors"
	"slices"

	"github.com/memos-go/memos/core/driver"
)

// SourceClosure is what forget-source takes from a source: the memories
// whose source matches (Matched), those derived from them that go with
// them (Derived), and those derived from them that stay (Kept).
type SourceClosure struct {
	Matched, Derived, Kept []int64
}

// CloseOverSource finds, through tx, the memories of namespaces nss whose
// source matches source (SourceMatches) and the memories derived from
// them. Derived is the largest set of memories reachable from the
// matching ones over incoming derived_from edges in which every member is
// derived only from matching memories or members (with strict: every
// reachable memory). So a cycle of derived_from edges that hangs off the
// source goes with it, and a memory that is also derived from something
// that stays is kept, with everything derived from it alone. A reachable
// memory for which may is false (out of the caller's scope) is neither
// taken nor followed.
func CloseOverSource(ctx context.Context, tx driver.ReadTx, source string, strict bool, nss []string, may func(*driver.Memory) bool) (*SourceClosure, error) {
	c := &SourceClosure{}
	matched := map[int64]bool{}
	err := tx.Scan(driver.ScanOptions{Filter: driver.Filter{Namespaces: nss}}, func(m *driver.Memory) error {
		if SourceMatches(m.Source, source) {
			matched[m.ID] = true
			c.Matched = append(c.Matched, m.ID)
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	w := &derivation{tx: tx, may: may, matched: matched, targets: map[int64][]int64{}, reach: map[int64]bool{}}
	if err := w.walk(ctx, c.Matched); err != nil {
		return nil, err
	}
	kept := w.keep(strict)
	for _, id := range w.order {
		if w.reach[id] {
			c.Derived = append(c.Derived, id)
		}
	}
	for id := range kept {
		c.Kept = append(c.Kept, id)
	}
	slices.Sort(c.Kept)
	return c, nil
}

// derivation is the walk over the memories derived from the matching ones.
type derivation struct {
	tx      driver.ReadTx
	may     func(*driver.Memory) bool
	matched map[int64]bool
	targets map[int64][]int64 // a reached memory → what it is derived from
	reach   map[int64]bool
	order   []int64 // reached memories, in the order reached
}

// walk visits the memories derived from frontier, breadth first, noting
// each one's derived_from targets.
func (w *derivation) walk(ctx context.Context, frontier []int64) error {
	frontier = slices.Clone(frontier)
	for len(frontier) > 0 {
		var next []int64
		for _, id := range frontier {
			edges, err := w.tx.Edges(id)
			if err != nil {
				return err
			}
			for _, ed := range edges {
				child := ed.From
				if ed.Type != driver.EdgeDerivedFrom || ed.To != id || w.matched[child] || w.reach[child] {
					continue
				}
				ok, err := w.visit(child)
				if err != nil {
					return err
				}
				if ok {
					next = append(next, child)
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		frontier = next
	}
	return nil
}

// visit reaches child, noting its derived_from targets, unless it is gone
// or out of scope.
func (w *derivation) visit(child int64) (bool, error) {
	m, err := w.tx.Get(child, 0)
	if errors.Is(err, driver.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !w.may(m) {
		return false, nil
	}
	ces, err := w.tx.Edges(child)
	if err != nil {
		return false, err
	}
	for _, ce := range ces {
		if ce.Type == driver.EdgeDerivedFrom && ce.From == child {
			w.targets[child] = append(w.targets[child], ce.To)
		}
	}
	w.reach[child] = true
	w.order = append(w.order, child)
	return true, nil
}

// keep takes out of reach, unless strict, every memory derived from one
// that stays, until none is, and returns those it took out.
func (w *derivation) keep(strict bool) map[int64]bool {
	kept := map[int64]bool{}
	for changed := !strict; changed; {
		changed = false
		for _, id := range w.order {
			if !w.reach[id] {
				continue
			}
			for _, t := range w.targets[id] {
				if !w.matched[t] && !w.reach[t] {
					delete(w.reach, id)
					kept[id], changed = true, true
					break
				}
			}
		}
	}
	return kept
}
