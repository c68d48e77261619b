package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// listStore writes, through engines on b in three namespaces, memories
// that differ in every field List filters on, and returns a handle on
// project:a (which reads it and default) and a handle like it over b with
// its optional readers hidden (which lists by scanning).
func listStore(t *testing.T, b core.Backend) (indexed, scanned *core.Engine) {
	ctx := context.Background()
	t.Cleanup(func() { b.Close() })
	var mu sync.Mutex
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Minute)
		return clock
	}
	open := func(bk core.Backend, ns string) *core.Engine {
		emb, err := hash.Open(ctx, hash.Config{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := core.Open(ctx, core.Options{Backend: bk, Embedder: emb, Now: now, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	writers := []*core.Engine{open(b, "project:a"), open(b, core.DefaultNamespace), open(b, "project:b")}
	types := []core.Type{core.TypeFact, core.TypeEvent, core.TypePreference, core.TypeTurn}
	levels := []core.TrustLevel{core.TrustCertain, core.TrustInferred, core.TrustImported}
	var ins [3][]core.Input
	for i := range 150 {
		in := core.Input{Content: fmt.Sprintf("list memory %d about topic %d", i, i%5), Type: types[i%4], Significance: 1 + i%10,
			Source: fmt.Sprintf("conversation:%d#turn-%d", i%4, i), TrustLevel: levels[(i/3)%3], Entities: []string{fmt.Sprintf("Entity%d", i%6)}}
		if i%9 == 0 {
			in.Quarantine = true
		}
		if i%5 == 0 {
			in.ValidFrom = time.Date(2020+i%6, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		if i%7 == 0 {
			in.ValidTo = time.Date(2027+i%4, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		ins[i%3] = append(ins[i%3], in)
	}
	for w, e := range writers {
		for _, in := range ins[w] {
			m, err := e.Remember(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case m.ID%11 == 0:
				st := core.StatusArchived
				if _, err := e.Update(ctx, m.ID, core.Patch{Status: &st}); err != nil {
					t.Fatal(err)
				}
			case m.ID%13 == 0:
				sig := 10
				if _, err := e.Update(ctx, m.ID, core.Patch{Significance: &sig}); err != nil {
					t.Fatal(err)
				}
			case m.ID%17 == 0:
				if _, err := e.Forget(ctx, m.ID, "test"); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return open(b, "project:a"), open(hideSessions{b}, "project:a")
}

// listAll pages through e.List(req) with page size limit and returns every
// memory, in order.
func listAll(t *testing.T, e *core.Engine, req core.ListRequest, limit int) []*core.Memory {
	t.Helper()
	req.Limit = limit
	var out []*core.Memory
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("List(%+v) did not end after 1000 pages", req)
		}
		res, err := e.List(context.Background(), req)
		if err != nil {
			t.Fatalf("List(%+v): %v", req, err)
		}
		if len(res.Memories) > limit {
			t.Fatalf("List(%+v): %d memories, over the limit", req, len(res.Memories))
		}
		out = append(out, res.Memories...)
		if res.NextCursor == "" {
			return out
		}
		req.Cursor = res.NextCursor
	}
}

// wantList is what List(req) must return for the engine e: every memory of
// the store that matches, sorted, computed without List.
func wantList(t *testing.T, e *core.Engine, req core.ListRequest) []int64 {
	t.Helper()
	scope := []string{e.Namespace(), core.DefaultNamespace}
	if req.NamespaceOnly {
		scope = scope[:1]
	}
	statuses := req.Statuses
	if statuses == nil {
		statuses = []core.Status{core.StatusActive}
	}
	var ms []*core.Memory
	err := e.Backend().View(context.Background(), func(tx core.ReadTx) error {
		return tx.Scan(core.ScanOptions{}, func(m *core.Memory) error {
			ok := slices.Contains(scope, m.Namespace) && slices.Contains(statuses, m.Status) &&
				(req.Pools == nil || slices.Contains(req.Pools, m.Pool)) &&
				(req.Types == nil || slices.Contains(req.Types, m.Type)) &&
				(req.TrustLevels == nil || slices.Contains(req.TrustLevels, m.Trust.Level)) &&
				strings.HasPrefix(m.Source, req.SourcePrefix) &&
				(req.Entity == "" || slices.ContainsFunc(m.Entities, func(s string) bool { return strings.EqualFold(s, req.Entity) })) &&
				(req.CreatedAfter.IsZero() || m.CreatedAt.After(req.CreatedAfter)) &&
				(req.CreatedBefore.IsZero() || m.CreatedAt.Before(req.CreatedBefore)) &&
				(req.UpdatedAfter.IsZero() || m.UpdatedAt.After(req.UpdatedAfter)) &&
				(req.UpdatedBefore.IsZero() || m.UpdatedAt.Before(req.UpdatedBefore)) &&
				(req.ValidAfter.IsZero() || m.ValidTo.IsZero() || m.ValidTo.After(req.ValidAfter)) &&
				(req.ValidBefore.IsZero() || m.ValidFrom.IsZero() || m.ValidFrom.Before(req.ValidBefore))
			if ok {
				ms = append(ms, m)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ms, func(a, b *core.Memory) int {
		if req.Sort == core.SortSignificance && a.Significance != b.Significance {
			return b.Significance - a.Significance
		}
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return int(b.ID - a.ID)
	})
	ids := []int64{}
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}

func idsOf(ms []*core.Memory) []int64 {
	ids := []int64{}
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}

// TestList checks List on every registered backend (postgres with
// MEMOS_TEST_PG_DSN), through the backend's list index and by scanning
// (readers hidden): paged through at several page sizes, each filter alone
// and some together, in both orders, it lists exactly the memories of the
// handle's scope that match, in order, each once; never another
// namespace's, and quarantined or archived ones only when asked.
func TestList(t *testing.T) {
	for _, name := range core.BackendNames() {
		t.Run(name, func(t *testing.T) {
			indexed, scanned := listStore(t, openBackend(t, name, t.TempDir()))
			t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			reqs := []core.ListRequest{
				{},
				{NamespaceOnly: true},
				{Statuses: []core.Status{core.StatusQuarantined}},
				{Statuses: []core.Status{core.StatusArchived, core.StatusActive}},
				{Statuses: core.Statuses, NamespaceOnly: true},
				{Pools: []core.Pool{core.PoolRaw}},
				{Types: []core.Type{core.TypeEvent, core.TypePreference}},
				{TrustLevels: []core.TrustLevel{core.TrustImported}},
				{SourcePrefix: "conversation:2#"},
				{Entity: "entity3"},
				{CreatedAfter: t0.Add(60 * time.Minute)},
				{CreatedBefore: t0.Add(100 * time.Minute)},
				{CreatedAfter: t0.Add(40 * time.Minute), CreatedBefore: t0.Add(90 * time.Minute)},
				{UpdatedAfter: t0.Add(100 * time.Minute), UpdatedBefore: t0.Add(200 * time.Minute)},
				{ValidAfter: time.Date(2028, 6, 1, 0, 0, 0, 0, time.UTC)},
				{ValidBefore: time.Date(2022, 6, 1, 0, 0, 0, 0, time.UTC)},
				{Statuses: core.Statuses, Types: []core.Type{core.TypeFact}, Entity: "ENTITY1", SourcePrefix: "conversation:1"},
			}
			for _, req := range reqs {
				for _, sort := range []core.ListSort{core.SortRecency, core.SortSignificance} {
					req.Sort = sort
					want := wantList(t, indexed, req)
					if len(want) == 0 && req.Entity == "" && req.SourcePrefix == "" {
						t.Errorf("%+v: the fixture has no memory to list", req)
					}
					for _, limit := range []int{1, 7, 1000} {
						for which, e := range map[string]*core.Engine{"indexed": indexed, "scanned": scanned} {
							got := listAll(t, e, req, limit)
							if !slices.Equal(idsOf(got), want) {
								t.Errorf("%s List(%+v) by %d:\n got %v\nwant %v", which, req, limit, idsOf(got), want)
							}
							for _, m := range got {
								if m.Namespace == "project:b" {
									t.Errorf("%s List(%+v) listed memory %d of project:b", which, req, m.ID)
								}
							}
						}
					}
				}
			}
			// An empty page is an empty list (JSON []), not null.
			for which, e := range map[string]*core.Engine{"indexed": indexed, "scanned": scanned} {
				res, err := e.List(context.Background(), core.ListRequest{Entity: "nobody"})
				if err != nil || res.Memories == nil || len(res.Memories) != 0 || res.NextCursor != "" {
					t.Errorf("%s List of nothing: %+v, %v; want an empty list", which, res, err)
				}
			}
			// A page is what it says: the first 7 memories, with a cursor.
			res, err := indexed.List(context.Background(), core.ListRequest{Limit: 7})
			if err != nil || len(res.Memories) != 7 || res.NextCursor == "" {
				t.Fatalf("List(limit 7) = %v, %v; want 7 memories and a cursor", res, err)
			}
			if m := res.Memories[0]; m.Embedding.Model == "" || m.Embedding.Vector != nil {
				t.Errorf("a listed memory's embedding: model %q, %d dimensions; want the model without the vector", m.Embedding.Model, len(m.Embedding.Vector))
			}
		})
	}
}

// TestListCursor checks that a cursor continues the listing it came from
// and only in its order, and that one List did not return is refused as
// invalid input with a message that says what to do.
func TestListCursor(t *testing.T) {
	indexed, _ := listStore(t, openBackend(t, "sqlite", t.TempDir()))
	ctx := context.Background()
	res, err := indexed.List(ctx, core.ListRequest{Limit: 3})
	if err != nil || res.NextCursor == "" {
		t.Fatalf("List: %v, %v", res, err)
	}
	if _, err := indexed.List(ctx, core.ListRequest{Limit: 3, Cursor: res.NextCursor, Sort: core.SortSignificance}); !errors.Is(err, core.ErrInvalid) ||
		!strings.Contains(err.Error(), "sorted by recency") {
		t.Errorf("a recency cursor with sort significance: %v; want ErrInvalid that names the order", err)
	}
	for _, c := range []string{"x", "!!!", "MSByIDUgLSAw", "MSByIDUgMjAyNi0xMy0wMlQwMzowNDowNVogMTI", "MiByIDUgLSA1"} {
		_, err := indexed.List(ctx, core.ListRequest{Cursor: c})
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "next_cursor") {
			t.Errorf("List with cursor %q: %v; want ErrInvalid saying to pass next_cursor as given", c, err)
		}
	}
	for _, req := range []core.ListRequest{{Limit: -1}, {Limit: 1001}, {Sort: "oldest"}, {Types: []core.Type{"thing"}},
		{Statuses: []core.Status{"gone"}}, {CreatedAfter: time.Now(), CreatedBefore: time.Now().Add(-time.Hour)}} {
		if _, err := indexed.List(ctx, req); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("List(%+v): %v; want ErrInvalid", req, err)
		}
	}
}

// TestListScanBound checks that a page whose filter no index serves reads
// at most core.ListScan memories: with one match among more than that, the
// first page is empty and has a cursor, and paging on finds the match.
func TestListScanBound(t *testing.T) {
	ctx := context.Background()
	b := openBackend(t, "sqlite", t.TempDir())
	t.Cleanup(func() { b.Close() })
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := core.ListScan + 500
	err := b.Update(ctx, func(tx core.Tx) error {
		for i := range n {
			m := &core.Memory{Version: 1, Namespace: core.DefaultNamespace, Pool: core.PoolMemory, Type: core.TypeFact,
				Content: fmt.Sprintf("bulk %d", i), Significance: 5, Trust: core.Trust{Level: core.TrustCertain, Score: 1},
				CreatedAt: base.Add(time.Duration(i) * time.Second), UpdatedAt: base, Status: core.StatusActive}
			if i == 10 {
				m.Type = core.TypeEvent // the oldest but ten: read last, newest first
			}
			if err := tx.Insert(m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := core.Open(ctx, core.Options{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	req := core.ListRequest{Types: []core.Type{core.TypeEvent}}
	first, err := e.List(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Memories) != 0 || first.NextCursor == "" {
		t.Fatalf("first page: %d memories, cursor %q; want none and a cursor (it may read only %d memories)", len(first.Memories), first.NextCursor, core.ListScan)
	}
	req.Cursor = first.NextCursor
	second, err := e.List(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Memories) != 1 || second.Memories[0].Type != core.TypeEvent || second.NextCursor != "" {
		t.Fatalf("second page: %v, cursor %q; want the event and no cursor", idsOf(second.Memories), second.NextCursor)
	}
	// Newest first, a created_after bound ends the read at the first older
	// memory, and created_before starts it past the newer ones.
	mid := base.Add(time.Duration(n/2) * time.Second)
	res, err := e.List(ctx, core.ListRequest{CreatedAfter: mid, CreatedBefore: mid.Add(4 * time.Second), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 3 || res.NextCursor != "" || !res.Memories[0].CreatedAt.Equal(mid.Add(3*time.Second)) {
		t.Fatalf("created between %v and 4s later: %v, cursor %q; want the 3 memories between, newest first, and no cursor", mid, idsOf(res.Memories), res.NextCursor)
	}
}
