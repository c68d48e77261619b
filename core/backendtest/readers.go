package backendtest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/longtest"
)

// testIndexedReaders checks the optional readers the engine uses instead of
// scanning the store — driver.SessionReader, driver.UpdateReader and
// driver.RankReader, each when the backend offers it — against what a Scan
// of every memory says they must return: on a store of a few hundred
// memories spread over namespaces, sessions, statuses, types and pools,
// then after edits that move memories between all of these, accesses that
// reorder them, and forgets; inside a write transaction (its own writes);
// and after reopening the store.
func testIndexedReaders(t *testing.T, f *fixture) {
	var sr, ur, rr bool
	f.view(t, func(tx driver.ReadTx) error {
		_, sr = tx.(driver.SessionReader)
		_, ur = tx.(driver.UpdateReader)
		_, rr = tx.(driver.RankReader)
		return nil
	})
	if !sr && !ur && !rr {
		t.Logf("%s implements none of SessionReader, UpdateReader, RankReader; nothing to check", f.h.Name)
		return
	}
	namespaces := []string{driver.DefaultNamespace, "team:web", "project:other"}
	sessions := []string{"", "chat-1", "chat-2", "chat 3"}
	types := []driver.Type{driver.TypeFact, driver.TypeTurn, driver.TypeLesson, driver.TypeEvent}
	statuses := []driver.Status{driver.StatusActive, driver.StatusActive, driver.StatusQuarantined, driver.StatusArchived}
	const n = 400
	var ids []int64
	f.update(t, func(tx driver.Tx) error {
		for i := range n {
			m := newMemory(fmt.Sprintf("memory %d of the readers case", i))
			m.Namespace = namespaces[i%3]
			if i < 300 {
				m.Namespace = driver.DefaultNamespace // one group longer than a page or two, and more changed memories than a page of UpdatedAfter
			}
			m.Session = sessions[i%4]
			m.Type = types[i%len(types)]
			m.Pool = m.Type.DefaultPool()
			if i%5 == 0 {
				m.Pool = driver.PoolRaw
			}
			m.Status = statuses[i%7%4]
			m.Significance = 1 + i%4 // many ties
			m.CreatedAt = at(i % 9)
			m.UpdatedAt = at(i % 13)
			if i%3 != 0 {
				m.ValidFrom = at(i % 5) // ties in session order, broken by created_at, then id
			}
			if err := tx.Insert(m); err != nil {
				return err
			}
			ids = append(ids, m.ID)
		}
		// Access counts and times with ties; a third never accessed.
		for i := range n {
			if i%3 == 0 {
				continue
			}
			for range i % 4 {
				if err := tx.Touch([]int64{ids[i]}, at(100+i%6)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	check := func(stage string) {
		t.Helper()
		f.view(t, func(tx driver.ReadTx) error {
			checkReaders(t, stage, tx, namespaces, sessions)
			return nil
		})
	}
	check("after insert")

	// Edits that move memories between sessions, namespaces, statuses,
	// types and ranks; accesses; forgets.
	f.update(t, func(tx driver.Tx) error {
		for i := 0; i < n; i += 7 {
			m, err := tx.Get(ids[i], 0)
			if err != nil {
				return err
			}
			m.Version++
			m.Session = sessions[(i/7)%4]
			m.Namespace = namespaces[(i/7)%3]
			m.Status = statuses[(i/7)%4]
			m.Type = types[(i/7)%len(types)]
			m.Significance = 10 - i%3
			m.UpdatedAt = at(200 + i%3)
			m.ValidFrom = at(i % 4)
			if err := tx.Put(m); err != nil {
				return err
			}
		}
		if err := tx.Touch([]int64{ids[1], ids[2], ids[4], missingID}, at(300)); err != nil {
			return err
		}
		for i := 3; i < n; i += 11 {
			if err := tx.Delete(ids[i]); err != nil {
				return err
			}
		}
		// The transaction reads its own writes.
		checkReaders(t, "inside the writing transaction", tx, namespaces, sessions)
		return nil
	})
	for i := 3; i < n; i += 11 {
		f.noteForgotten(ids[i], fmt.Sprintf("memory %d of the readers case", i))
	}
	check("after edits, accesses and forgets")
	f.reopen(t)
	check("after reopening")

	checkReadersStop(t, f, namespaces, rr, ur)
}

// checkReadersStop checks that a Ranked (rr) and an UpdatedAfter (ur) read
// stops when fn says so, with fn's error, and that Ranked refuses a filter
// that leaves a field open.
func checkReadersStop(t *testing.T, f *fixture, namespaces []string, rr, ur bool) {
	if rr {
		// A read stops when fn says so, with fn's error.
		stop := errors.New("stop")
		f.view(t, func(tx driver.ReadTx) error {
			seen := 0
			err := tx.(driver.RankReader).Ranked(driver.Filter{Namespaces: namespaces, Statuses: driver.Statuses, Types: driver.Types},
				func(*driver.Memory) error {
					if seen++; seen == 70 {
						return stop
					}
					return nil
				})
			if !errors.Is(err, stop) || seen != 70 {
				t.Errorf("Ranked whose fn stops at the 70th memory: %d memories, error %v; want 70 and fn's error", seen, err)
			}
			for _, flt := range []driver.Filter{
				{Statuses: driver.Statuses, Types: driver.Types},
				{Namespaces: namespaces, Types: driver.Types},
				{Namespaces: namespaces, Statuses: driver.Statuses},
			} {
				if err := tx.(driver.RankReader).Ranked(flt, func(*driver.Memory) error { return nil }); !errors.Is(err, driver.ErrInvalid) {
					t.Errorf("Ranked(%+v), which leaves a field open: error %v, want ErrInvalid", flt, err)
				}
			}
			return nil
		})
	}
	if ur {
		f.view(t, func(tx driver.ReadTx) error {
			stop := errors.New("stop")
			seen := 0
			err := tx.(driver.UpdateReader).UpdatedAfter(namespaces, time.Time{}, func(*driver.Memory) error {
				seen++
				return stop
			})
			if !errors.Is(err, stop) || seen != 1 {
				t.Errorf("UpdatedAfter whose fn fails: called %d times, error %v; want once and fn's error", seen, err)
			}
			return nil
		})
	}
}

// checkReaders compares every optional reader tx offers with a Scan.
func checkReaders(t *testing.T, stage string, tx driver.ReadTx, namespaces, sessions []string) {
	t.Helper()
	var all []*driver.Memory
	if err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
		all = append(all, m)
		return nil
	}); err != nil {
		t.Fatalf("%s: Scan: %v", stage, err)
	}
	byID := map[int64]*driver.Memory{}
	for _, m := range all {
		byID[m.ID] = m
	}
	if r, ok := tx.(driver.SessionReader); ok {
		for _, ns := range namespaces {
			for _, s := range sessions[1:] {
				got, err := r.Session(ns, s)
				if err != nil {
					t.Fatalf("%s: Session(%q, %q): %v", stage, ns, s, err)
				}
				var want []driver.SessionMember
				for _, m := range all {
					if m.Namespace == ns && m.Session == s {
						want = append(want, driver.SessionMember{ID: m.ID, ValidFrom: m.ValidFrom, CreatedAt: m.CreatedAt})
					}
				}
				byMember := func(a, b driver.SessionMember) int { return cmp.Compare(a.ID, b.ID) }
				slices.SortFunc(got, byMember)
				slices.SortFunc(want, byMember)
				if !slices.EqualFunc(got, want, func(a, b driver.SessionMember) bool {
					return a.ID == b.ID && a.ValidFrom.Equal(b.ValidFrom) && a.CreatedAt.Equal(b.CreatedAt)
				}) {
					t.Errorf("%s: Session(%q, %q) = %v, want %v", stage, ns, s, got, want)
				}
			}
		}
	}
	if r, ok := tx.(driver.UpdateReader); ok {
		for _, nss := range [][]string{namespaces, {driver.DefaultNamespace}, {"team:web", "project:other"}, {"project:nobody"}, nil} {
			for _, after := range []time.Time{{}, at(5), at(12), at(13), at(201), at(1000)} {
				var got, want []int64
				err := r.UpdatedAfter(nss, after, likeScan(t, stage, "UpdatedAfter", byID, &got))
				if err != nil {
					t.Fatalf("%s: UpdatedAfter(%q, %v): %v", stage, nss, after, err)
				}
				for _, m := range all {
					if slices.Contains(nss, m.Namespace) && m.UpdatedAt.After(after) {
						want = append(want, m.ID)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s: UpdatedAfter(%q, %v) = %v, want %v", stage, nss, after, got, want)
				}
			}
		}
	}
	if r, ok := tx.(driver.RankReader); ok {
		filters := []driver.Filter{
			{Namespaces: namespaces, Statuses: driver.Statuses, Types: driver.Types},
			{Namespaces: []string{driver.DefaultNamespace}, Statuses: []driver.Status{driver.StatusActive}, Types: []driver.Type{driver.TypeFact}},
			{Namespaces: []string{"team:web", driver.DefaultNamespace}, Statuses: []driver.Status{driver.StatusActive, driver.StatusQuarantined},
				Types: []driver.Type{driver.TypeFact, driver.TypeTurn, driver.TypeEvent}},
			{Namespaces: []string{"team:web", driver.DefaultNamespace}, Statuses: []driver.Status{driver.StatusActive},
				Types: []driver.Type{driver.TypeLesson}, Pools: []driver.Pool{driver.PoolKnowledge}},
			{Namespaces: namespaces, Statuses: driver.Statuses, Types: driver.Types, Pools: []driver.Pool{driver.PoolRaw, driver.PoolMemory}},
			{Namespaces: namespaces, Statuses: driver.Statuses, Types: driver.Types, Pools: []driver.Pool{}},
			{Namespaces: []string{}, Statuses: driver.Statuses, Types: driver.Types},
			{Namespaces: []string{"project:nobody"}, Statuses: driver.Statuses, Types: driver.Types},
		}
		for _, flt := range filters {
			checkRanked(t, stage, r, flt, all, byID)
		}
	}
}

// likeScan returns a reader's callback that appends each memory's id to
// got and reports a memory Scan (byID: by id) does not list, or lists
// differently.
func likeScan(t *testing.T, stage, method string, byID map[int64]*driver.Memory, got *[]int64) func(*driver.Memory) error {
	return func(m *driver.Memory) error {
		*got = append(*got, m.ID)
		if w := byID[m.ID]; w == nil {
			t.Errorf("%s: %s returned memory %d, which Scan does not list", stage, method, m.ID)
		} else if d := diffMemory(w, m); len(d) > 0 {
			t.Errorf("%s: %s: memory %d differs from Scan:\n  %s", stage, method, m.ID, strings.Join(d, "\n  "))
		}
		return nil
	}
}

// checkRanked compares what r.Ranked(flt) returns with the memories of all
// (byID: by id) that match flt, sorted by driver.CompareRank.
func checkRanked(t *testing.T, stage string, r driver.RankReader, flt driver.Filter, all []*driver.Memory, byID map[int64]*driver.Memory) {
	t.Helper()
	var got, want []int64
	err := r.Ranked(flt, likeScan(t, stage, "Ranked", byID, &got))
	if err != nil {
		t.Fatalf("%s: Ranked(%+v): %v", stage, flt, err)
	}
	var ms []*driver.Memory
	for _, m := range all {
		if slices.Contains(flt.Namespaces, m.Namespace) && slices.Contains(flt.Statuses, m.Status) &&
			slices.Contains(flt.Types, m.Type) && (flt.Pools == nil || slices.Contains(flt.Pools, m.Pool)) {
			ms = append(ms, m)
		}
	}
	slices.SortFunc(ms, driver.CompareRank)
	for _, m := range ms {
		want = append(want, m.ID)
	}
	sameIDs(t, fmt.Sprintf("%s: Ranked(%+v)", stage, flt), got, want)
}

// sameIDs reports an error when an ordered read (what) returned got
// instead of want, showing where the two first part.
func sameIDs(t *testing.T, what string, got, want []int64) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-3, 0)
	t.Errorf("%s: %d memories, want %d; from position %d:\n  %v\nwant\n  %v", what, len(got), len(want),
		from, got[from:min(i+5, len(got))], want[from:min(i+5, len(want))])
}

// testRankedPages checks driver.RankReader on scopes that take several of
// a backend's pages (a SQL backend reads 64 memories, then 128, 256 and so
// on, each page starting after the last memory of the one before): a few
// thousand memories over four groups, with ties on significance, access
// count and last access everywhere, never-accessed memories among them
// (also with an access count, as a copied store may hold), so that pages
// end inside runs of ties and between them.
func testRankedPages(t *testing.T, f *fixture) {
	var ok bool
	f.view(t, func(tx driver.ReadTx) error {
		_, ok = tx.(driver.RankReader)
		return nil
	})
	if !ok {
		t.Logf("%s does not implement RankReader; nothing to check", f.h.Name)
		return
	}
	namespaces := []string{driver.DefaultNamespace, "team:web"}
	types := []driver.Type{driver.TypeFact, driver.TypeEvent}
	// 2600 memories give a SQL backend's pages of 64, 128, 256 and 512 in
	// one group; the quick tests take 400 (pages of 64 and part of 128):
	// under -race the invariant check's keyword search per memory made the
	// case take minutes.
	n := longtest.PickFull(400, 2600)
	f.update(t, func(tx driver.Tx) error {
		for i := range n {
			m := newMemory(fmt.Sprintf("memory %d of the ranked pages case", i))
			if i%5 == 1 { // default/fact holds 1560, more than 64+128+256+512
				m.Namespace = namespaces[1]
			}
			if i%5 >= 3 {
				m.Type = types[1]
			}
			m.Pool = m.Type.DefaultPool()
			if i%7 == 0 {
				m.Pool = driver.PoolRaw
			}
			if i%11 == 0 {
				m.Status = driver.StatusQuarantined
			}
			m.Significance = 5 + i%2
			if i%97 == 0 {
				m.Significance = 9
			}
			m.AccessCount = int64(i % 3)
			if m.AccessCount > 0 && i%13 != 0 {
				m.LastAccessedAt = at(100 + i%4)
			} else if m.AccessCount == 0 && i%17 == 0 {
				m.LastAccessedAt = at(100 + i%4)
			}
			if err := tx.Insert(m); err != nil {
				return err
			}
		}
		return nil
	})
	f.view(t, func(tx driver.ReadTx) error {
		var all []*driver.Memory
		if err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			all = append(all, m)
			return nil
		}); err != nil {
			t.Fatalf("Scan: %v", err)
		}
		byID := map[int64]*driver.Memory{}
		for _, m := range all {
			byID[m.ID] = m
		}
		active := []driver.Status{driver.StatusActive}
		for _, flt := range []driver.Filter{
			{Namespaces: namespaces, Statuses: driver.Statuses, Types: driver.Types},
			{Namespaces: namespaces, Statuses: active, Types: types},
			{Namespaces: namespaces[:1], Statuses: active, Types: types[:1]},
			{Namespaces: namespaces[:1], Statuses: driver.Statuses, Types: types[:1]},
			{Namespaces: namespaces, Statuses: active, Types: types, Pools: []driver.Pool{driver.PoolMemory}},
			{Namespaces: namespaces, Statuses: driver.Statuses, Types: driver.Types, Pools: []driver.Pool{driver.PoolRaw, driver.PoolMemory}},
		} {
			checkRanked(t, "ranked pages", tx.(driver.RankReader), flt, all, byID)
		}
		return nil
	})
}
