package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
	"go.etcd.io/bbolt"
)

// storeState is everything a reader of the store sees that the audit chain
// binds: every version of every memory (current record and version rows,
// access statistics aside) and the audit log.
func storeState(ctx context.Context, e *core.Engine) (string, error) {
	var b strings.Builder
	err := e.Backend().View(ctx, func(tx core.ReadTx) error {
		var ids []int64
		err := tx.Scan(core.ScanOptions{}, func(m *core.Memory) error {
			ids = append(ids, m.ID)
			fmt.Fprintf(&b, "current %s\n", core.VersionHash(m))
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			hs, err := tx.History(id)
			if err != nil {
				return err
			}
			for _, h := range hs {
				fmt.Fprintf(&b, "version %s\n", core.VersionHash(h))
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	log, err := e.Audit(ctx, core.AuditFilter{})
	if err != nil {
		return "", err
	}
	j, _ := json.Marshal(log)
	b.Write(j)
	return b.String(), nil
}

// copyDir copies the tree at src to dst (which must not exist).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestVerifyCatchesEveryByteFlip changes, one at a time, every byte of a
// memory's current record, of its version rows and of an audit row in the
// store file (SQLite file, bbolt file) and checks that VerifyAudit fails —
// or that the store reads exactly as before (a byte the store no longer
// uses, such as a stale copy in a free page). bolt compresses its audit
// entries, so there every fifth byte of each entry is flipped instead of
// the bytes around the hash. Access statistics are not
// bound (they change on every read); the rows here have none.
func TestVerifyCatchesEveryByteFlip(t *testing.T) {
	if testing.Short() {
		t.Skip("opens the store a few hundred times")
	}
	eachBackend(t, func(t *testing.T, name, dir string) {
		ctx := context.Background()
		e := openOn(t, name, dir, core.Options{}, 16)
		a := remember(t, e, core.Input{Content: "quillwort marker one", Entities: []string{"Q"}, Source: "file:q.md"})
		if _, err := e.Update(ctx, a.ID, core.Patch{Content: ptr("quillwort marker two")}); err != nil {
			t.Fatal(err)
		}
		b := remember(t, e, core.Input{Content: "another memory", DerivedFrom: []int64{a.ID}})
		if _, err := e.Forget(ctx, b.ID, "test"); err != nil {
			t.Fatal(err)
		}
		cur, _ := e.Get(ctx, a.ID)
		h2 := core.VersionHash(cur)
		want, err := storeState(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.VerifyAudit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		var file string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && (d.Name() == "memory.db" || d.Name() == "memos.bolt") {
				file = p
			}
			return nil
		})
		if file == "" {
			t.Skipf("%s keeps no store file in %s (a database server): its rows are not flipped here", name, dir)
		}
		pristine := filepath.Join(t.TempDir(), "pristine")
		copyDir(t, dir, pristine)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// The regions: every copy of the two contents (the current record
		// and the row of version 1; a backend may hold more) and the audit
		// row binding version 2, each with the bytes around it.
		var regions []region
		for _, needle := range []string{"quillwort marker one", "quillwort marker two", h2} {
			for off := 0; ; {
				i := bytes.Index(data[off:], []byte(needle))
				if i < 0 {
					break
				}
				i += off
				regions = append(regions, region{fmt.Sprintf("%q at %d", needle[:min(len(needle), 20)], i), max(0, i-4), min(len(data), i+len(needle)+4), 1})
				off = i + len(needle)
			}
		}
		if name == "bolt" && !strings.Contains(string(data), h2) {
			// bolt compresses audit entries (store format 3), so the hash
			// is not in the file as text: flip every fifth byte of every
			// audit entry (all of them would take a thousand opens).
			regions = append(regions, boltValueRegions(t, file, data, "audit")...)
		}
		if len(regions) < 3 {
			t.Fatalf("found %d rows in %s; want the current record, the row of version 1 and the audit row", len(regions), file)
		}
		flips, caught, unused := 0, 0, 0
		for _, r := range regions {
			for off := r.start; off < r.end; off += max(r.step, 1) {
				flipped := bytes.Clone(data)
				flipped[off] ^= 0x20
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				copyDir(t, pristine, dir)
				if err := os.WriteFile(file, flipped, 0o600); err != nil {
					t.Fatal(err)
				}
				flips++
				verr, state := verifyFlipped(t, name, dir)
				switch {
				case verr != nil:
					caught++
				case state == want:
					unused++
				default:
					t.Errorf("%s: flipping byte %d (%s) changed what the store holds, but verify passed", name, off, r.what)
				}
			}
		}
		t.Logf("%s: %d single-byte changes, %d caught by verify, %d to bytes the store does not read", name, flips, caught, unused)
	})
}

// verifyFlipped opens the store in dir and verifies it; a store that cannot
// be opened or read counts as caught.
// region is a byte range of a store file; step > 1 flips every step-th byte.
type region struct {
	what             string
	start, end, step int
}

// boltValueRegions finds, in data (the bytes of the bbolt file at path),
// every value of bucket and returns its byte range.
func boltValueRegions(t *testing.T, path string, data []byte, bucket string) []region {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rs []region
	err = db.View(func(tx *bbolt.Tx) error {
		bk := tx.Bucket([]byte(bucket))
		if bk == nil {
			return fmt.Errorf("no bucket %q", bucket)
		}
		return bk.ForEach(func(k, v []byte) error {
			i := bytes.Index(data, v)
			if i < 0 {
				return fmt.Errorf("%s entry %x is not stored contiguously in the file", bucket, k)
			}
			rs = append(rs, region{fmt.Sprintf("%s entry %x at %d", bucket, k, i), i, i + len(v), 5})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func verifyFlipped(t *testing.T, name, dir string) (err error, state string) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	ctx := context.Background()
	b, err := tryOpenBackend(t, name, dir)
	if err != nil {
		return err, ""
	}
	emb, err := hash.Open(ctx, hash.Config{Dim: 16})
	if err != nil {
		t.Fatal(err)
	}
	e, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb, Search: core.SearchConfig{DisableAccessTracking: true}})
	if err != nil {
		b.Close()
		return err, ""
	}
	defer e.Close()
	if _, err := e.VerifyAudit(ctx); err != nil {
		return err, ""
	}
	st, err := storeState(ctx, e)
	if err != nil {
		return err, ""
	}
	return nil, st
}
