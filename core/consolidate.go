package core

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memos-go/memos/core/text"
)

// ConsolidateConfig holds the thresholds of consolidation; zero fields take
// the defaults noted (see withDefaults), chosen on the LoCoMo dev turns.
type ConsolidateConfig struct {
	// Two memories are duplicates when their embeddings' cosine is at least
	// DuplicateSimilarity (0.9) and their words' Jaccard overlap at least
	// DuplicateOverlap (0.6).
	DuplicateSimilarity float64 `koanf:"duplicate_similarity" json:"duplicate_similarity"`
	DuplicateOverlap    float64 `koanf:"duplicate_overlap" json:"duplicate_overlap"`
	// A memory is stale when its significance is at most StaleSignificance
	// (2) and it was last used (accessed, else created) more than StaleAfter
	// (4320h, 180 days) ago; or when its validity ended more than StaleAfter
	// ago (it was superseded). Lessons, knowledge pages and memories of
	// significance 7 or more are never stale.
	StaleSignificance int           `koanf:"stale_significance" json:"stale_significance"`
	StaleAfter        time.Duration `koanf:"stale_after" json:"stale_after"`
	// Knowledge pages gather clusters of at least PageMinSize (5) and at most
	// PageMaxSize (20) memories whose embeddings' cosine to the cluster's
	// seed is at least PageSimilarity (0.35, chosen by leave-one-conversation-
	// out on LoCoMo dev; see the README).
	PageMinSize    int     `koanf:"page_min_size" json:"page_min_size"`
	PageMaxSize    int     `koanf:"page_max_size" json:"page_max_size"`
	PageSimilarity float64 `koanf:"page_similarity" json:"page_similarity"`
	// Interval is how often a long-running front-end (memos serve) runs a
	// dream (consolidation with pages) on its own; 0 means never.
	Interval time.Duration `koanf:"interval" json:"interval"`
}

func (c ConsolidateConfig) withDefaults() ConsolidateConfig {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.DuplicateSimilarity, 0.9)
	def(&c.DuplicateOverlap, 0.6)
	def(&c.PageSimilarity, 0.35)
	if c.StaleSignificance == 0 {
		c.StaleSignificance = 2
	}
	if c.StaleAfter == 0 {
		c.StaleAfter = 180 * 24 * time.Hour
	}
	if c.PageMinSize == 0 {
		c.PageMinSize = 5
	}
	if c.PageMaxSize == 0 {
		c.PageMaxSize = 20
	}
	return c
}

func (c ConsolidateConfig) validate() error {
	switch {
	case c.DuplicateSimilarity < 0 || c.DuplicateSimilarity > 1, c.DuplicateOverlap < 0 || c.DuplicateOverlap > 1,
		c.PageSimilarity < 0 || c.PageSimilarity > 1:
		return invalidf("consolidate: similarities and overlaps must be in [0,1]")
	case c.StaleSignificance < 0 || c.StaleSignificance > 10:
		return invalidf("consolidate: stale_significance %d is outside 0–10", c.StaleSignificance)
	case c.StaleAfter < 0 || c.Interval < 0:
		return invalidf("consolidate: stale_after and interval must not be negative")
	case c.PageMinSize < 2 || c.PageMaxSize < c.PageMinSize:
		return invalidf("consolidate: page sizes must satisfy 2 ≤ page_min_size ≤ page_max_size")
	}
	return nil
}

// ConsolidateRequest says what Consolidate does.
type ConsolidateRequest struct {
	// DryRun reports what would change and writes nothing.
	DryRun bool
	// Pages also builds or refreshes knowledge pages (memos dream); it needs
	// a Summarizer (Options.Summarizer) and an embedder.
	Pages bool
}

// ConsolidateReport says what Consolidate did (or, in a dry run, would do).
type ConsolidateReport struct {
	DryRun bool `json:"dry_run,omitempty"`
	// Before and After count the namespace's active memories.
	Before   int           `json:"before"`
	After    int           `json:"after"`
	Merges   []Merge       `json:"merges"`
	Archived []Archival    `json:"archived"`
	Pages    []PageChange  `json:"pages"`
	Took     time.Duration `json:"took_ns"`
	// Notes say what was skipped and why (e.g. no embedder: no duplicates).
	Notes []string `json:"notes,omitempty"`
}

// Merge is one group of duplicates: the survivor keeps the others'
// entities, sources and access counts and is derived_from them; they are
// archived.
type Merge struct {
	Survivor int64   `json:"survivor"`
	Merged   []int64 `json:"merged"`
}

// Archival is a memory archived as stale.
type Archival struct {
	ID     int64  `json:"id"`
	Reason string `json:"reason"`
}

// PageChange is a knowledge page written (created or refreshed) or left
// alone (unchanged).
type PageChange struct {
	ID      int64   `json:"id"` // 0 in a dry run for a new page
	Action  string  `json:"action"`
	Members []int64 `json:"members"`
}

// Metadata keys consolidation writes.
const (
	metaPage          = "page"            // true on a knowledge page
	metaPageMembers   = "page_members"    // the member ids a page stands for
	metaMergedFrom    = "merged_from"     // ids merged into a survivor
	metaMergedSources = "merged_sources"  // their sources
	metaArchived      = "archived_reason" // why consolidation archived a memory
)

// Consolidate tidies this handle's namespace (not the shared default one,
// unless it is the handle's): it merges duplicates, archives stale
// memories and, with req.Pages, distils clusters into knowledge pages. It
// never deletes: merged and stale memories are archived (invisible to
// recall, kept with their history), and every change is a new version with
// an audit entry. Each merge group, each batch of archivals and each page is
// its own transaction, so searches are never blocked for long and an
// interrupted run leaves the store consistent; running again finishes the
// work, and a run with nothing to do writes nothing.
func (e *Engine) Consolidate(ctx context.Context, req ConsolidateRequest) (*ConsolidateReport, error) {
	const op = "consolidate"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	start := time.Now()
	cfg := e.consolidate
	rep := &ConsolidateReport{DryRun: req.DryRun, Merges: []Merge{}, Archived: []Archival{}, Pages: []PageChange{}}
	if req.Pages && (e.summarizer == nil || e.emb == nil) {
		return nil, &Error{Op: op, Err: invalidf("knowledge pages need an embedder and a summarizer")}
	}
	e.flushAccesses() // archiving and merges read the access statistics
	if err := e.syncVectors(ctx); err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	mems, err := e.activeMemories(ctx)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	// mems is the plan: the namespace's active memories as the run leaves
	// them. Each step takes out what it merges or archives and updates what
	// it changes, in a dry run as in the run, so that the steps after it
	// decide on the same memories either way.
	rep.Before = len(mems)
	if e.emb == nil {
		rep.Notes = append(rep.Notes, "no embedder: duplicates are not looked for")
	} else if err := e.mergeDuplicates(ctx, cfg, mems, rep); err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	if err := e.archiveStale(ctx, cfg, mems, rep); err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	removed := rep.Before - len(mems) // merged and archived
	if req.Pages {
		if err := e.buildPages(ctx, cfg, mems, removed, rep); err != nil {
			return rep, &Error{Op: op, Err: err}
		}
	}
	if rep.DryRun {
		rep.After = len(mems)
		for _, p := range rep.Pages {
			if p.Action == "created" {
				rep.After++
			}
		}
		rep.Took = time.Since(start)
		return rep, nil
	}
	if err := e.syncVectors(ctx); err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	after, err := e.activeMemories(ctx)
	if err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	rep.After = len(after)
	rep.Took = time.Since(start)
	return rep, nil
}

// ConsolidateEvery runs Consolidate with req every interval until ctx ends,
// calling report (if not nil) with each run's result; it returns when ctx
// ends, after the run in progress, if any, stops at its next transaction.
// A run that fails is reported and the next one tries again.
func (e *Engine) ConsolidateEvery(ctx context.Context, interval time.Duration, req ConsolidateRequest, report func(*ConsolidateReport, error)) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rep, err := e.Consolidate(ctx, req)
		if report != nil && ctx.Err() == nil {
			report(rep, err)
		}
	}
}

// activeMemories reads the namespace's active memories, by id.
func (e *Engine) activeMemories(ctx context.Context) (map[int64]*Memory, error) {
	out := map[int64]*Memory{}
	err := e.b.View(ctx, func(tx ReadTx) error {
		return tx.Scan(ScanOptions{Filter: Filter{Namespaces: []string{e.ns}, Statuses: []Status{StatusActive}}}, func(m *Memory) error {
			out[m.ID] = m
			return nil
		})
	})
	return out, err
}

// consolidatable reports whether consolidation may merge or archive m:
// lessons and knowledge pages are left alone.
func consolidatable(m *Memory) bool {
	return m.Type != TypeLesson && m.Type != TypeKnowledge && m.Pool != PoolKnowledge
}

func sortedIDs(m map[int64]*Memory) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// mergeDuplicates finds groups of duplicates (connected by similar pairs)
// and merges each in one transaction.
func (e *Engine) mergeDuplicates(ctx context.Context, cfg ConsolidateConfig, mems map[int64]*Memory, rep *ConsolidateReport) error {
	parent := map[int64]int64{}
	var find func(int64) int64
	find = func(x int64) int64 {
		if p, ok := parent[x]; ok && p != x {
			r := find(p)
			parent[x] = r
			return r
		}
		return x
	}
	words := map[int64]map[string]bool{}
	wordsOf := func(m *Memory) map[string]bool {
		if words[m.ID] == nil {
			words[m.ID] = text.TokenSet(m.Content)
		}
		return words[m.ID]
	}
	for _, id := range sortedIDs(mems) {
		m := mems[id]
		if !consolidatable(m) || m.Embedding.Dim() != e.model.Dim {
			continue
		}
		hits, err := e.vec.Search(ctx, m.Embedding.Vector, 10, unpaged(e.ns))
		if err != nil {
			return err
		}
		for _, h := range hits {
			o := mems[h.ID]
			if h.ID == id || o == nil || !consolidatable(o) || h.Score < cfg.DuplicateSimilarity ||
				text.Jaccard(wordsOf(m), wordsOf(o)) < cfg.DuplicateOverlap {
				continue
			}
			a, b := find(id), find(h.ID)
			if a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	groups := map[int64][]int64{}
	for id := range parent {
		r := find(id)
		groups[r] = append(groups[r], id)
	}
	for _, root := range slices.Sorted(maps.Keys(groups)) {
		ids := append(groups[root], root)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		if len(ids) < 2 {
			continue
		}
		members := make([]*Memory, len(ids))
		for i, id := range ids {
			members[i] = mems[id]
		}
		// The survivor is the most trusted, then the most significant, then
		// the most used, then the oldest.
		slices.SortStableFunc(members, func(a, b *Memory) int {
			return cmp.Or(cmp.Compare(b.Trust.Score, a.Trust.Score), cmp.Compare(b.Significance, a.Significance),
				cmp.Compare(b.AccessCount, a.AccessCount), cmp.Compare(a.ID, b.ID))
		})
		mg := Merge{Survivor: members[0].ID}
		for _, o := range members[1:] {
			mg.Merged = append(mg.Merged, o.ID)
		}
		slices.Sort(mg.Merged)
		if !rep.DryRun {
			if err := e.merge(ctx, mg); err != nil {
				return fmt.Errorf("merge into %d: %w", mg.Survivor, err)
			}
		}
		surv := mems[mg.Survivor].Clone()
		for _, id := range mg.Merged {
			absorb(surv, mems[id])
			delete(mems, id)
		}
		mems[mg.Survivor] = surv
		rep.Merges = append(rep.Merges, mg)
	}
	return nil
}

// merge writes one merge group in one transaction. A member that is no
// longer active (another process consolidated meanwhile) leaves the group.
func (e *Engine) merge(ctx context.Context, mg Merge) error {
	return e.b.Update(ctx, func(tx Tx) error {
		surv, err := e.getScoped(tx, mg.Survivor, 0)
		if err != nil || surv.Status != StatusActive {
			return err
		}
		au := e.auditor(tx)
		next := surv.Clone()
		if next.Metadata == nil {
			next.Metadata = map[string]any{}
		}
		var merged []int64
		var sources []string
		var count int64
		last := surv.LastAccessedAt
		for _, id := range mg.Merged {
			o, err := e.getScoped(tx, id, 0)
			if err != nil || o.Status != StatusActive {
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
			arch := o.Clone()
			arch.Status = StatusArchived
			if arch.Metadata == nil {
				arch.Metadata = map[string]any{}
			}
			arch.Metadata[metaArchived] = fmt.Sprintf("duplicate of %d", surv.ID)
			if err := e.putVersion(tx, au, "consolidate.merge.archive", o, arch, map[string]any{"duplicate_of": surv.ID}); err != nil {
				return err
			}
			if err := tx.Link(Edge{From: surv.ID, To: id, Type: EdgeDerivedFrom, Weight: 1, CreatedAt: e.clock(), Source: "consolidate"}); err != nil {
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
		if err := e.putVersion(tx, au, "consolidate.merge.survivor", surv, next, nil); err != nil {
			return err
		}
		// Access counts are not versioned: each Touch adds one.
		for range min(count, 100_000) {
			if err := tx.Touch([]int64{surv.ID}, last); err != nil {
				return err
			}
		}
		if _, err := au.add("consolidate.merge", surv.ID, map[string]any{"survivor": surv.ID, "merged": merged}); err != nil {
			return err
		}
		return au.close()
	})
}

// absorb gives the survivor of a merge what it takes from a merged memory
// that later steps (pages) look at: its entities.
func absorb(surv, o *Memory) {
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

// archiveStale archives the stale memories among mems, 256 per transaction.
func (e *Engine) archiveStale(ctx context.Context, cfg ConsolidateConfig, mems map[int64]*Memory, rep *ConsolidateReport) error {
	now := e.clock()
	cutoff := now.Add(-cfg.StaleAfter)
	var found []Archival
	for _, id := range sortedIDs(mems) {
		m := mems[id]
		if !consolidatable(m) || m.Significance >= 7 {
			continue
		}
		used := m.LastAccessedAt
		if used.IsZero() {
			used = m.CreatedAt
		}
		switch {
		case !m.ValidTo.IsZero() && m.ValidTo.Before(cutoff):
			found = append(found, Archival{id, fmt.Sprintf("its validity ended %s", m.ValidTo.Format(time.DateOnly))})
		case m.Significance <= cfg.StaleSignificance && used.Before(cutoff):
			found = append(found, Archival{id, fmt.Sprintf("significance %d, last used %s", m.Significance, used.Format(time.DateOnly))})
		}
	}
	for start := 0; start < len(found); start += 256 {
		batch := found[start:min(start+256, len(found))]
		if !rep.DryRun {
			err := e.b.Update(ctx, func(tx Tx) error {
				au := e.auditor(tx)
				for _, a := range batch {
					cur, err := e.getScoped(tx, a.ID, 0)
					if err != nil || cur.Status != StatusActive {
						continue
					}
					next := cur.Clone()
					next.Status = StatusArchived
					if next.Metadata == nil {
						next.Metadata = map[string]any{}
					}
					next.Metadata[metaArchived] = "stale: " + a.Reason
					if err := e.putVersion(tx, au, "consolidate.archive", cur, next, map[string]any{"reason": a.Reason}); err != nil {
						return err
					}
				}
				return au.close()
			})
			if err != nil {
				return fmt.Errorf("archive: %w", err)
			}
		}
		rep.Archived = append(rep.Archived, batch...)
	}
	for _, a := range found {
		delete(mems, a.ID)
	}
	return nil
}

// buildPages clusters the active memories the plan mems leaves and writes a
// page for each cluster large enough, refreshing the page that already
// stands for most of the same members. removed counts the memories the
// plan took out: the vector index may still hold them (always in a dry run).
func (e *Engine) buildPages(ctx context.Context, cfg ConsolidateConfig, mems map[int64]*Memory, removed int, rep *ConsolidateReport) error {
	pages := map[int64][]int64{} // existing page → its members
	var seeds []*Memory
	for _, id := range sortedIDs(mems) {
		m := mems[id]
		if m.Type == TypeKnowledge && m.Metadata[metaPage] == true {
			pages[id] = idsOf(m.Metadata[metaPageMembers])
			continue
		}
		if consolidatable(m) && m.Embedding.Dim() == e.model.Dim {
			seeds = append(seeds, m)
		}
	}
	// Seeds in order of significance, then age: important memories gather
	// their neighbours first. Nothing that changes with reading (access
	// counts) decides, so that pages stay put while their members do.
	slices.SortStableFunc(seeds, func(a, b *Memory) int {
		return cmp.Or(cmp.Compare(b.Significance, a.Significance), cmp.Compare(a.ID, b.ID))
	})
	taken := map[int64]bool{}
	var clusters [][]int64
	for _, s := range seeds {
		if taken[s.ID] {
			continue
		}
		// The nearest 3*PageMaxSize memories of the plan, whether or not the
		// index still holds those it took out.
		hits, err := e.vec.Search(ctx, s.Embedding.Vector, 3*cfg.PageMaxSize+removed, unpaged(e.ns))
		if err != nil {
			return err
		}
		members := []int64{s.ID}
		near := 0
		for _, h := range hits {
			m := mems[h.ID]
			if m == nil {
				continue
			}
			if near++; near > 3*cfg.PageMaxSize || len(members) == cfg.PageMaxSize {
				break
			}
			if h.ID == s.ID || taken[h.ID] || !consolidatable(m) || h.Score < cfg.PageSimilarity || !shareEntity(s, m) {
				continue
			}
			members = append(members, h.ID)
		}
		if len(members) < cfg.PageMinSize {
			continue
		}
		for _, id := range members {
			taken[id] = true
		}
		slices.Sort(members)
		clusters = append(clusters, members)
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
		if change.Action != "unchanged" && !rep.DryRun {
			id, err := e.writePage(ctx, page, members, mems)
			if err != nil {
				return fmt.Errorf("page for %v: %w", members, err)
			}
			change.ID = id
		}
		rep.Pages = append(rep.Pages, change)
	}
	return nil
}

// unpaged filters vector searches to namespace ns outside the knowledge
// pool, so that pages never crowd their own members out of a search.
func unpaged(ns string) VectorFilter {
	return VectorFilter{Namespaces: []string{ns}, Pools: []Pool{PoolRaw, PoolMemory}}
}

// shareEntity reports whether a and b name a common entity (case
// insensitive), or either names none.
func shareEntity(a, b *Memory) bool {
	if len(a.Entities) == 0 || len(b.Entities) == 0 {
		return true
	}
	for _, x := range a.Entities {
		for _, y := range b.Entities {
			if strings.EqualFold(x, y) {
				return true
			}
		}
	}
	return false
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
// member), in one transaction.
func (e *Engine) writePage(ctx context.Context, page int64, members []int64, mems map[int64]*Memory) (int64, error) {
	items := make([]SummaryItem, len(members))
	entities := map[string]int{}
	sig := 1
	for i, id := range members {
		m := mems[id]
		items[i] = SummaryItem{ID: id, Content: m.Content, Vector: m.Embedding.Vector}
		for _, ent := range m.Entities {
			entities[ent]++
		}
		sig = max(sig, m.Significance)
	}
	text, err := e.summarizer.Summarize(ctx, items)
	if err != nil {
		return 0, fmt.Errorf("summarize: %w", err)
	}
	top := make([]string, 0, len(entities))
	for ent := range entities {
		top = append(top, ent)
	}
	sort.SliceStable(top, func(i, j int) bool {
		if entities[top[i]] != entities[top[j]] {
			return entities[top[i]] > entities[top[j]]
		}
		return top[i] < top[j]
	})
	top = top[:min(len(top), 8)]
	var b strings.Builder
	fmt.Fprintf(&b, "Knowledge page")
	if len(top) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(top, ", "))
	}
	b.WriteString("\n")
	if text != "" {
		b.WriteString(text)
		b.WriteString("\n")
	}
	cites := make([]string, len(members))
	for i, id := range members {
		cites[i] = fmt.Sprintf("#%d", id)
	}
	fmt.Fprintf(&b, "Stands for %d memories: %s", len(members), strings.Join(cites, ", "))
	content := b.String()
	if len(content) > MaxContentBytes {
		content = content[:MaxContentBytes]
	}
	vs, err := e.embed(ctx, []string{content})
	if err != nil {
		return 0, err
	}
	memberList := make([]any, len(members))
	for i, id := range members {
		memberList[i] = float64(id)
	}
	var id int64
	err = e.b.Update(ctx, func(tx Tx) error {
		m := &Memory{
			Version: 1, Namespace: e.ns, Pool: PoolKnowledge, Type: TypeKnowledge, Content: content,
			Significance: min(sig, 8), Entities: top, Source: "dream",
			Trust: Trust{Level: TrustInferred, Score: TrustInferred.DefaultScore()}, Status: StatusActive,
			Metadata: map[string]any{metaPage: true, metaPageMembers: memberList},
		}
		if vs != nil {
			m.Embedding = Embedding{Model: e.model.ID, Vector: vs[0]}
		}
		action := "dream.page.create"
		au := e.auditor(tx)
		if page == 0 {
			m.CreatedAt = e.clock()
			m.UpdatedAt = m.CreatedAt
			if err := tx.Insert(m); err != nil {
				return err
			}
			if _, err := au.bind(action, m, map[string]any{"members": members}); err != nil {
				return err
			}
		} else {
			cur, err := e.getScoped(tx, page, 0)
			if err != nil {
				return err
			}
			old, err := tx.Edges(page)
			if err != nil {
				return err
			}
			for _, ed := range old {
				if ed.From == page && ed.Type == EdgeDerivedFrom && !slices.Contains(members, ed.To) {
					if err := tx.Unlink(ed.From, ed.To, ed.Type); err != nil {
						return err
					}
				}
			}
			action = "dream.page.refresh"
			if err := e.putVersion(tx, au, action, cur, m, map[string]any{"members": members}); err != nil {
				return err
			}
		}
		id = m.ID
		for _, mid := range members {
			if err := tx.Link(Edge{From: m.ID, To: mid, Type: EdgeDerivedFrom, Weight: 1, CreatedAt: e.clock(), Source: "dream"}); err != nil {
				return err
			}
		}
		return au.close()
	})
	return id, err
}
