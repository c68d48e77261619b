package core

import (
	"context"
	"errors"
	"fmt"
)

// Audit returns the audit log, oldest first: provenance, quarantine
// decisions and deletions. It needs a backend whose ReadTx implements
// AuditReader.
func (e *Engine) Audit(ctx context.Context) ([]AuditEntry, error) {
	const op = "audit"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	var out []AuditEntry
	err := e.b.View(ctx, func(tx ReadTx) error {
		ar, ok := tx.(AuditReader)
		if !ok {
			return fmt.Errorf("%w: this backend cannot list its audit log", ErrInvalid)
		}
		return ar.Audit(func(a AuditEntry) error {
			out = append(out, a)
			return nil
		})
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	return out, nil
}

// VerifyAudit recomputes the hash chain of the audit log and returns the
// number of entries checked, or an error naming the first entry that does
// not match (the log was altered).
func (e *Engine) VerifyAudit(ctx context.Context) (int, error) {
	log, err := e.Audit(ctx)
	if err != nil {
		return 0, err
	}
	prev := ""
	for i := range log {
		a := &log[i]
		if a.PrevHash != prev {
			return i, &Error{Op: "audit verify", Err: fmt.Errorf("%w: entry %d does not chain to the entry before it", ErrConflict, a.Seq)}
		}
		if h := AuditHash(a); h != a.Hash {
			return i, &Error{Op: "audit verify", Err: fmt.Errorf("%w: entry %d was altered (hash %s, recomputed %s)", ErrConflict, a.Seq, a.Hash, h)}
		}
		prev = a.Hash
	}
	// The head recorded with the last write catches a log cut short at the end.
	var head string
	err = e.b.View(ctx, func(tx ReadTx) error {
		var err error
		head, err = tx.Meta(metaAuditHead)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return 0, &Error{Op: "audit verify", Err: err}
	}
	if head != prev {
		return len(log), &Error{Op: "audit verify", Err: fmt.Errorf("%w: the log ends at hash %q but the store recorded head %q: entries were removed", ErrConflict, prev, head)}
	}
	return len(log), nil
}
