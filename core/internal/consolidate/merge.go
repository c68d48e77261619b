package consolidate

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/govern"
	"github.com/memos-go/memos/core/text"
)

// mergeDuplicates finds groups of duplicates (connected by similar pairs)
// and merges each in one transaction.
func (r *run) mergeDuplicates(ctx context.Context) error {
	groups, err := r.duplicates(ctx)
	if err != nil {
		return err
	}
	for _, ids := range groups {
		members := make([]*driver.Memory, len(ids))
		for i, id := range ids {
			members[i] = r.mems[id]
		}
		// The survivor is the most trusted, then the most significant, then
		// the most used, then the oldest.
		slices.SortStableFunc(members, func(a, b *driver.Memory) int {
			return cmp.Or(cmp.Compare(b.Trust.Score, a.Trust.Score), cmp.Compare(b.Significance, a.Significance),
				cmp.Compare(b.AccessCount, a.AccessCount), cmp.Compare(a.ID, b.ID))
		})
		mg := Merge{Survivor: members[0].ID}
		for _, o := range members[1:] {
			mg.Merged = append(mg.Merged, o.ID)
		}
		slices.Sort(mg.Merged)
		if !r.rep.DryRun {
			if err := r.merge(ctx, mg); err != nil {
				return fmt.Errorf("merge into %d: %w", mg.Survivor, err)
			}
		}
		surv := r.mems[mg.Survivor].Clone()
		for _, id := range mg.Merged {
			absorb(surv, r.mems[id])
			delete(r.mems, id)
		}
		r.mems[mg.Survivor] = surv
		r.rep.Merges = append(r.rep.Merges, mg)
	}
	return nil
}

// duplicates returns the groups of duplicates among the plan, each sorted,
// in the order of their lowest id.
func (r *run) duplicates(ctx context.Context) ([][]int64, error) {
	parent := map[int64]int64{}
	var find func(int64) int64
	find = func(x int64) int64 {
		if p, ok := parent[x]; ok && p != x {
			root := find(p)
			parent[x] = root
			return root
		}
		return x
	}
	words := map[int64]map[string]bool{}
	wordsOf := func(m *driver.Memory) map[string]bool {
		if words[m.ID] == nil {
			words[m.ID] = text.TokenSet(m.Content)
		}
		return words[m.ID]
	}
	for _, id := range sortedIDs(r.mems) {
		m := r.mems[id]
		if !consolidatable(m) || m.Embedding.Dim() != r.Model.Dim {
			continue
		}
		hits, err := r.Search(ctx, m.Embedding.Vector, 10, unpaged(r.Namespace))
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			o := r.mems[h.ID]
			if h.ID == id || o == nil || !consolidatable(o) || h.Score < r.cfg.DuplicateSimilarity ||
				text.Jaccard(wordsOf(m), wordsOf(o)) < r.cfg.DuplicateOverlap {
				continue
			}
			a, b := find(id), find(h.ID)
			if a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	byRoot := map[int64][]int64{}
	for id := range parent {
		root := find(id)
		byRoot[root] = append(byRoot[root], id)
	}
	var groups [][]int64
	for _, root := range slices.Sorted(maps.Keys(byRoot)) {
		ids := append(byRoot[root], root)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		if len(ids) >= 2 {
			groups = append(groups, ids)
		}
	}
	return groups, nil
}

// merge writes one merge group in one transaction. A member that is no
// longer active (another process consolidated meanwhile) leaves the group.
func (r *run) merge(ctx context.Context, mg Merge) error {
	return r.Backend.Update(ctx, func(tx driver.Tx) error {
		surv, err := r.Get(tx, mg.Survivor)
		if err != nil || surv.Status != driver.StatusActive {
			return err
		}
		au := govern.NewAuditor(tx, r.Clock)
		next := surv.Clone()
		if next.Metadata == nil {
			next.Metadata = map[string]any{}
		}
		var merged []int64
		var sources []string
		var count int64
		last := surv.LastAccessedAt
		for _, id := range mg.Merged {
			o, err := r.Get(tx, id)
			if err != nil || o.Status != driver.StatusActive {
				continue
			}
			absorb(next, o)
			if o.Source != "" && o.Source != surv.Source && !slices.Contains(sources, o.Source) {
				sources = append(sources, o.Source)
			}
			count += o.AccessCount
			if o.LastAccessedAt.After(last) {
				last = o.LastAccessedAt
			}
			if err := r.archiveDuplicate(tx, au, o, surv.ID); err != nil {
				return err
			}
			merged = append(merged, id)
		}
		if len(merged) == 0 {
			return nil
		}
		next.Metadata[metaMergedFrom] = appendIDs(next.Metadata[metaMergedFrom], merged)
		if len(sources) > 0 {
			next.Metadata[metaMergedSources] = appendStrings(next.Metadata[metaMergedSources], sources)
		}
		if err := r.PutVersion(tx, au, "consolidate.merge.survivor", surv, next, nil); err != nil {
			return err
		}
		// Access counts are not versioned: each Touch adds one.
		for range min(count, 100_000) {
			if err := tx.Touch([]int64{surv.ID}, last); err != nil {
				return err
			}
		}
		if _, err := au.Add("consolidate.merge", surv.ID, map[string]any{"survivor": surv.ID, "merged": merged}); err != nil {
			return err
		}
		return au.Close()
	})
}

// archiveDuplicate archives o as a duplicate of survivor, which is
// derived_from it.
func (r *run) archiveDuplicate(tx driver.Tx, au *govern.Auditor, o *driver.Memory, survivor int64) error {
	arch := o.Clone()
	arch.Status = driver.StatusArchived
	if arch.Metadata == nil {
		arch.Metadata = map[string]any{}
	}
	arch.Metadata[metaArchived] = fmt.Sprintf("duplicate of %d", survivor)
	if err := r.PutVersion(tx, au, "consolidate.merge.archive", o, arch, map[string]any{"duplicate_of": survivor}); err != nil {
		return err
	}
	return tx.Link(driver.Edge{From: survivor, To: o.ID, Type: driver.EdgeDerivedFrom, Weight: 1, CreatedAt: r.Clock(), Source: "consolidate"})
}

// absorb gives the survivor of a merge what it takes from a merged memory
// that later steps (pages) look at: its entities.
func absorb(surv, o *driver.Memory) {
	for _, ent := range o.Entities {
		if !slices.Contains(surv.Entities, ent) {
			surv.Entities = append(surv.Entities, ent)
		}
	}
}

// appendIDs adds ids to a metadata list of ids (as JSON numbers decode).
func appendIDs(v any, ids []int64) []any {
	out, _ := v.([]any)
	for _, id := range ids {
		out = append(out, float64(id))
	}
	return out
}

func appendStrings(v any, ss []string) []any {
	out, _ := v.([]any)
	for _, s := range ss {
		out = append(out, s)
	}
	return out
}
