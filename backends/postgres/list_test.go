package postgres

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/core/driver"
)

// TestListCanUseIndexes checks that the indexes Open creates can serve a
// page of List: with sequential scans and sorts priced out, every range of
// both orders seeks to its start in each group's part of memories_list or
// memories_list_sig (its bound is an index condition) and sorts only the
// rows read.
func TestListCanUseIndexes(t *testing.T) {
	dsn := os.Getenv("MEMOS_TEST_PG_DSN")
	if dsn == "" {
		t.Skip("MEMOS_TEST_PG_DSN is not set")
	}
	ctx := context.Background()
	schema := "t_list_plan"
	drop := func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Fatal(err)
		}
	}
	drop()
	t.Cleanup(drop)
	d, err := Open(ctx, Config{DSN: dsn, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, s := range []string{"SET LOCAL enable_seqscan = off", "SET LOCAL enable_sort = off", "SET LOCAL enable_bitmapscan = off"} {
		if _, err := tx.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	k := driver.ListKey{Significance: 5, CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC), ID: 100}
	created := "2025-01-02T03:04:05.000000006Z"
	groups := []any{[]string{"team:web", "default"}, []string{"active", "archived"}}
	for o, index := range map[driver.ListOrder]string{driver.ListRecent: "memories_list ", driver.ListSignificant: "memories_list_sig "} {
		for _, r := range append([]ranked.ListRange{nil}, ranked.ListAfter(o)...) {
			rows, err := tx.Query(ctx, "EXPLAIN "+listQuery(o, r), append(append(groups[:2:2], r.Args(k, created)...), 10)...)
			if err != nil {
				t.Fatal(err)
			}
			var p strings.Builder
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				p.WriteString(line + "\n")
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			seek := "status = g.st)"
			if len(r) > 0 {
				last := r[len(r)-1]
				seek = [...]string{ranked.Significance: "(significance", ranked.Created: "((COALESCE(created_at, ''::text))::text", ranked.ID: "(id"}[last.Column] +
					[...]string{ranked.Eq: " = ", ranked.Less: " < "}[last.Op]
			}
			if !strings.Contains(p.String(), "Index Scan Backward using "+index) || strings.Count(p.String(), "Sort Key") != 1 ||
				!strings.Contains(p.String(), seek) || strings.Contains(p.String(), "Filter") {
				t.Errorf("a page of List in order %d, range %v, does not seek each group in order through %s(%s):\n%s", o, r, index, seek, p.String())
			}
		}
	}
}
