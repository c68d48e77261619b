package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/upgradetest"
)

// TestListUsesIndexes checks that a page of List seeks in each group's part
// of memories_list or memories_list_sig (the plan names the bounded key)
// and SQLite merges the groups in order: no scan of the store and no sort.
func TestListUsesIndexes(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	namespaces := []string{"team:web", "team:web", "default", "default"}
	statuses := []driver.Status{driver.StatusActive, driver.StatusArchived, driver.StatusActive, driver.StatusArchived}
	after := &driver.ListKey{Significance: 5, CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC), ID: 100}
	for o, index := range map[driver.ListOrder]string{driver.ListRecent: "memories_list ", driver.ListSignificant: "memories_list_sig "} {
		for _, r := range append([]ranked.ListRange{nil}, ranked.ListAfter(o)...) {
			args, err := listArgs(namespaces, statuses, r, after, 64)
			if err != nil {
				t.Fatal(err)
			}
			plan := queryPlan(t, d, listQuery(o, len(namespaces), r), args...)
			seek := "status=?)"
			if len(r) > 0 {
				last := r[len(r)-1]
				seek = last.Column.Name() + [...]string{ranked.Eq: "=?)", ranked.Less: "<?)"}[last.Op]
			}
			if strings.Count(plan, index) != len(namespaces) || strings.Count(plan, seek) != len(namespaces) || strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("a page of List in order %d, range %v, does not seek each group in order through %s(%s):\n%s", o, r, index, seek, plan)
			}
		}
	}
	if plan := queryPlan(t, d, qListOthers, "default", "active"); !strings.Contains(plan, "memories_created_other") {
		t.Errorf("the query of created_at in other formats does not use memories_created_other:\n%s", plan)
	}
}

// TestListOtherFormats checks List on rows written with plain SQL whose
// created_at is "" or in SQLite's own formats, which do not sort as their
// times beside memos' layout: each comes once, in its time's place among
// the others, from the first page and after any memory.
func TestListOtherFormats(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	d, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	day := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	err = d.Update(ctx, func(tx driver.Tx) error {
		for i := range 150 {
			at := day.Add(time.Duration(i%30) * time.Hour)
			m := &driver.Memory{Version: 1, Namespace: driver.DefaultNamespace, Pool: driver.PoolMemory, Type: driver.TypeFact,
				Content: fmt.Sprintf("written by memos %d", i), Significance: 1 + i%3, Trust: driver.Trust{Level: driver.TrustCertain, Score: 1},
				CreatedAt: at, UpdatedAt: at, Status: driver.StatusActive}
			if err := tx.Insert(m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", dsn(path, time.Second, true))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	times := []string{"", "2025-02-01 10:00:00", "2025-02-01T11:00:00", "2025-02-01T13:30:00+02:00", "2025-02-01 23:59:59.5", "2025-02-02 00:00:00"}
	for i := range 60 {
		if _, err := raw.Exec(`INSERT INTO memories (content, created_at, significance) VALUES (?, ?, ?)`,
			fmt.Sprintf("imported %d", i), times[i%len(times)], 1+i%3); err != nil {
			t.Fatal(err)
		}
	}
	err = d.View(ctx, func(tx driver.ReadTx) error {
		var all []*driver.Memory
		if err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			all = append(all, m)
			return nil
		}); err != nil {
			return err
		}
		for _, o := range []driver.ListOrder{driver.ListRecent, driver.ListSignificant} {
			slices.SortFunc(all, func(a, b *driver.Memory) int { return o.Compare(driver.KeyOf(a), driver.KeyOf(b)) })
			for start := -1; start < len(all); start += 7 {
				opts := driver.ListOptions{Order: o, Namespaces: []string{driver.DefaultNamespace}, Statuses: []driver.Status{driver.StatusActive}}
				if start >= 0 {
					k := driver.KeyOf(all[start])
					opts.After = &k
				}
				var got, want []int64
				if err := tx.(driver.ListReader).List(opts, func(m *driver.Memory) error {
					got = append(got, m.ID)
					return nil
				}); err != nil {
					return err
				}
				for _, m := range all[start+1:] {
					want = append(want, m.ID)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("List in order %d after position %d: %d memories, want %d:\n  %v\nwant\n  %v", o, start, len(got), len(want), got, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestListIndexesBuiltAtOpen checks that a store written by an older memos
// gets its list indexes when it opens: the version 1 fixture, and a store
// of the current schema version without them (as the release before them
// leaves it). List then reads through them what a Scan says it must.
func TestListIndexesBuiltAtOpen(t *testing.T) {
	ctx := context.Background()
	check := func(path string) {
		t.Helper()
		d, err := Open(ctx, Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var n int
		if err := d.w.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('memories_list', 'memories_list_sig', 'memories_created_other')`).Scan(&n); err != nil || n != 3 {
			t.Fatalf("%d of the 3 list indexes after open (%v)", n, err)
		}
		backendtest.CheckList(t, d)
	}
	v1 := filepath.Join(t.TempDir(), "memory.db")
	upgradetest.Gunzip(t, "sqlite-v1.db.gz", v1)
	check(v1)

	raw, err := sql.Open("sqlite", dsn(v1, time.Second, true))
	if err != nil {
		t.Fatal(err)
	}
	for _, ix := range []string{"memories_list", "memories_list_sig", "memories_created_other"} {
		if _, err := raw.Exec(`DROP INDEX ` + ix); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	check(v1)
}
