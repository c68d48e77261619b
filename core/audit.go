package core

import (
	"context"
	"io"

	"github.com/memos-go/memos/core/internal/govern"
)

// The audit chain lives in core/internal/govern: every write the engine
// makes appends an entry, chained by hash to the one before it, and an
// entry that concerns a memory version binds that version by its
// VersionHash, so that VerifyAudit detects an edit to a stored memory or
// version row, not only to the audit table.

// VersionHash is the SHA-256 an audit entry binds for a memory version: over
// the version's JSON encoding without its access statistics (which change on
// every read and write no version) and the bits of its embedding vector.
// The encoding is canonical, the form every backend reads back: a trust
// score of -0 counts as 0 (SQLite stores both as 0), and metadata is taken
// as it reads back from JSON (numbers as float64, objects with sorted keys,
// -0 as 0), so that a value given in another form does not make the stored
// version look altered.
func VersionHash(m *Memory) string { return govern.VersionHash(m) }

// AuditHash is the chained hash of an audit entry: SHA-256 over the previous
// hash and the entry's fields. Verifiers recompute it for every entry.
func AuditHash(a *AuditEntry) string { return govern.AuditHash(a) }

// auditor appends the audit entries of one transaction (see
// govern.Auditor).
type auditor = govern.Auditor

func (s *shared) auditor(tx Tx) *auditor { return govern.NewAuditor(tx, s.clock) }

// AuditFilter selects audit entries; zero fields select everything.
type AuditFilter = govern.AuditFilter

// AuditReport is what VerifyAudit (or VerifyAuditExport) checked, and what
// it found wrong.
type AuditReport = govern.AuditReport

// AuditProblem is one thing verification found wrong.
type AuditProblem = govern.AuditProblem

// MaxAuditProblems bounds AuditReport.Problems (and the error VerifyAudit
// returns); AuditReport.Broken counts the rest too.
const MaxAuditProblems = govern.MaxAuditProblems

// AuditExport is the file `memos audit export` writes: the whole log, the
// head it ends at, and a SHA-256 over the entries, so that a third party can
// check it with VerifyAuditExport and no store.
type AuditExport = govern.AuditExport

// AuditExportFormat names the current export format.
const AuditExportFormat = govern.AuditExportFormat

// Audit returns the audit log entries that match f, oldest first. The log
// is the store's, not a namespace's: it lists entries of every namespace,
// so a limited handle (Limit) may not read it (ErrForbidden). It needs a
// backend whose ReadTx implements AuditReader.
func (e *Engine) Audit(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	const op = "audit"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if err := e.whole(op); err != nil {
		return nil, err
	}
	var out []AuditEntry
	err := e.b.View(ctx, func(tx ReadTx) (err error) {
		out, err = govern.Audit(tx, f)
		return err
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	return out, nil
}

// VerifyAudit checks that the store has not been altered behind the
// engine's back. It checks the audit log's hash chain (every entry's hash,
// its link to the one before, contiguous sequence numbers, the head the
// store recorded); every stored memory version — the current row and every
// version row — against the entry that bound it when it was written; and
// that the store holds the memories the log says exist, and only those:
//   - a memory some entry binds a version of, and no deletion certificate
//     (forget, quarantine.reject) names, must be in the store;
//   - a memory a deletion certificate names must not be;
//   - a memory in the store must be bound by an entry, unless it was
//     written before the store kept provenance (by an older memos): its
//     versions predate the store's first audit entry and its id is below
//     every id whose creation the log records. Such versions are counted
//     as unbound.
//
// It reports every problem it finds (the first MaxAuditProblems in full):
// the error, wrapping ErrConflict, lists them, and so does the report,
// which also says what was checked.
func (e *Engine) VerifyAudit(ctx context.Context) (*AuditReport, error) {
	const op = "audit verify"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if err := e.whole(op); err != nil {
		return nil, err
	}
	rep := &AuditReport{}
	err := e.b.View(ctx, func(tx ReadTx) error { return govern.Verify(ctx, tx, rep) })
	if err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	if err := govern.Problems(rep); err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	return rep, nil
}

// ExportAudit verifies the store's audit log (VerifyAudit) and writes it to w
// as an AuditExport. It refuses to export a log that does not verify.
func (e *Engine) ExportAudit(ctx context.Context, w io.Writer) (*AuditReport, error) {
	const op = "audit export"
	if err := e.whole(op); err != nil {
		return nil, err
	}
	rep, err := e.VerifyAudit(ctx)
	if err != nil {
		return rep, err
	}
	log, err := e.Audit(ctx, AuditFilter{})
	if err != nil {
		return nil, &Error{Op: op, Err: unwrapOp(err)}
	}
	if err := govern.WriteExport(w, rep.Head, log, e.clock()); err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	return rep, nil
}

// VerifyAuditExport checks an AuditExport read from r with no store: the
// format, the digest over the entries, and the hash chain up to the head.
func VerifyAuditExport(r io.Reader) (*AuditReport, error) {
	const op = "audit verify"
	rep, err := govern.VerifyExport(r)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	if err := govern.Problems(rep); err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	return rep, nil
}

// appendAudit appends one entry in its own auditor.
func (s *shared) appendAudit(tx Tx, action string, id int64, detail string) (*AuditEntry, error) {
	return govern.Append(tx, s.clock, action, id, detail)
}
