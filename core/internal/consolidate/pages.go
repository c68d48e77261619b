package consolidate

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/govern"
)

// buildPages clusters the active memories the plan leaves and writes a
// page for each cluster large enough, refreshing the page that already
// stands for most of the same members. removed counts the memories the
// plan took out: the vector index may still hold them (always in a dry run).
func (r *run) buildPages(ctx context.Context, removed int) error {
	pages, seeds := r.pagesAndSeeds()
	clusters, err := r.clusters(ctx, seeds, removed)
	if err != nil {
		return err
	}
	used := map[int64]bool{}
	for _, members := range clusters {
		page, best := int64(0), 0.0
		for _, pid := range slices.Sorted(maps.Keys(pages)) {
			if used[pid] {
				continue
			}
			if j := idJaccard(pages[pid], members); j >= 0.5 && j > best {
				page, best = pid, j
			}
		}
		change := PageChange{ID: page, Action: "created", Members: members}
		switch {
		case page != 0 && slices.Equal(pages[page], members):
			change.Action = "unchanged"
		case page != 0:
			change.Action = "refreshed"
		}
		if page != 0 {
			used[page] = true
		}
		if change.Action != "unchanged" && !r.rep.DryRun {
			id, err := r.writePage(ctx, page, members)
			if err != nil {
				return fmt.Errorf("page for %v: %w", members, err)
			}
			change.ID = id
		}
		r.rep.Pages = append(r.rep.Pages, change)
	}
	return nil
}

// pagesAndSeeds returns the plan's knowledge pages (page → its members)
// and the memories that may seed a cluster, in order of significance, then
// age: important memories gather their neighbours first. Nothing that
// changes with reading (access counts) decides, so that pages stay put
// while their members do.
func (r *run) pagesAndSeeds() (map[int64][]int64, []*driver.Memory) {
	pages := map[int64][]int64{}
	var seeds []*driver.Memory
	for _, id := range sortedIDs(r.mems) {
		m := r.mems[id]
		if m.Type == driver.TypeKnowledge && m.Metadata[metaPage] == true {
			pages[id] = idsOf(m.Metadata[metaPageMembers])
			continue
		}
		if consolidatable(m) && m.Embedding.Dim() == r.Model.Dim {
			seeds = append(seeds, m)
		}
	}
	slices.SortStableFunc(seeds, func(a, b *driver.Memory) int {
		return cmp.Or(cmp.Compare(b.Significance, a.Significance), cmp.Compare(a.ID, b.ID))
	})
	return pages, seeds
}

// clusters gathers around each seed not yet taken the memories of the plan
// near it, and returns the clusters large enough for a page, each sorted.
func (r *run) clusters(ctx context.Context, seeds []*driver.Memory, removed int) ([][]int64, error) {
	taken := map[int64]bool{}
	var clusters [][]int64
	for _, s := range seeds {
		if taken[s.ID] {
			continue
		}
		// The nearest 3*PageMaxSize memories of the plan, whether or not the
		// index still holds those it took out.
		hits, err := r.Search(ctx, s.Embedding.Vector, 3*r.cfg.PageMaxSize+removed, unpaged(r.Namespace))
		if err != nil {
			return nil, err
		}
		members := []int64{s.ID}
		near := 0
		for _, h := range hits {
			m := r.mems[h.ID]
			if m == nil {
				continue
			}
			if near++; near > 3*r.cfg.PageMaxSize || len(members) == r.cfg.PageMaxSize {
				break
			}
			if h.ID == s.ID || taken[h.ID] || !consolidatable(m) || h.Score < r.cfg.PageSimilarity || !govern.ShareEntity(s, m) {
				continue
			}
			members = append(members, h.ID)
		}
		if len(members) < r.cfg.PageMinSize {
			continue
		}
		for _, id := range members {
			taken[id] = true
		}
		slices.Sort(members)
		clusters = append(clusters, members)
	}
	return clusters, nil
}

func idJaccard(a, b []int64) float64 {
	inter := 0
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); ok {
			inter++
		}
	}
	u := len(a) + len(b) - inter
	if u == 0 {
		return 0
	}
	return float64(inter) / float64(u)
}

func idsOf(v any) []int64 {
	list, _ := v.([]any)
	out := make([]int64, 0, len(list))
	for _, x := range list {
		if f, ok := x.(float64); ok {
			out = append(out, int64(f))
		}
	}
	slices.Sort(out)
	return out
}

// writePage writes a new page (page 0) or the next version of page, for
// members, with a derived_from edge to every member (and none to a former
// member), in one transaction, and returns its id.
func (r *run) writePage(ctx context.Context, page int64, members []int64) (int64, error) {
	made, err := r.pageMemory(ctx, members)
	if err != nil {
		return 0, err
	}
	var id int64
	err = r.Backend.Update(ctx, func(tx driver.Tx) error {
		m := made.Clone() // the transaction stamps it
		au := govern.NewAuditor(tx, r.Clock)
		if page == 0 {
			if err := r.createPage(tx, au, m, members); err != nil {
				return err
			}
		} else if err := r.refreshPage(tx, au, page, m, members); err != nil {
			return err
		}
		for _, mid := range members {
			if err := tx.Link(driver.Edge{From: m.ID, To: mid, Type: driver.EdgeDerivedFrom, Weight: 1, CreatedAt: r.Clock(), Source: "dream"}); err != nil {
				return err
			}
		}
		id = m.ID
		return au.Close()
	})
	return id, err
}

// pageMemory makes the page for members, embedded, not yet stored: the
// summarizer's text under a heading of the members' most named entities,
// and the members it stands for.
func (r *run) pageMemory(ctx context.Context, members []int64) (*driver.Memory, error) {
	items := make([]driver.SummaryItem, len(members))
	entities := map[string]int{}
	sig := 1
	for i, id := range members {
		m := r.mems[id]
		items[i] = driver.SummaryItem{ID: id, Content: m.Content, Vector: m.Embedding.Vector}
		for _, ent := range m.Entities {
			entities[ent]++
		}
		sig = max(sig, m.Significance)
	}
	summary, err := r.Summarizer.Summarize(ctx, items)
	if err != nil {
		return nil, fmt.Errorf("summarize: %w", err)
	}
	top := topEntities(entities, 8)
	content := pageContent(top, summary, members)
	vs, err := r.Embed(ctx, []string{content})
	if err != nil {
		return nil, err
	}
	memberList := make([]any, len(members))
	for i, id := range members {
		memberList[i] = float64(id)
	}
	m := &driver.Memory{
		Version: 1, Namespace: r.Namespace, Pool: driver.PoolKnowledge, Type: driver.TypeKnowledge, Content: content,
		Significance: min(sig, 8), Entities: top, Source: "dream",
		Trust: driver.Trust{Level: driver.TrustInferred, Score: driver.TrustInferred.DefaultScore()}, Status: driver.StatusActive,
		Metadata: map[string]any{metaPage: true, metaPageMembers: memberList},
	}
	if vs != nil {
		m.Embedding = driver.Embedding{Model: r.Model.ID, Vector: vs[0]}
	}
	return m, nil
}

// topEntities returns the n entities named most often (ties by name).
func topEntities(count map[string]int, n int) []string {
	top := make([]string, 0, len(count))
	for ent := range count {
		top = append(top, ent)
	}
	sort.SliceStable(top, func(i, j int) bool {
		if count[top[i]] != count[top[j]] {
			return count[top[i]] > count[top[j]]
		}
		return top[i] < top[j]
	})
	return top[:min(len(top), n)]
}

// pageContent is a page's text: a heading naming its entities, the
// summary, and the members it stands for, cut at MaxContentBytes.
func pageContent(entities []string, summary string, members []int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Knowledge page")
	if len(entities) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(entities, ", "))
	}
	b.WriteString("\n")
	if summary != "" {
		b.WriteString(summary)
		b.WriteString("\n")
	}
	cites := make([]string, len(members))
	for i, id := range members {
		cites[i] = fmt.Sprintf("#%d", id)
	}
	fmt.Fprintf(&b, "Stands for %d memories: %s", len(members), strings.Join(cites, ", "))
	content := b.String()
	if len(content) > driver.MaxContentBytes {
		content = content[:driver.MaxContentBytes]
	}
	return content
}

// createPage stores m as a new page.
func (r *run) createPage(tx driver.Tx, au *govern.Auditor, m *driver.Memory, members []int64) error {
	m.CreatedAt = r.Clock()
	m.UpdatedAt = m.CreatedAt
	if err := tx.Insert(m); err != nil {
		return err
	}
	_, err := au.Bind("dream.page.create", m, map[string]any{"members": members})
	return err
}

// refreshPage writes m as the next version of page, unlinking the members
// it no longer stands for.
func (r *run) refreshPage(tx driver.Tx, au *govern.Auditor, page int64, m *driver.Memory, members []int64) error {
	cur, err := r.Get(tx, page)
	if err != nil {
		return err
	}
	old, err := tx.Edges(page)
	if err != nil {
		return err
	}
	for _, ed := range old {
		if ed.From == page && ed.Type == driver.EdgeDerivedFrom && !slices.Contains(members, ed.To) {
			if err := tx.Unlink(ed.From, ed.To, ed.Type); err != nil {
				return err
			}
		}
	}
	return r.PutVersion(tx, au, "dream.page.refresh", cur, m, map[string]any{"members": members})
}
