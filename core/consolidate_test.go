package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/provider/summarize"
	"github.com/memos-go/memos/embedders/hash"
)

// settableClock is a clock a test moves by hand.
type settableClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *settableClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func (c *settableClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openDream opens an engine with the extractive summarizer on backend in a
// fresh directory.
func openDream(t testing.TB, backend string, clock *settableClock) *core.Engine {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	var b core.Backend
	var err error
	if backend == "bolt" {
		b, err = bolt.Open(ctx, bolt.Config{Path: filepath.Join(dir, "memory.bolt")})
	} else {
		b, err = sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "memory.db")})
	}
	if err != nil {
		t.Fatal(err)
	}
	emb, _ := hash.Open(ctx, hash.Config{})
	sum, _ := summarize.OpenExtractive(ctx, summarize.ExtractiveConfig{})
	e, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb, Summarizer: sum, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func seq(t testing.TB, e *core.Engine) uint64 {
	t.Helper()
	var s uint64
	if err := e.Backend().View(context.Background(), func(tx core.ReadTx) error {
		var err error
		s, err = tx.Seq()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConsolidate(t *testing.T) {
	for _, backend := range []string{"sqlite", "bolt"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			clock := &settableClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			e := openDream(t, backend, clock)
			certain, low := 1.0, 0.5
			keep := remember(t, e, core.Input{Content: "Alice's home lab runs Proxmox on three nodes", Entities: []string{"Alice"},
				TrustLevel: core.TrustCertain, TrustScore: &certain, Source: "chat:1"})
			dup := remember(t, e, core.Input{Content: "Alice's home lab runs Proxmox on three nodes.", Entities: []string{"Proxmox"},
				TrustScore: &low, Source: "chat:2"})
			if _, err := e.Search(ctx, core.SearchRequest{Query: "proxmox"}); err != nil { // access counts
				t.Fatal(err)
			}
			passing := remember(t, e, core.Input{Content: "It rained a little on the way to work", Significance: 1})
			key := remember(t, e, core.Input{Content: "Alice's passport number is kept in the safe", Significance: 8})
			lesson := remember(t, e, core.Input{Content: "Always ask before deleting files", Type: core.TypeLesson, Significance: 1})
			clock.advance(200 * 24 * time.Hour)

			// A dry run reports and writes nothing.
			before := seq(t, e)
			dry, err := e.Consolidate(ctx, core.ConsolidateRequest{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(dry.Merges) != 1 || len(dry.Archived) != 1 || seq(t, e) != before {
				t.Fatalf("dry run: %+v (seq %d → %d)", dry, before, seq(t, e))
			}
			rep, err := e.Consolidate(ctx, core.ConsolidateRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Merges) != 1 || rep.Merges[0].Survivor != keep.ID || !slices.Equal(rep.Merges[0].Merged, []int64{dup.ID}) {
				t.Fatalf("merges %+v", rep.Merges)
			}
			if len(rep.Archived) != 1 || rep.Archived[0].ID != passing.ID || rep.Before != 5 || rep.After != 3 {
				t.Fatalf("report %+v", rep)
			}
			surv, _ := e.Get(ctx, keep.ID)
			if surv.Version != 2 || !slices.Contains(surv.Entities, "Proxmox") || surv.AccessCount < 2 ||
				!strings.Contains(fmt.Sprint(surv.Metadata["merged_sources"]), "chat:2") {
				t.Fatalf("survivor %+v", surv)
			}
			gone, _ := e.Get(ctx, dup.ID)
			if gone.Status != core.StatusArchived {
				t.Fatalf("the duplicate is %s", gone.Status)
			}
			if h, _ := e.History(ctx, dup.ID); len(h) != 2 || h[0].Status != core.StatusActive {
				t.Fatalf("the duplicate's history: %d versions", len(h))
			}
			edges, _ := e.Edges(ctx, keep.ID)
			if len(edges) != 1 || edges[0].Type != core.EdgeDerivedFrom || edges[0].To != dup.ID {
				t.Fatalf("survivor edges %+v", edges)
			}
			for _, id := range []int64{key.ID, lesson.ID} {
				if m, _ := e.Get(ctx, id); m.Status != core.StatusActive {
					t.Fatalf("memory %d (significance ≥ 7 or a lesson) was archived", id)
				}
			}
			res, _ := e.Search(ctx, core.SearchRequest{Query: "proxmox nodes"})
			if len(res.Hits) != 1 || res.Hits[0].Memory.ID != keep.ID {
				t.Fatalf("search after the merge: %+v", res.Hits)
			}
			entries, err := e.Audit(ctx, core.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			var actions []string
			for _, a := range entries {
				actions = append(actions, a.Action)
			}
			if !slices.Contains(actions, "consolidate.merge") || !slices.Contains(actions, "consolidate.archive") {
				t.Fatalf("audit actions %v", actions)
			}
			if _, err := e.VerifyAudit(ctx); err != nil {
				t.Fatal(err)
			}
			// Idempotent: nothing left to do, nothing written.
			before = seq(t, e)
			again, err := e.Consolidate(ctx, core.ConsolidateRequest{})
			if err != nil || len(again.Merges)+len(again.Archived) != 0 || seq(t, e) != before {
				t.Fatalf("second run: %+v, %v", again, err)
			}
		})
	}
}

func TestDreamPages(t *testing.T) {
	for _, backend := range []string{"sqlite", "bolt"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			clock := &settableClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			e := openDream(t, backend, clock)
			lab := []string{
				"Alice's home lab runs Proxmox on three nodes in the basement",
				"Alice's home lab runs Proxmox on old Dell nodes bought second hand",
				"Alice's home lab backs up the Proxmox nodes to a NAS every night",
				"Alice's home lab has a fast switch between the Proxmox nodes",
				"Alice's home lab will get a fourth Proxmox node next year",
			}
			var ids []int64
			for _, c := range lab {
				ids = append(ids, remember(t, e, core.Input{Content: c, Entities: []string{"Alice"}}).ID)
			}
			remember(t, e, core.Input{Content: "Bob plays the cello in an orchestra", Entities: []string{"Bob"}})
			rep, err := e.Consolidate(ctx, core.ConsolidateRequest{Pages: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Pages) != 1 || rep.Pages[0].Action != "created" || !slices.Equal(rep.Pages[0].Members, ids) {
				t.Fatalf("pages %+v", rep.Pages)
			}
			page, err := e.Get(ctx, rep.Pages[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if page.Pool != core.PoolKnowledge || page.Type != core.TypeKnowledge || !strings.Contains(page.Content, fmt.Sprintf("#%d", ids[0])) {
				t.Fatalf("page %+v", page)
			}
			edges, _ := e.Edges(ctx, page.ID)
			if len(edges) != len(ids) {
				t.Fatalf("the page has %d edges, want one derived_from per member", len(edges))
			}
			res, _ := e.Search(ctx, core.SearchRequest{Query: "alice's home lab", Pools: []core.Pool{core.PoolKnowledge}})
			if len(res.Hits) != 1 || res.Hits[0].Memory.ID != page.ID {
				t.Fatalf("search in the knowledge pool: %+v", res.Hits)
			}
			// Unchanged members: the page is left alone.
			before := seq(t, e)
			again, err := e.Consolidate(ctx, core.ConsolidateRequest{Pages: true})
			if err != nil || len(again.Pages) != 1 || again.Pages[0].Action != "unchanged" || seq(t, e) != before {
				t.Fatalf("second dream: %+v, %v", again, err)
			}
			// A new member: the same page is refreshed as a new version.
			ids = append(ids, remember(t, e, core.Input{Content: "Alice's home lab runs the Proxmox nodes on solar power", Entities: []string{"Alice"}}).ID)
			third, err := e.Consolidate(ctx, core.ConsolidateRequest{Pages: true})
			if err != nil || len(third.Pages) != 1 || third.Pages[0].Action != "refreshed" || third.Pages[0].ID != page.ID {
				t.Fatalf("third dream: %+v, %v", third, err)
			}
			if p, _ := e.Get(ctx, page.ID); p.Version != 2 || !strings.Contains(p.Content, fmt.Sprintf("#%d", ids[5])) {
				t.Fatalf("refreshed page v%d: %s", p.Version, p.Content)
			}
		})
	}
}

// TestConsolidateDryRun: a dry run reports what the run then does — the
// same merges, archivals, pages with the same members, and the same count of
// active memories after — for consolidate and for dream, where the pages are
// built from what the merges and archivals leave.
func TestConsolidateDryRun(t *testing.T) {
	for _, backend := range []string{"sqlite", "bolt"} {
		for _, pages := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pages=%v", backend, pages), func(t *testing.T) {
				ctx := context.Background()
				clock := &settableClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
				e := openDream(t, backend, clock)
				// A cluster of seven, one of them a duplicate and one stale:
				// the run merges one and archives one, and its page stands
				// for the five left (a page needs five).
				low := 0.5
				for _, in := range []core.Input{
					{Content: "Alice's home lab runs Proxmox on three nodes in the basement", Entities: []string{"Alice"}},
					{Content: "Alice's home lab runs Proxmox on three nodes in the basement.", Entities: []string{"Alice"}, TrustScore: &low},
					{Content: "Alice's home lab runs Proxmox on old Dell nodes bought second hand", Entities: []string{"Alice"}},
					{Content: "Alice's home lab backs up the Proxmox nodes to a NAS every night", Entities: []string{"Alice"}},
					{Content: "Alice's home lab has a fast switch between the Proxmox nodes", Entities: []string{"Alice"}},
					{Content: "Alice's home lab runs the Proxmox nodes on solar power", Entities: []string{"Alice"}},
					{Content: "Alice's home lab will get a fourth Proxmox node next year", Entities: []string{"Alice"}, Significance: 1},
					{Content: "Bob plays the cello in an orchestra", Entities: []string{"Bob"}, Significance: 7},
				} {
					remember(t, e, in)
				}
				clock.advance(200 * 24 * time.Hour)
				before := seq(t, e)
				dry, err := e.Consolidate(ctx, core.ConsolidateRequest{DryRun: true, Pages: pages})
				if err != nil {
					t.Fatal(err)
				}
				if seq(t, e) != before {
					t.Fatal("the dry run wrote")
				}
				real, err := e.Consolidate(ctx, core.ConsolidateRequest{Pages: pages})
				if err != nil {
					t.Fatal(err)
				}
				if len(real.Merges) != 1 || len(real.Archived) != 1 || real.Before != 8 || real.After != 6+len(real.Pages) ||
					pages && (len(real.Pages) != 1 || len(real.Pages[0].Members) != 5) {
					t.Fatalf("the fixture does not do what it should: %+v", real)
				}
				norm := func(r *core.ConsolidateReport) string {
					c := *r
					c.DryRun, c.Took = false, 0
					c.Pages = slices.Clone(c.Pages)
					for i := range c.Pages {
						if c.Pages[i].Action == "created" {
							c.Pages[i].ID = 0 // known only once written
						}
					}
					b, _ := json.Marshal(c)
					return string(b)
				}
				if norm(dry) != norm(real) {
					t.Errorf("the dry run reported\n%s\nthe run did\n%s", norm(dry), norm(real))
				}
			})
		}
	}
}

// TestConsolidateProperties: for any store, consolidation never changes
// what an --as-of search before the run returns, never deletes or edits a
// version, and a second run changes nothing.
func TestConsolidateProperties(t *testing.T) {
	words := []string{"alice", "bob", "lab", "nodes", "proxmox", "garden", "cello", "berlin", "tea", "coffee"}
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		clock := &settableClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		e := openDream(t, "sqlite", clock)
		n := rapid.IntRange(1, 25).Draw(rt, "memories")
		for i := range n {
			k := rapid.IntRange(2, 6).Draw(rt, fmt.Sprintf("len %d", i))
			var ws []string
			for j := range k {
				ws = append(ws, rapid.SampledFrom(words).Draw(rt, fmt.Sprintf("word %d.%d", i, j)))
			}
			in := core.Input{Content: strings.Join(ws, " "), Significance: rapid.IntRange(1, 10).Draw(rt, fmt.Sprintf("sig %d", i)),
				Entities: []string{rapid.SampledFrom([]string{"Alice", "Bob"}).Draw(rt, fmt.Sprintf("ent %d", i))}}
			if _, err := e.Remember(ctx, in); err != nil {
				rt.Fatal(err)
			}
			clock.advance(time.Duration(rapid.IntRange(0, 100).Draw(rt, fmt.Sprintf("gap %d", i))) * 24 * time.Hour)
		}
		asOf := clock.now()
		clock.advance(time.Hour)
		snapshot := func() (string, string) {
			var hist []string
			for id := int64(1); id <= int64(n); id++ {
				h, err := e.History(ctx, id)
				if err != nil {
					rt.Fatal(err)
				}
				b, _ := json.Marshal(h)
				hist = append(hist, string(b))
			}
			var found []string
			for _, q := range words {
				res, err := e.Search(ctx, core.SearchRequest{Query: q, AsOf: asOf, Limit: 50, NoExpand: true})
				if err != nil {
					rt.Fatal(err)
				}
				var ids []string
				for _, h := range res.Hits {
					ids = append(ids, fmt.Sprint(h.Memory.ID, "v", h.Memory.Version))
				}
				slices.Sort(ids) // the set: scores move as the index grows (bm25 statistics)
				found = append(found, q+":"+strings.Join(ids, ","))
			}
			return strings.Join(hist, "\n"), strings.Join(found, "\n")
		}
		hist0, found0 := snapshot()
		if _, err := e.Consolidate(ctx, core.ConsolidateRequest{Pages: true}); err != nil {
			rt.Fatal(err)
		}
		hist1, found1 := snapshot()
		if found1 != found0 {
			rt.Fatalf("an --as-of search before the run changed:\n%s\n---\n%s", found0, found1)
		}
		// Every version there was is still there, unchanged (new ones may follow).
		h0, h1 := strings.Split(hist0, "\n"), strings.Split(hist1, "\n")
		for i := range h0 {
			var a, b []map[string]any
			json.Unmarshal([]byte(h0[i]), &a)
			json.Unmarshal([]byte(h1[i]), &b)
			if len(b) < len(a) {
				rt.Fatalf("memory %d lost versions", i+1)
			}
			for v := range a {
				delete(a[v], "access_count")
				delete(a[v], "last_accessed_at")
				delete(b[v], "access_count")
				delete(b[v], "last_accessed_at")
				x, _ := json.Marshal(a[v])
				y, _ := json.Marshal(b[v])
				if string(x) != string(y) {
					rt.Fatalf("memory %d version %d changed:\n%s\n%s", i+1, v+1, x, y)
				}
			}
		}
		before := seq(t, e)
		again, err := e.Consolidate(ctx, core.ConsolidateRequest{Pages: true})
		if err != nil {
			rt.Fatal(err)
		}
		for _, p := range again.Pages {
			if p.Action != "unchanged" {
				rt.Fatalf("second run changed a page: %+v", p)
			}
		}
		if len(again.Merges)+len(again.Archived) != 0 || seq(t, e) != before {
			rt.Fatalf("second run: %+v", again)
		}
	})
}

func TestConsolidateEvery(t *testing.T) {
	clock := &settableClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := openDream(t, "sqlite", clock)
	remember(t, e, core.Input{Content: "Alice's home lab runs Proxmox on three nodes"})
	remember(t, e, core.Input{Content: "Alice's home lab runs Proxmox on three nodes."})
	ctx, cancel := context.WithCancel(context.Background())
	runs := make(chan *core.ConsolidateReport, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.ConsolidateEvery(ctx, 10*time.Millisecond, core.ConsolidateRequest{}, func(rep *core.ConsolidateReport, err error) {
			if err != nil {
				t.Error(err)
			}
			select {
			case runs <- rep:
			default:
			}
		})
	}()
	first, second := <-runs, <-runs
	cancel()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("ConsolidateEvery did not return after its context ended")
	}
	if len(first.Merges) != 1 || len(second.Merges) != 0 {
		t.Fatalf("scheduled runs: %+v then %+v", first.Merges, second.Merges)
	}
}
