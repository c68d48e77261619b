package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
)

// TestPendingListMergedAfterRewrites checks that rows rewritten in many
// small transactions do not pile up in the keyword index's pending list,
// which every keyword search reads whole. Access statistics are written
// that way: each search's hits, a batch a second on every host, and each
// touched memory's row is written anew. Before, only a transaction that
// inserted 256 memories merged the list; 2,000 rewrites in batches of 50
// left it 77 pages long (2,000 rows' terms for every search to compare),
// and under a search load it stayed near its 1 MiB limit.
func TestPendingListMergedAfterRewrites(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	db := openTest(t, "db")
	defer db.Close()
	ms, _, err := backendtest.BenchWorkload(500)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(ms))
	// One bulk insert: merged after it, before and after the change.
	err = db.Update(ctx, func(tx driver.Tx) error {
		for i, m := range ms {
			if err := tx.Insert(m); err != nil {
				return err
			}
			ids[i] = m.ID
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each memory touched four times, 50 a transaction.
	at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for round := range 4 {
		for i := 0; i < len(ids); i += 50 {
			err := db.Update(ctx, func(tx driver.Tx) error {
				return tx.Touch(ids[i:min(i+50, len(ids))], at.Add(time.Duration(round)*time.Second))
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var got *driver.Memory
	if err := db.View(ctx, func(tx driver.ReadTx) (err error) { got, err = tx.Get(ids[0], 0); return err }); err != nil {
		t.Fatal(err)
	}
	if got.AccessCount != 4 {
		t.Fatalf("memory %d: access count %d after four touches, want 4", ids[0], got.AccessCount)
	}

	// gin_clean_pending_list merges what is pending and says how many
	// pages that was. Fewer than 256 rows (what may stay unmerged) fill
	// about 10 pages with these memories' terms; 2,000 fill 77.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := schemaFor(t, dsn, t.Name()+"/db") // openTest's
	var pages int64
	if err := conn.QueryRow(ctx, `SELECT gin_clean_pending_list($1::regclass)`,
		pgx.Identifier{schema, "memories_terms"}.Sanitize()).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	t.Logf("pending list after 2,000 rewrites in 40 transactions: %d pages", pages)
	if pages > 20 {
		t.Errorf("the keyword index's pending list holds %d pages after 2,000 rows were rewritten 50 at a time; "+
			"want at most 20 (fewer than 256 rows fill about 10): every keyword search reads it whole", pages)
	}
}
