package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/internal/ranked"
	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/longtest"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// TestFilterAfterRanking checks that a filtered search that ranks without
// the filter first (searchThenFilter) returns what the filtered FTS5 query
// returns — the same ids, order and scores — for random ORs and ANDs of
// common and rare words, under filters that pass most rows, few rows and
// none, at several limits; that a filter passing every row never needs the
// filtered query; and that both ways of answering were taken.
func TestFilterAfterRanking(t *testing.T) {
	ctx := context.Background()
	// 3000 memories and 400 searches in the long set without the race
	// detector (.ci/run's step of full-size checks); elsewhere a tenth of
	// the store and an eighth of the searches. Under -race SQLite runs some
	// 30 times slower (the full size took 10 minutes in CI), and the test
	// runs no goroutines of its own for the detector to watch.
	n, searches := longtest.PickFull(300, 3000), longtest.PickFull(50, 400)
	d, ms := workloadStore(t, n, Config{})
	backendtest.InsertAll(t, d, ms)
	// Forget some, so that deleted rows are in neither result.
	err := d.Update(ctx, func(tx driver.Tx) error {
		for id := int64(1); id <= int64(n); id += 37 {
			if err := tx.Delete(id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	counts := map[string]int{}
	namespaces := map[string]bool{}
	for _, m := range ms {
		namespaces[m.Namespace] = true
		for _, w := range text.Tokenize(m.Content) {
			counts[w]++
		}
	}
	vocab := make([]string, 0, len(counts))
	for w := range counts {
		vocab = append(vocab, w)
	}
	slices.SortFunc(vocab, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	var nsList []string
	for ns := range namespaces {
		nsList = append(nsList, ns)
	}
	slices.Sort(nsList)
	if len(nsList) < 2 {
		t.Fatalf("the workload has %d namespaces; the test needs several", len(nsList))
	}
	filters := []driver.Filter{
		{Namespaces: nsList, Statuses: []driver.Status{driver.StatusActive}},     // passes all
		{Namespaces: nsList[:1], Statuses: []driver.Status{driver.StatusActive}}, // passes some
		{Types: []driver.Type{driver.TypeLesson}},                                // passes few
		{Namespaces: []string{"nobody"}},                                         // passes none
		{Pools: []driver.Pool{}},                                                 // matches nothing
	}
	r := rand.New(rand.NewPCG(17, 0))
	pick := func() string {
		if r.IntN(2) == 0 {
			return vocab[r.IntN(min(40, len(vocab)))]
		}
		return vocab[r.IntN(len(vocab))]
	}
	var fellBack, answered int
	for i := range searches {
		var kids []query.Node
		for range 1 + r.IntN(6) {
			kids = append(kids, &query.Term{Text: pick()})
		}
		var q query.Node = &query.Or{Children: kids}
		switch {
		case len(kids) == 1:
			q = kids[0]
		case i%5 == 0:
			q = &query.And{Children: kids[:2]}
		}
		f := filters[i%len(filters)]
		limit := []int{1, 5, 30, 100}[i/len(filters)%4]
		where, fargs := filterSQL(f)
		want, err := d.searchPlain(ctx, q.String(), where, fargs, limit)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := d.searchThenFilter(ctx, q.String(), where, fargs, limit)
		if err != nil {
			t.Fatalf("searchThenFilter(%s): %v", q, err)
		}
		if !ok && i%len(filters) == 0 {
			t.Errorf("%s (limit %d): a filter that passes every row fell back to the filtered query", q, limit)
		}
		if !ok {
			fellBack++
		} else {
			answered++
			if !slices.Equal(got, want) {
				t.Fatalf("%s (limit %d, filter %+v):\n got %s\nwant %s", q, limit, f, backendtest.FormatHits(got), backendtest.FormatHits(want))
			}
		}
		pub, err := d.SearchKeyword(ctx, q, f, limit)
		if err != nil || !slices.Equal(pub, want) {
			t.Fatalf("SearchKeyword(%s, %+v, %d) = %s, %v; want %s", q, f, limit, backendtest.FormatHits(pub), err, backendtest.FormatHits(want))
		}
	}
	if fellBack == 0 || answered == 0 {
		t.Fatalf("ranking unfiltered answered %d searches and fell back on %d; want both", answered, fellBack)
	}
	t.Logf("answered %d, fell back %d", answered, fellBack)
}

// TestSessionUsesIndex checks that reading a session's members goes through
// the index Open creates, not a scan of the store.
func TestSessionUsesIndex(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rows, err := d.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+qSession, "default", "chat-1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "\n")
	}
	if !strings.Contains(plan.String(), "memories_session") {
		t.Fatalf("the session query does not use memories_session:\n%s", plan.String())
	}
}

// queryPlan returns SQLite's plan for q.
func queryPlan(t *testing.T, d *DB, q string, args ...any) string {
	t.Helper()
	rows, err := d.r.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}

// TestUpdatedAndRankedUseIndexes checks that the reads of a search as of a
// past time and of the bootstrap pack go through the indexes Open creates:
// no scan of the store, and no sort of a scope (each group is read in
// order and merged).
func TestUpdatedAndRankedUseIndexes(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Scan walks the table in id order, not one of those indexes then a sort.
	for _, f := range []driver.Filter{{}, {Namespaces: []string{"default"}}, {Namespaces: []string{"team:web", "default"},
		Statuses: []driver.Status{driver.StatusActive}, Types: []driver.Type{driver.TypeLesson}}} {
		q, args := scanQuery(f)
		if plan := queryPlan(t, d, q, append(append([]any{0}, args...), 256)...); !strings.Contains(plan, "PRIMARY KEY") || strings.Contains(plan, "TEMP B-TREE") {
			t.Fatalf("a page of Scan(%+v) does not walk the table in id order:\n%s", f, plan)
		}
	}
	if plan := queryPlan(t, d, qUpdated, "default", "2024-01-01", 7, 256); !strings.Contains(plan, "memories_updated") || strings.Contains(plan, "TEMP B-TREE") {
		t.Fatalf("the changed-after query does not use memories_updated:\n%s", plan)
	}
	if plan := queryPlan(t, d, qUpdatedOther, "default"); !strings.Contains(plan, "memories_updated_other") {
		t.Fatalf("the query of updated_at in other formats does not use memories_updated_other:\n%s", plan)
	}
	groups, err := ranked.Groups(driver.Filter{Namespaces: []string{"team", "default"},
		Statuses: []driver.Status{driver.StatusActive}, Types: []driver.Type{driver.TypeFact, driver.TypeTurn}})
	if err != nil {
		t.Fatal(err)
	}
	// Every range a page reads seeks to its start in each group's part of
	// memories_rank (the plan names the bounded column) and reads on.
	accessed := "2024-01-01T00:00:00.000000000Z"
	for _, pools := range [][]driver.Pool{nil, {driver.PoolMemory}} {
		for r := range ranked.NRanges {
			k := ranked.Key{Significance: 5, AccessCount: 2, LastAccessed: &accessed, ID: 100}
			plan := queryPlan(t, d, rankedQuery(len(groups), pools, r), rankedArgs(groups, pools, r, k, 10)...)
			seek := "type=?)"
			if cs := r.Conds(); len(cs) > 0 {
				last := cs[len(cs)-1]
				seek = [...]string{"significance", "access_count", "last_accessed_at", "id"}[last.Column] +
					[...]string{"=?)", "<?)", ">?)", "=?)"}[last.Op]
			}
			if strings.Count(plan, "memories_rank") != len(groups) || strings.Count(plan, seek) != len(groups) || strings.Contains(plan, "TEMP B-TREE") {
				t.Fatalf("the ranked query of range %d does not seek each group in order through memories_rank (%s):\n%s", r, seek, plan)
			}
		}
	}
}

// TestUpdatedAfterOtherFormats checks UpdatedAfter on rows written with
// plain SQL in SQLite's own time formats and with a zone offset, whose text
// does not sort with the stored layout's: it returns exactly the memories
// whose time is after the bound, also for bounds on the same day.
func TestUpdatedAfterOtherFormats(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	d, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	err = d.Update(ctx, func(tx driver.Tx) error {
		for i := range 6 {
			at := day.Add(time.Duration(i*5) * time.Hour)
			m := &driver.Memory{Version: 1, Namespace: driver.DefaultNamespace, Pool: driver.PoolMemory, Type: driver.TypeFact,
				Content: fmt.Sprintf("written by memos %d", i), Significance: 5, Trust: driver.Trust{Level: driver.TrustCertain, Score: 1},
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
	for _, ts := range []string{"2025-02-01 10:00:00", "2025-02-01T11:00:00", "2025-02-01T13:30:00+02:00", "2025-02-01 23:59:59.5", "2025-02-02 00:00:00"} {
		if _, err := raw.Exec(`INSERT INTO memories (content, created_at, updated_at) VALUES (?, ?, ?)`, "imported at "+ts, ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	for _, bound := range []time.Time{day.Add(-time.Hour), day.Add(9 * time.Hour), day.Add(10 * time.Hour), day.Add(11*time.Hour + 30*time.Minute),
		day.Add(12 * time.Hour), day.Add(23 * time.Hour), day.Add(24 * time.Hour), day.Add(48 * time.Hour)} {
		var got, want []int64
		err := d.View(ctx, func(tx driver.ReadTx) error {
			if err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
				if m.UpdatedAt.After(bound) {
					want = append(want, m.ID)
				}
				return nil
			}); err != nil {
				return err
			}
			return tx.(driver.UpdateReader).UpdatedAfter([]string{driver.DefaultNamespace}, bound, func(m *driver.Memory) error {
				got = append(got, m.ID)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("UpdatedAfter(%v) = %v, want %v", bound, got, want)
		}
	}
	d.Close()
}

// TestRankedOtherFormats checks Ranked on rows written with plain SQL whose
// last_accessed_at is "" or in SQLite's own formats, over several pages:
// each page starts after the stored text of the last row of the one
// before, so every memory comes once, in the order of memories_rank (which
// compares the text as stored).
func TestRankedOtherFormats(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	d, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	raw, err := sql.Open("sqlite", dsn(path, time.Second, true))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	times := []any{nil, "", "2025-02-01 10:00:00", "2025-02-01T11:00:00.000000000Z", "2025-02-01T13:30:00+02:00", "2025-02-01 23:59:59.5"}
	imp, err := raw.Begin() // one transaction: 500 commits are minutes under -race on a busy machine
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		if _, err := imp.Exec(`INSERT INTO memories (content, last_accessed_at, access_count) VALUES (?, ?, ?)`,
			fmt.Sprintf("imported %d", i), times[i%len(times)], i%2); err != nil {
			t.Fatal(err)
		}
	}
	if err := imp.Commit(); err != nil {
		t.Fatal(err)
	}
	var want []int64
	rows, err := raw.Query(`SELECT id FROM memories WHERE namespace = 'default' AND status = 'active' AND type = 'fact'
		ORDER BY significance DESC, access_count DESC, last_accessed_at DESC, id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var got []int64
	err = d.View(ctx, func(tx driver.ReadTx) error {
		return tx.(driver.RankReader).Ranked(driver.Filter{Namespaces: []string{driver.DefaultNamespace},
			Statuses: []driver.Status{driver.StatusActive}, Types: []driver.Type{driver.TypeFact}}, func(m *driver.Memory) error {
			got = append(got, m.ID)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 500 || !slices.Equal(got, want) {
		t.Errorf("Ranked over imported rows: %d memories, want %d in the index's order:\n  %v\nwant\n  %v", len(got), len(want), got, want)
	}
}
