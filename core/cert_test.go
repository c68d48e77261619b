package core_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// The deletion certificate stays in the audit log for good, so it keeps a
// SHA-256 of the forgotten memory's source, never the source itself.
func TestDeletionCertificateHashesSource(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	const source = "file:clinic-visit-oncology.md"
	m := remember(t, e, core.Input{Content: "appointment on tuesday", Source: source})
	cert, err := e.Forget(ctx, m.ID, "user asked")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(source))
	if cert.SourceHash != hex.EncodeToString(sum[:]) {
		t.Fatalf("certificate source_sha256 = %q, want the SHA-256 of %q", cert.SourceHash, source)
	}
	audit, err := e.Audit(ctx, core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range audit {
		if strings.Contains(a.Detail, "oncology") {
			t.Fatalf("audit entry %d keeps the forgotten memory's source: %s", a.Seq, a.Detail)
		}
	}
	if rep, err := e.VerifyAudit(ctx); err != nil || rep.Entries != len(audit) {
		t.Fatalf("verify audit: %+v, %v", rep, err)
	}
}

// A certificate's erasure is what the backend says of itself: sqlite and
// bolt remove every byte and say how; a backend that says nothing gets
// "unknown", never "complete".
func TestDeletionCertificateErasureFromBackend(t *testing.T) {
	ctx := context.Background()
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sq, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	bo, err := bolt.Open(ctx, bolt.Config{Path: filepath.Join(dir, "memory.bolt")})
	if err != nil {
		t.Fatal(err)
	}
	other, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "other.db")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		b    core.Backend
		want string
		done []string // words of the lines of what was done
	}{
		{"sqlite", sq, core.ErasureComplete, []string{"secure_delete", "checkpointed"}},
		{"bolt", bo, core.ErasureComplete, []string{"keyword index", "free page"}},
		{"silent backend", silent{other}, core.ErasureUnknown, nil},
	} {
		e, err := core.Open(ctx, core.Options{Backend: c.b, Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		m := remember(t, e, core.Input{Content: "the alarm code is 9120"})
		cert, err := e.Forget(ctx, m.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		if cert.Erasure != c.want || len(cert.ErasureDone) != len(c.done) || len(cert.ErasurePending) != 0 {
			t.Errorf("%s: certificate erasure %q, done %q, pending %q; want %q with %d lines done, nothing pending",
				c.name, cert.Erasure, cert.ErasureDone, cert.ErasurePending, c.want, len(c.done))
		}
		for i, w := range c.done {
			if i < len(cert.ErasureDone) && !strings.Contains(cert.ErasureDone[i], w) {
				t.Errorf("%s: done line %q does not mention %q", c.name, cert.ErasureDone[i], w)
			}
		}
		if (c.want == core.ErasureUnknown) != (len(cert.ErasureOutOfReach) > 0) {
			t.Errorf("%s: out of reach %q", c.name, cert.ErasureOutOfReach)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// silent is a backend without the optional interfaces that say what a
// delete leaves.
type silent struct{ core.Backend }
