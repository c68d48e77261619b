package postgres

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestReadersCanUseIndexes checks that the indexes Open creates can serve
// the reads of session expansion, of a search as of a past time and of the
// bootstrap pack: with sequential scans and sorts priced out, the plans
// read through them and the ranked read merges the groups' index scans
// (the order, NULLS LAST and the "C" collation of the index match the
// query's) instead of sorting.
func TestReadersCanUseIndexes(t *testing.T) {
	dsn := os.Getenv("MEMOS_TEST_PG_DSN")
	if dsn == "" {
		t.Skip("MEMOS_TEST_PG_DSN is not set")
	}
	ctx := context.Background()
	schema := "t_readers_plan"
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
	plan := func(q string, args ...any) string {
		t.Helper()
		rows, err := tx.Query(ctx, "EXPLAIN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			b.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if p := plan(qSession, "default", "chat-1"); !strings.Contains(p, "memories_session") {
		t.Errorf("the session query does not use memories_session:\n%s", p)
	}
	if p := plan(qUpdated, "default", "2025-01-01", 7, 256); !strings.Contains(p, "memories_updated") || strings.Contains(p, "Sort") {
		t.Errorf("the changed-after query does not use memories_updated:\n%s", p)
	}
	for _, q := range []struct {
		q    string
		args []any
	}{
		{qRanked, []any{[]string{"team:web", "default"}, []string{"active", "active"}, []string{"fact", "turn"}, 10, 10, 0}},
		{qRankedPools, []any{[]string{"team:web", "default"}, []string{"active", "active"}, []string{"fact", "turn"}, []string{"memory"}, 10, 10, 0}},
	} {
		// One sort: of the few rows read from each group, in order.
		if p := plan(q.q, q.args...); !strings.Contains(p, "Index Scan using memories_rank") || strings.Count(p, "Sort Key") != 1 {
			t.Errorf("the ranked query does not read each group in order through memories_rank:\n%s", p)
		}
	}
}
