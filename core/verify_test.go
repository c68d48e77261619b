package core_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/memos-go/memos/core"
)

// verifyFails runs VerifyAudit, which must fail with ErrConflict, and
// returns its error text and report.
func verifyFails(t *testing.T, e *core.Engine) (string, *core.AuditReport) {
	t.Helper()
	rep, err := e.VerifyAudit(context.Background())
	if !errors.Is(err, core.ErrConflict) {
		t.Fatalf("verify: %v; want a conflict", err)
	}
	if rep == nil {
		t.Fatal("verify returned no report with its conflict")
	}
	return err.Error(), rep
}

// TestVerifyNoticesMemoriesChangedAroundEngine: verify reconciles the
// memories the audit log records with those the store holds. A memory
// deleted through the backend (no deletion certificate), one inserted
// through it with old times (which would otherwise pass for a memory
// written before the store kept provenance), and a forgotten one put back
// are each reported; the memories written and forgotten through the engine
// are not.
func TestVerifyNoticesMemoriesChangedAroundEngine(t *testing.T) {
	eachBackend(t, func(t *testing.T, name, dir string) {
		ctx := context.Background()
		e := openOn(t, name, dir, core.Options{}, 16)
		defer e.Close()
		proj, err := e.In("project:lab")
		if err != nil {
			t.Fatal(err)
		}
		keep := remember(t, e, core.Input{Content: "the lab opens at nine"})
		gone := remember(t, proj, core.Input{Content: "the lab key is under the mat"})
		forgotten := remember(t, e, core.Input{Content: "the old lab address"})
		ms, err := e.RememberBatch(ctx, []core.Input{{Content: "batch one"}, {Content: "batch two"}})
		if err != nil {
			t.Fatal(err)
		}
		forgottenV1, err := e.Get(ctx, forgotten.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Forget(ctx, forgotten.ID, "moved"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.VerifyAudit(ctx); err != nil {
			t.Fatalf("verify before anything is changed around the engine: %v", err)
		}

		var planted core.Memory
		restored := false
		err = e.Backend().Update(ctx, func(tx core.Tx) error {
			if err := tx.Delete(gone.ID); err != nil {
				return err
			}
			if err := tx.Delete(ms[1].ID); err != nil {
				return err
			}
			old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
			planted = core.Memory{Version: 1, Namespace: "default", Pool: core.PoolMemory, Type: core.TypeFact,
				Content: "a memory nobody wrote", Significance: 5, Trust: core.Trust{Level: core.TrustCertain, Score: 1},
				CreatedAt: old, UpdatedAt: old, Status: core.StatusActive}
			if err := tx.Insert(&planted); err != nil {
				return err
			}
			if imp, ok := tx.(core.Importer); ok {
				if err := imp.InsertAt(forgottenV1.Clone()); err == nil {
					restored = true
				} else if !errors.Is(err, core.ErrConflict) {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		msg, rep := verifyFails(t, e)
		want := []string{
			fmt.Sprintf("memory %d (namespace project:lab) is recorded by audit entry", gone.ID),
			fmt.Sprintf("memory %d (namespace default) is recorded by audit entry", ms[1].ID),
			fmt.Sprintf("memory %d (namespace default) is in the store, but no audit entry records it", planted.ID),
		}
		if restored {
			want = append(want, fmt.Sprintf("memory %d (namespace default) is in the store, but audit entry", forgotten.ID))
		} else {
			t.Logf("%s refuses to insert a forgotten id again: that case is not reachable here", name)
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("verify error does not say %q:\n%s", w, msg)
			}
		}
		if rep.Broken != len(want) || len(rep.Problems) != len(want) {
			t.Errorf("report counts %d problems (%d listed), want %d: %+v", rep.Broken, len(rep.Problems), len(want), rep.Problems)
		}
		for _, id := range []int64{keep.ID, ms[0].ID} {
			if strings.Contains(msg, fmt.Sprintf("memory %d ", id)) {
				t.Errorf("verify reports memory %d, which nobody touched:\n%s", id, msg)
			}
		}
	})
}

// TestVerifyNoticesRowDeletedWithSQL deletes a memory's row from a real
// SQLite store with SQL, and removes a memory's record from a real bbolt
// store, with no engine open: verify names each. The engines keep a vector
// snapshot, as the front-ends do, so that opening replays no change that
// names the missing memory (bolt refuses to open on such a change).
func TestVerifyNoticesRowDeletedWithSQL(t *testing.T) {
	for _, name := range []string{"sqlite", "bolt"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			opts := core.Options{VectorSnapshot: filepath.Join(dir, "store.vectors")}
			e := openOn(t, name, dir, opts, 16)
			keep := remember(t, e, core.Input{Content: "the boiler was serviced in May"})
			gone := remember(t, e, core.Input{Content: "the alarm code is written in the hall"})
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			file := storeFile(t, dir)
			switch name {
			case "sqlite":
				db, err := sql.Open("sqlite", file)
				if err != nil {
					t.Fatal(err)
				}
				if res, err := db.Exec(`DELETE FROM memories WHERE id = ?`, gone.ID); err != nil {
					t.Fatal(err)
				} else if n, _ := res.RowsAffected(); n != 1 {
					t.Fatalf("deleted %d rows", n)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			case "bolt":
				db, err := bbolt.Open(file, 0o600, &bbolt.Options{Timeout: 5 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				err = db.Update(func(tx *bbolt.Tx) error {
					key := binary.BigEndian.AppendUint64(nil, uint64(gone.ID))
					if tx.Bucket([]byte("mem")).Get(key) == nil {
						return fmt.Errorf("no record of memory %d in bucket mem", gone.ID)
					}
					return tx.Bucket([]byte("mem")).Delete(key)
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			e = openOn(t, name, dir, opts, 16)
			defer e.Close()
			if _, err := e.Get(ctx, gone.ID); !errors.Is(err, core.ErrNotFound) {
				t.Fatalf("get of the deleted memory: %v; want not found", err)
			}
			msg, rep := verifyFails(t, e)
			if !strings.Contains(msg, fmt.Sprintf("memory %d (namespace default) is recorded by audit entry", gone.ID)) ||
				!strings.Contains(msg, "the store has no such memory") || strings.Contains(msg, fmt.Sprintf("memory %d ", keep.ID)) {
				t.Errorf("verify error: %s", msg)
			}
			if rep.Memories != 1 || rep.Namespaces["default"] != 1 {
				t.Errorf("report: %+v; want one memory in default checked", rep)
			}
		})
	}
}

// storeFile is the store file (memory.db, memos.bolt) under dir.
func storeFile(t *testing.T, dir string) string {
	t.Helper()
	var file string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && (d.Name() == "memory.db" || d.Name() == "memos.bolt") {
			file = p
		}
		return nil
	})
	if file == "" {
		t.Fatalf("no store file in %s", dir)
	}
	return file
}

// TestVerifyNegativeZero: a trust score of -0 (which SQLite stores as 0)
// and metadata a backend reads back in another form (an integer beyond
// float64's precision) no longer make verify fail, whichever way they are
// written: remember, update, import.
func TestVerifyNegativeZero(t *testing.T) {
	eachBackend(t, func(t *testing.T, name, dir string) {
		ctx := context.Background()
		negZero := math.Copysign(0, -1)
		e := openOn(t, name, dir, core.Options{}, 16)
		a := remember(t, e, core.Input{Content: "a memory with a score of minus zero", TrustScore: &negZero,
			Metadata: map[string]any{"offset": negZero, "big": int64(1<<60 + 1), "nested": map[string]any{"z": []any{negZero}}}})
		if a.Trust.Score != 0 || math.Signbit(a.Trust.Score) {
			t.Errorf("trust score stored as %v, want 0", a.Trust.Score)
		}
		b := remember(t, e, core.Input{Content: "a memory whose score becomes minus zero"})
		if _, err := e.Update(ctx, b.ID, core.Patch{TrustScore: &negZero}); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
		_, err := e.Import(ctx, core.ImportRequest{Memories: []core.ImportedMemory{{Versions: []*core.Memory{{
			Content: "an imported memory with a score of minus zero", Type: core.TypeFact, Pool: core.PoolMemory, Significance: 5,
			Trust: core.Trust{Level: core.TrustImported, Score: negZero}, Status: core.StatusActive, CreatedAt: now, UpdatedAt: now}}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.VerifyAudit(ctx); err != nil {
			t.Errorf("verify: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		e = openOn(t, name, dir, core.Options{}, 16)
		defer e.Close()
		if _, err := e.VerifyAudit(ctx); err != nil {
			t.Errorf("verify after reopening: %v", err)
		}
	})
}

// TestVerifyReportsEveryProblem alters two rows of a real SQLite store — a
// memory's current record and another memory's audit entry — and checks
// that verify reports both, not only the first.
func TestVerifyReportsEveryProblem(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openOn(t, "sqlite", dir, core.Options{}, 16)
	a := remember(t, e, core.Input{Content: "the gate code is 1234"})
	b := remember(t, e, core.Input{Content: "the shed is painted green"})
	c := remember(t, e, core.Input{Content: "the heating comes on at six"})
	log, err := e.Audit(ctx, core.AuditFilter{MemoryID: c.ID, Action: "remember"})
	if err != nil || len(log) != 1 {
		t.Fatalf("remember entry of %d: %+v, %v", c.ID, log, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", storeFile(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE memories SET content = 'the gate code is 9999' WHERE id = ?`, []any{a.ID}},
		{`UPDATE audit SET detail = replace(detail, '"status":"active"', '"status":"archived"') WHERE seq = ?`, []any{log[0].Seq}},
	} {
		if res, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s changed %d rows", q.sql, n)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	e = openOn(t, "sqlite", dir, core.Options{}, 16)
	defer e.Close()
	msg, rep := verifyFails(t, e)
	for _, w := range []string{
		fmt.Sprintf("audit entry %d (remember) was altered", log[0].Seq),
		fmt.Sprintf("binds memory %d version 1", a.ID),
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("verify error does not say %q:\n%s", w, msg)
		}
	}
	if strings.Contains(msg, fmt.Sprintf("memory %d ", b.ID)) {
		t.Errorf("verify reports memory %d, which nobody touched:\n%s", b.ID, msg)
	}
	// SQLite reads the current version's row from the current record, so
	// the altered content shows twice.
	if rep.Broken != 3 || len(rep.Problems) != 3 || rep.BrokenEntry != 1 {
		t.Errorf("report: %d problems %+v, first broken entry %d; want 3, the first entry 1 (binding memory %d)", rep.Broken, rep.Problems, rep.BrokenEntry, a.ID)
	}
}

// TestVerifyAcceptsLegacyNegativeZeroHash: a store written by a memos that
// hashed a trust score of -0 as "-0" (and SQLite then stored 0) verifies:
// verify accepts the hash of the value in that older encoding.
func TestVerifyAcceptsLegacyNegativeZeroHash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openOn(t, "sqlite", dir, core.Options{}, 16)
	zero := 0.0
	m := remember(t, e, core.Input{Content: "stored by an older memos with a score of minus zero", TrustScore: &zero})
	remember(t, e, core.Input{Content: "a later memory"})
	log, err := e.Audit(ctx, core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// The hash the older memos bound: the version's JSON with "-0".
	c := *m
	c.Trust.Score = math.Copysign(0, -1)
	c.LastAccessedAt, c.AccessCount = time.Time{}, 0
	c.Embedding.Vector = nil
	j, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write(j)
	for _, x := range m.Embedding.Vector {
		h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(x)))
	}
	legacy := hex.EncodeToString(h.Sum(nil))
	// Rewrite its entry with that hash, and the chain after it.
	db, err := sql.Open("sqlite", storeFile(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	prev, found := "", false
	for i := range log {
		a := &log[i]
		if a.MemoryID == m.ID && a.Action == "remember" {
			a.Detail = strings.Replace(a.Detail, core.VersionHash(m), legacy, 1)
			found = true
		}
		a.PrevHash = prev
		a.Hash = core.AuditHash(a)
		prev = a.Hash
		if _, err := db.Exec(`UPDATE audit SET detail = ?, prev_hash = ?, hash = ? WHERE seq = ?`, a.Detail, a.PrevHash, a.Hash, a.Seq); err != nil {
			t.Fatal(err)
		}
	}
	if !found {
		t.Fatalf("no remember entry of memory %d in %+v", m.ID, log)
	}
	if _, err := db.Exec(`UPDATE meta SET value = ? WHERE key = 'audit.head'`, prev); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e = openOn(t, "sqlite", dir, core.Options{}, 16)
	defer e.Close()
	if _, err := e.VerifyAudit(ctx); err != nil {
		t.Errorf("verify of a store whose entry hashed -0: %v", err)
	}
	if got, _ := e.Audit(ctx, core.AuditFilter{MemoryID: m.ID, Action: "remember"}); len(got) != 1 || !strings.Contains(got[0].Detail, legacy) {
		t.Fatalf("the entry was not rewritten: %+v", got)
	}
}
