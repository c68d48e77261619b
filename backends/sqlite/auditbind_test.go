package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// TestAuditBindsBuiltAtOpen checks that the batch entries a memory is bound
// by (audit_binds, driver.AuditBindingReader) are found also when they
// were written by a memos that kept no audit_binds: the table is filled in
// at open, and its trigger binds the entries such a memos appends later.
func TestAuditBindsBuiltAtOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	open := func() *DB {
		t.Helper()
		d, err := Open(ctx, Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := open()
	appendAudit := func(d *DB, details ...string) {
		t.Helper()
		err := d.Update(ctx, func(tx driver.Tx) error {
			for i, s := range details {
				if err := tx.AppendAudit(&driver.AuditEntry{Time: time.Unix(int64(i), 0), Action: "remember", Detail: s}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	appendAudit(d, `{"memories":[{"id":1},{"id":2}]}`, `{"n":1}`, "")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", dsn(path, time.Second, true))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// As a memos without audit_binds leaves the store: the entries above,
	// and more it appended.
	exec(`DROP TRIGGER audit_binds_insert`)
	exec(`DROP TABLE audit_binds`)
	exec(`INSERT INTO audit (time, action, memory_id, detail) VALUES ('2025-01-01T00:00:00Z', 'remember', 0, ?)`, `{"memories":[{"id":2},{"id":3}]}`)
	check := func(stage string, want map[int64][]uint64) {
		t.Helper()
		d := open()
		defer d.Close()
		err := d.View(ctx, func(tx driver.ReadTx) error {
			for id, seqs := range want {
				var got []uint64
				if err := tx.(driver.AuditBindingReader).AuditBound(id, func(e driver.AuditEntry) error {
					got = append(got, e.Seq)
					return nil
				}); err != nil {
					return err
				}
				if !slices.Equal(got, seqs) {
					t.Errorf("%s: memory %d is bound by entries %v, want %v", stage, id, got, seqs)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check("built", map[int64][]uint64{1: {1}, 2: {1, 4}, 3: {4}, 4: nil})
	// An entry that a memos without the table appends after it was built
	// is bound by the trigger; one appended while the trigger was gone, by
	// the next open.
	exec(`INSERT INTO audit (time, action, memory_id, detail) VALUES ('2025-01-01T00:00:00Z', 'remember', 0, ?)`, `{"memories":[{"id":4}]}`)
	exec(`DROP TRIGGER audit_binds_insert`)
	exec(`INSERT INTO audit (time, action, memory_id, detail) VALUES ('2025-01-01T00:00:00Z', 'remember', 0, ?)`, `{"memories":[{"id":1},{"id":4}]}`)
	exec(`INSERT INTO audit (time, action, memory_id, detail) VALUES ('2025-01-01T00:00:00Z', 'remember', 0, 'not JSON')`)
	check("caught up", map[int64][]uint64{1: {1, 6}, 2: {1, 4}, 3: {4}, 4: {5, 6}})
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM audit_binds`).Scan(&n); err != nil || n != 7 {
		t.Errorf("audit_binds holds %d rows (%v), want 7", n, err)
	}
}
