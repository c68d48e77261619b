package backendtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/longtest"
)

// listOrders are the orders of driver.ListReader.
var listOrders = []driver.ListOrder{driver.ListRecent, driver.ListSignificant}

// hasLister reports whether f's backend implements driver.ListReader.
func hasLister(t *testing.T, f *fixture) bool {
	var ok bool
	f.view(t, func(tx driver.ReadTx) error {
		_, ok = tx.(driver.ListReader)
		return nil
	})
	if !ok {
		t.Logf("%s does not implement ListReader; nothing to check", f.h.Name)
	}
	return ok
}

// testList checks driver.ListReader against what a Scan of every memory
// says it must return: on a store of a few hundred memories over
// namespaces and statuses, with runs of memories created at the same time
// (also the zero time) and of the same significance, read from the start
// and after the key of every few memories, of forgotten ones and of keys
// between memories; then after edits that move memories between groups
// and change their significance, and forgets; inside a write transaction;
// and after reopening the store. A read stops when fn says so, and one
// that leaves namespaces or statuses open is ErrInvalid.
func testList(t *testing.T, f *fixture) {
	if !hasLister(t, f) {
		return
	}
	namespaces := []string{driver.DefaultNamespace, "team:web", "project:other"}
	statuses := []driver.Status{driver.StatusActive, driver.StatusActive, driver.StatusQuarantined, driver.StatusArchived}
	const n = 300
	var ids []int64
	f.update(t, func(tx driver.Tx) error {
		for i := range n {
			m := newMemory(fmt.Sprintf("memory %d of the list case", i))
			m.Namespace = namespaces[i%3]
			if i < 200 {
				m.Namespace = driver.DefaultNamespace // a group longer than a backend's first page
			}
			m.Status = statuses[i%7%4]
			m.Significance = 1 + i%4 // many ties
			m.CreatedAt = at(i % 11) // runs created at the same time, inserted out of time order
			if i%17 == 0 {
				m.CreatedAt = time.Time{}
			}
			if i%23 == 0 {
				m.CreatedAt = at(i % 11).In(time.FixedZone("UTC+3", 3*3600)) // the same instant in another zone
			}
			m.UpdatedAt = at(50 + i)
			if err := tx.Insert(m); err != nil {
				return err
			}
			ids = append(ids, m.ID)
		}
		return nil
	})
	var gone []driver.ListKey // keys of forgotten memories
	check := func(stage string) {
		t.Helper()
		f.view(t, func(tx driver.ReadTx) error {
			checkList(t, stage, tx, namespaces, gone)
			return nil
		})
	}
	check("after insert")

	f.update(t, func(tx driver.Tx) error {
		for i := 0; i < n; i += 7 {
			m, err := tx.Get(ids[i], 0)
			if err != nil {
				return err
			}
			m.Version++
			m.Namespace = namespaces[(i/7)%3]
			m.Status = statuses[(i/7)%4]
			m.Significance = 10 - i%3
			m.UpdatedAt = at(500 + i)
			if err := tx.Put(m); err != nil {
				return err
			}
		}
		for i := 3; i < n; i += 13 {
			m, err := tx.Get(ids[i], 0)
			if err != nil {
				return err
			}
			gone = append(gone, driver.KeyOf(m))
			if err := tx.Delete(ids[i]); err != nil {
				return err
			}
		}
		checkList(t, "inside the writing transaction", tx, namespaces, gone)
		return nil
	})
	for i := 3; i < n; i += 13 {
		f.noteForgotten(ids[i], fmt.Sprintf("memory %d of the list case", i))
	}
	check("after edits and forgets")
	f.reopen(t)
	check("after reopening")

	f.view(t, func(tx driver.ReadTx) error {
		lr := tx.(driver.ListReader)
		stop := errors.New("stop")
		for _, o := range listOrders {
			seen := 0
			err := lr.List(driver.ListOptions{Order: o, Namespaces: namespaces, Statuses: driver.Statuses}, func(*driver.Memory) error {
				if seen++; seen == 70 {
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) || seen != 70 {
				t.Errorf("List in order %d whose fn stops at the 70th memory: %d memories, error %v; want 70 and fn's error", o, seen, err)
			}
			for _, opts := range []driver.ListOptions{{Order: o, Statuses: driver.Statuses}, {Order: o, Namespaces: namespaces}} {
				if err := lr.List(opts, func(*driver.Memory) error { return nil }); !errors.Is(err, driver.ErrInvalid) {
					t.Errorf("List(%+v), which leaves a field open: error %v, want ErrInvalid", opts, err)
				}
			}
		}
		return nil
	})
}

// checkList compares what tx's List returns, for several options and
// starting points, with a Scan of every memory. gone holds keys of
// memories that no longer exist, to start after.
func checkList(t *testing.T, stage string, tx driver.ReadTx, namespaces []string, gone []driver.ListKey) {
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
	active := []driver.Status{driver.StatusActive}
	for _, o := range listOrders {
		// Starting points: the start, every ninth memory of the store in
		// o, forgotten memories, a key between two memories (same time and
		// significance, id 0), and keys before and after every memory.
		sorted := slices.Clone(all)
		slices.SortFunc(sorted, func(a, b *driver.Memory) int { return o.Compare(driver.KeyOf(a), driver.KeyOf(b)) })
		starts := []*driver.ListKey{nil}
		for i := 0; i < len(sorted); i += 9 {
			k := driver.KeyOf(sorted[i])
			starts = append(starts, &k)
		}
		for _, k := range gone {
			starts = append(starts, &k)
		}
		if len(sorted) > 0 {
			between := driver.KeyOf(sorted[len(sorted)/2])
			between.ID = 0
			starts = append(starts, &between)
		}
		starts = append(starts,
			&driver.ListKey{Significance: 11, CreatedAt: at(1000), ID: 1 << 40},
			&driver.ListKey{Significance: 0, CreatedAt: time.Time{}, ID: 0})
		for _, opts := range []driver.ListOptions{
			{Order: o, Namespaces: namespaces, Statuses: driver.Statuses},
			{Order: o, Namespaces: []string{driver.DefaultNamespace}, Statuses: active},
			{Order: o, Namespaces: []string{"team:web", driver.DefaultNamespace, "team:web"}, Statuses: []driver.Status{driver.StatusActive, driver.StatusQuarantined}},
			{Order: o, Namespaces: []string{"project:other"}, Statuses: []driver.Status{driver.StatusArchived, driver.StatusArchived}},
			{Order: o, Namespaces: []string{"project:nobody"}, Statuses: driver.Statuses},
			{Order: o, Namespaces: []string{}, Statuses: driver.Statuses},
			{Order: o, Namespaces: namespaces, Statuses: []driver.Status{}},
		} {
			for _, k := range starts {
				opts.After = k
				checkListRead(t, stage, tx.(driver.ListReader), opts, sorted, byID)
			}
		}
	}
}

// checkListRead compares what r.List(opts) returns with the memories of
// sorted (all memories, in opts.Order; byID: by id) that match opts.
func checkListRead(t *testing.T, stage string, r driver.ListReader, opts driver.ListOptions, sorted []*driver.Memory, byID map[int64]*driver.Memory) {
	t.Helper()
	var got, want []int64
	if err := r.List(opts, likeScan(t, stage, "List", byID, &got)); err != nil {
		t.Fatalf("%s: List(%+v): %v", stage, opts, err)
	}
	for _, m := range sorted {
		if slices.Contains(opts.Namespaces, m.Namespace) && slices.Contains(opts.Statuses, m.Status) &&
			(opts.After == nil || opts.Order.Compare(*opts.After, driver.KeyOf(m)) < 0) {
			want = append(want, m.ID)
		}
	}
	sameIDs(t, fmt.Sprintf("%s: List(%+v)", stage, opts), got, want)
}

// testListPages checks driver.ListReader on groups that take several of a
// backend's pages (a SQL backend reads 64 memories, then 128, 256 and so
// on, each page starting after the last memory of the one before): a few
// thousand memories in two groups, most of them created at one of three
// times with one of two significances, so that pages end inside long runs
// of ties, read whole and from starting points deep inside the runs.
func testListPages(t *testing.T, f *fixture) {
	if !hasLister(t, f) {
		return
	}
	// 2600 memories with the long tests, 400 in the quick ones (the
	// invariant check makes thousands take minutes under -race).
	n := longtest.PickFull(400, 2600)
	f.update(t, func(tx driver.Tx) error {
		for i := range n {
			m := newMemory(fmt.Sprintf("memory %d of the list pages case", i))
			if i%5 == 1 {
				m.Status = driver.StatusArchived
			}
			m.Significance = 5 + i%2
			m.CreatedAt = at(i % 3)
			if i%101 == 0 {
				m.CreatedAt = at(10 + i)
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
		for _, o := range listOrders {
			sorted := slices.Clone(all)
			slices.SortFunc(sorted, func(a, b *driver.Memory) int { return o.Compare(driver.KeyOf(a), driver.KeyOf(b)) })
			for _, statuses := range [][]driver.Status{{driver.StatusActive}, driver.Statuses} {
				for _, start := range []int{-1, 0, 63, n / 5, n / 2, n * 3 / 4, n - 2, n - 1} {
					opts := driver.ListOptions{Order: o, Namespaces: []string{driver.DefaultNamespace}, Statuses: statuses}
					if start >= 0 {
						k := driver.KeyOf(sorted[start])
						opts.After = &k
					}
					checkListRead(t, "list pages", tx.(driver.ListReader), opts, sorted, byID)
				}
			}
		}
		return nil
	})
}

// CheckList checks driver.ListReader on the store b holds, as the List
// case does after each of its stages: every read of a few namespaces and
// statuses, from the start and from many starting points, against a Scan.
// A backend's upgrade tests call it on a store an older memos wrote, whose
// list indexes the backend built when it opened the store.
func CheckList(t *testing.T, b driver.Backend) {
	t.Helper()
	err := b.View(context.Background(), func(tx driver.ReadTx) error {
		if _, ok := tx.(driver.ListReader); !ok {
			t.Fatalf("%T does not implement ListReader", tx)
		}
		namespaces := []string{driver.DefaultNamespace}
		if err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			if !slices.Contains(namespaces, m.Namespace) {
				namespaces = append(namespaces, m.Namespace)
			}
			return nil
		}); err != nil {
			return err
		}
		checkList(t, "the store", tx, namespaces, nil)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
