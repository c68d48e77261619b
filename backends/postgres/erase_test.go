package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// The deletion certificate of a postgres store says what is true of it:
// the VACUUM after the forget ran (or is pending, and why), and the bytes
// PostgreSQL keeps in freed space and in its write-ahead log are out of the
// backend's reach, so the erasure is incomplete, never "complete".
func TestForgetCertificateOnPostgres(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	open := func(key string, cfg postgres.Config) *core.Engine {
		cfg.DSN, cfg.Schema = dsn, schemaFor(t, dsn, t.Name()+"/"+key)
		b, err := postgres.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		e, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	forget := func(e *core.Engine, content string) *core.DeletionCertificate {
		t.Helper()
		m, err := e.Remember(ctx, core.Input{Content: content})
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.Forget(ctx, m.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		if c.Erasure != core.ErasureIncomplete {
			t.Errorf("certificate erasure = %q; want %q (the write-ahead log keeps the content)", c.Erasure, core.ErasureIncomplete)
		}
		out := strings.Join(c.ErasureOutOfReach, "\n")
		for _, want := range []string{"write-ahead log", "VACUUM FULL", "replicas", "backups"} {
			if !strings.Contains(out, want) {
				t.Errorf("certificate's out of reach does not name %q:\n%s", want, out)
			}
		}
		return c
	}

	e := open("vacuum", postgres.Config{})
	c := forget(e, "the locker code is 4471")
	t.Logf("certificate: erasure %s\n  done %q\n  pending %q\n  out of reach %q", c.Erasure, c.ErasureDone, c.ErasurePending, c.ErasureOutOfReach)
	done := strings.Join(c.ErasureDone, "\n")
	if !strings.Contains(done, "VACUUM of memories, memory_versions and edges ran") {
		t.Errorf("certificate does not say the VACUUM ran: done %q, pending %q", c.ErasureDone, c.ErasurePending)
	}
	if len(c.ErasurePending) == 0 && !strings.Contains(done, "pruned") {
		t.Errorf("nothing pending, but the certificate does not say the rows were pruned: %q", c.ErasureDone)
	}

	// A transaction that began before the forget and still reads keeps
	// VACUUM from removing the rows: the certificate says so.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	c = forget(e, "the safe is behind the painting")
	if p := strings.Join(c.ErasurePending, "\n"); !strings.Contains(p, "began before the forget") {
		t.Errorf("with an older transaction open, pending = %q; want it named", c.ErasurePending)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// Without the VACUUM, the dead rows are pending.
	c = forget(open("novacuum", postgres.Config{NoVacuum: true}), "the spare key is under the mat")
	if p := strings.Join(c.ErasurePending, "\n"); !strings.Contains(p, "no VACUUM ran") || len(c.ErasureDone) != 0 {
		t.Errorf("with no_vacuum: done %q, pending %q; want nothing done and the VACUUM pending", c.ErasureDone, c.ErasurePending)
	}

	// forget-source's certificates say the same.
	if _, err := e.Remember(ctx, core.Input{Content: "from the notes", Source: "file:notes.md"}); err != nil {
		t.Fatal(err)
	}
	rep, err := e.ForgetSource(ctx, core.ForgetSourceRequest{Source: "file:notes.md"})
	if err != nil || len(rep.Certificates) != 1 {
		t.Fatalf("forget-source: %+v, %v", rep, err)
	}
	if c := rep.Certificates[0]; c.Erasure != core.ErasureIncomplete || len(c.ErasureOutOfReach) == 0 {
		t.Errorf("forget-source certificate: erasure %q, out of reach %q", c.Erasure, c.ErasureOutOfReach)
	}
}
