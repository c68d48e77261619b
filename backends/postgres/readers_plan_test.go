package postgres

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/backends/internal/ranked"
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
	if p := plan(statements.Session, "default", "chat-1"); !strings.Contains(p, "memories_session") {
		t.Errorf("the session query does not use memories_session:\n%s", p)
	}
	if p := plan(qUpdated, "default", "2025-01-01", 7, 256); !strings.Contains(p, "memories_updated") || strings.Contains(p, "Sort") {
		t.Errorf("the changed-after query does not use memories_updated:\n%s", p)
	}
	// Every range a page reads seeks to its start in each group's part of
	// memories_rank (its bound is an index condition) and reads on.
	accessed := "2024-01-01T00:00:00.000000000Z"
	k := ranked.Key{Significance: 5, AccessCount: 2, LastAccessed: &accessed, ID: 100}
	groups := []any{[]string{"team:web", "default"}, []string{"active", "active"}, []string{"fact", "turn"}}
	for _, pools := range []bool{false, true} {
		for r := range ranked.NRanges {
			q, args := qRanked[r], groups
			if pools {
				q, args = qRankedPools[r], append(groups[:3:3], []string{"memory"})
			}
			p := plan(q, append(append(args[:len(args):len(args)], r.Args(k)...), 10)...)
			seek := "type = g.ty)"
			if cs := r.Conds(); len(cs) > 0 {
				last := cs[len(cs)-1]
				seek = [...]string{"significance", "access_count", `(last_accessed_at)::text`, "id"}[last.Column] +
					[...]string{" = ", " < ", " > ", " IS NULL)"}[last.Op]
			}
			// One sort: of the few rows read from each group, in order.
			if !strings.Contains(p, "Index Scan using memories_rank") || strings.Count(p, "Sort Key") != 1 ||
				!strings.Contains(p, "AND ("+seek) || !pools && strings.Contains(p, "Filter") {
				t.Errorf("the ranked query of range %d does not seek each group in order through memories_rank (%s):\n%s", r, seek, p)
			}
		}
	}
}
