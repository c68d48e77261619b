package retrieve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// This file is the validity stage and the two clocks of a search.
//
// Event time: a memory is visible only when its valid_from/valid_to
// interval contains the request's ValidAt (default now).
//
// Ingest time: a search AsOf T sees each memory at the version that was
// current at T — the last version whose UpdatedAt is not after T — and does
// not see memories created after T. The indexes only know current versions,
// so an AsOf search also rewinds: it reads the memories of the scope whose
// current version was written after T (from the backend's index of update
// times, UpdateReader, or else by scanning the scope),
// finds their version at T in History, and evaluates the query against that
// version in memory: the keyword query with package core/text (the same
// tokens, stems and operators as the index) and the query vector against
// the version's stored embedding. Index hits for those memories, which
// matched content written after T, are discarded. The old versions that
// match the keyword query have no index score; they form a third ranked
// list (by how many of the query's terms they contain) that fusion weighs
// like the keyword list.

// view is a memory as seen at a search's clocks.
type view struct {
	m   *driver.Memory // nil: not visible
	why string         // why not visible
}

// load resolves every candidate at the request's clocks; those not
// visible keep mem nil and record why.
func (p *Pipeline) load(ctx context.Context) error {
	return p.d.Store.View(ctx, func(tx driver.ReadTx) error {
		ids := make([]int64, len(p.cands))
		for i, c := range p.cands {
			ids[i] = c.id
		}
		if err := p.prefetch(tx, ids); err != nil {
			return err
		}
		for _, c := range p.cands {
			m, why, err := p.resolve(tx, c.id)
			if err != nil {
				return err
			}
			c.mem, c.filtered = m, why
		}
		return nil
	})
}

// prefetch reads the current version of every one of ids not resolved yet
// in one call when the backend can (MultiGetter), instead of one Get each
// in resolve.
func (p *Pipeline) prefetch(tx driver.ReadTx, ids []int64) error {
	mg, ok := tx.(driver.MultiGetter)
	if !ok {
		return nil
	}
	var need []int64
	for _, id := range ids {
		_, done := p.views[id]
		_, fetched := p.current[id]
		if !done && !fetched {
			need = append(need, id)
		}
	}
	if len(need) == 0 {
		return nil
	}
	got, err := mg.GetMany(need)
	if err != nil {
		return err
	}
	if p.current == nil {
		p.current = make(map[int64]*driver.Memory, len(need))
	}
	for _, id := range need {
		p.current[id] = got[id] // nil: forgotten
	}
	return nil
}

// resolve returns memory id as seen at the request's clocks, or nil and the
// reason it is not visible: forgotten, out of scope, inactive, outside the
// pool or type filter, not valid at ValidAt, or created after AsOf.
func (p *Pipeline) resolve(tx driver.ReadTx, id int64) (*driver.Memory, string, error) {
	if v, ok := p.views[id]; ok {
		return v.m, v.why, nil
	}
	m, why, err := p.resolveUncached(tx, id)
	if err != nil {
		return nil, "", err
	}
	p.views[id] = view{m, why}
	return m, why, nil
}

func (p *Pipeline) resolveUncached(tx driver.ReadTx, id int64) (*driver.Memory, string, error) {
	var m *driver.Memory
	if old, ok := p.changed[id]; ok {
		m = old
	} else {
		cur, fetched := p.current[id]
		var err error
		if !fetched {
			cur, err = tx.Get(id, 0)
		} else if cur == nil {
			err = driver.ErrNotFound
		}
		if errors.Is(err, driver.ErrNotFound) {
			return nil, "forgotten", nil
		}
		if err != nil {
			return nil, "", err
		}
		m = cur
		if !p.asOf.IsZero() && cur.UpdatedAt.After(p.asOf) {
			// Written after the scan of rewind (or not scanned: an expansion).
			if m, err = versionAt(tx, cur, p.asOf); err != nil {
				return nil, "", err
			}
		}
	}
	if m == nil {
		return nil, "created after " + p.asOf.Format(time.RFC3339), nil
	}
	if why := p.visible(m); why != "" {
		return nil, why, nil
	}
	return m, "", nil
}

// visible returns why m (a version at the request's clocks) is not
// visible, or "".
func (p *Pipeline) visible(m *driver.Memory) string {
	f := p.filter
	switch {
	case !slices.Contains(f.Namespaces, m.Namespace):
		return "namespace " + m.Namespace + " out of scope"
	case !slices.Contains(f.Statuses, m.Status):
		return "status " + string(m.Status)
	case f.Pools != nil && !slices.Contains(f.Pools, m.Pool):
		return "pool " + string(m.Pool) + " not searched"
	case f.Types != nil && !slices.Contains(f.Types, m.Type):
		return "type " + string(m.Type) + " not searched"
	case !m.ValidAt(p.validAt):
		return fmt.Sprintf("not valid at %s (valid %s)", p.validAt.Format(time.RFC3339), Interval(m))
	}
	return ""
}

// Interval renders m's validity interval for messages.
func Interval(m *driver.Memory) string {
	from, to := "always", "open"
	if !m.ValidFrom.IsZero() {
		from = m.ValidFrom.Format(time.RFC3339)
	}
	if !m.ValidTo.IsZero() {
		to = m.ValidTo.Format(time.RFC3339)
	}
	return from + " – " + to
}

// versionAt returns the version of memory cur (its current version) that
// was current at t, or nil when the memory was created after t.
func versionAt(tx driver.ReadTx, cur *driver.Memory, t time.Time) (*driver.Memory, error) {
	if cur.CreatedAt.After(t) {
		return nil, nil
	}
	if !cur.UpdatedAt.After(t) {
		return cur, nil
	}
	hist, err := tx.History(cur.ID)
	if err != nil {
		return nil, err
	}
	var at *driver.Memory
	for _, v := range hist {
		if !v.UpdatedAt.After(t) {
			at = v
		}
	}
	return at, nil
}

// rewind adapts the index hits of an AsOf search: it finds the memories
// changed after AsOf (see the comment at the top of this file), drops
// their index hits, and returns the keyword and vector lists without them,
// the vector list merged with the similarities of their old versions, and
// the list of old versions that match the keyword query.
func (p *Pipeline) rewind(ctx context.Context, kw, vec []driver.Hit, qvec []float32, n int) (kwOut, vecOut, hist []driver.Hit, err error) {
	p.changed = map[int64]*driver.Memory{}
	type histHit struct {
		id     int64
		leaves int
	}
	var hh []histHit
	var kwq *text.Query
	if p.kwq != nil {
		if kwq, err = query.Compile(p.kwq); err != nil {
			return nil, nil, nil, driver.Invalidf("search as of %s: %v", p.asOf.Format(time.RFC3339), err)
		}
	}
	nIndex := len(vec) // vec[:nIndex] are index hits, the rest old versions'
	err = p.d.Store.View(ctx, func(tx driver.ReadTx) error {
		later, err := updatedAfter(ctx, tx, p.filter.Namespaces, p.asOf)
		if err != nil {
			return err
		}
		for _, cur := range later {
			old, err := versionAt(tx, cur, p.asOf)
			if err != nil {
				return err
			}
			p.changed[cur.ID] = old
			if old == nil || p.visible(old) != "" {
				continue
			}
			if kwq != nil {
				d := text.NewDoc(old.Content)
				if kwq.Match(d) {
					hh = append(hh, histHit{old.ID, len(kwq.Leaves(d))})
				}
			}
			if qvec != nil && old.Embedding.Model == p.d.Model && old.Embedding.Dim() == len(qvec) {
				v := append([]float32(nil), old.Embedding.Vector...)
				driver.Normalize(v)
				vec = append(vec, driver.Hit{ID: old.ID, Score: dot(qvec, v)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	keep := func(hs []driver.Hit) []driver.Hit {
		var out []driver.Hit
		for _, h := range hs {
			if _, ch := p.changed[h.ID]; !ch {
				out = append(out, h)
			}
		}
		return out
	}
	kwOut = keep(kw)
	// Index hits of changed memories go; their old versions' hits stay.
	vecOut = append(keep(vec[:nIndex]), vec[nIndex:]...)
	sort.SliceStable(vecOut, func(i, j int) bool {
		if vecOut[i].Score != vecOut[j].Score {
			return vecOut[i].Score > vecOut[j].Score
		}
		return vecOut[i].ID < vecOut[j].ID
	})
	if len(vecOut) > n {
		vecOut = vecOut[:n]
	}
	sort.SliceStable(hh, func(i, j int) bool {
		if hh[i].leaves != hh[j].leaves {
			return hh[i].leaves > hh[j].leaves
		}
		return hh[i].id < hh[j].id
	})
	for _, h := range hh {
		hist = append(hist, driver.Hit{ID: h.id, Score: float64(h.leaves)})
	}
	return kwOut, vecOut, hist, nil
}

// updatedAfter returns the memories of namespaces whose current version was
// written after t, in ascending id order, without their vectors (not
// needed: an old version has its own). A backend that indexes update times
// (UpdateReader) reads only those; for any other, the scope is scanned.
func updatedAfter(ctx context.Context, tx driver.ReadTx, namespaces []string, t time.Time) ([]*driver.Memory, error) {
	var later []*driver.Memory
	add := func(m *driver.Memory) error {
		if m.UpdatedAt.After(t) {
			m.Embedding.Vector = nil
			later = append(later, m)
		}
		return ctx.Err()
	}
	var err error
	if ur, ok := tx.(driver.UpdateReader); ok {
		err = ur.UpdatedAfter(namespaces, t, add)
		slices.SortFunc(later, func(a, b *driver.Memory) int { return cmp.Compare(a.ID, b.ID) })
	} else {
		err = tx.Scan(driver.ScanOptions{Filter: driver.Filter{Namespaces: namespaces}}, add)
	}
	if err != nil {
		return nil, fmt.Errorf("memories changed after %s: %w", t.Format(time.RFC3339Nano), err)
	}
	return later, nil
}

// dot is the dot product of two vectors of equal length.
func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// utc is t in UTC without a monotonic reading; the zero time stays zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Round(0)
}
