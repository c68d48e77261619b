package core_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
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
