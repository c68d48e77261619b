package core

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/memos-go/memos/core/internal/govern"
)

// ReviewItem is a memory waiting in the review queue, with why the policy
// held it and the memories it would contradict.
type ReviewItem = govern.ReviewItem

// ContradictedMemory is the other side of a contradiction.
type ContradictedMemory = govern.ContradictedMemory

// Review lists the review queue: the quarantined memories in scope, oldest
// first, each with the reasons recorded when it was quarantined and the
// memories it contradicts.
func (e *Engine) Review(ctx context.Context) ([]ReviewItem, error) {
	p, err := e.ReviewPage(ctx, ReviewRequest{})
	if err != nil {
		return nil, err
	}
	return p.Items, nil
}

// ReviewRequest selects a page of the review queue, which is in id order
// (oldest first).
type ReviewRequest struct {
	// After lists the memories whose id is above it: the Next of the page
	// before (0: from the start).
	After int64 `json:"after,omitempty"`
	// Limit is the most memories the page holds (0: every one).
	Limit int `json:"limit,omitempty"`
}

// ReviewPage is a page of the review queue.
type ReviewPage struct {
	Items []ReviewItem `json:"items"`
	// Next is the After of the page after this one, 0 when none follows.
	Next int64 `json:"next,omitempty"`
}

// ReviewPage lists a page of the review queue (see Review): only its
// memories' reasons and contradictions are read.
func (e *Engine) ReviewPage(ctx context.Context, req ReviewRequest) (*ReviewPage, error) {
	const op = "review"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if req.Limit < 0 || req.After < 0 {
		return nil, &Error{Op: op, Err: Invalidf("after %d, limit %d: neither may be negative", req.After, req.Limit)}
	}
	p := &ReviewPage{}
	err := e.b.View(ctx, func(tx ReadTx) (err error) {
		p.Items, p.Next, err = govern.Review(ctx, tx, e.scope(), e.inScope, govern.ReviewRange{After: req.After, Limit: req.Limit})
		return err
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	return p, nil
}

// ReleaseOptions change a memory on its release from the review queue.
type ReleaseOptions struct {
	// TrustLevel, if set, gives the released memory this trust level (and
	// its default score).
	TrustLevel TrustLevel `json:"trust_level,omitempty"`
	// Note is recorded in the audit entry.
	Note string `json:"note,omitempty"`
}

// Release lets a quarantined memory into recall: a new version with status
// active (and opts.TrustLevel, if set), recorded in the audit log. Releasing
// a memory that is not quarantined is ErrInvalid and changes nothing.
func (e *Engine) Release(ctx context.Context, id int64, opts ReleaseOptions) (*Memory, error) {
	const op = "quarantine release"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if opts.TrustLevel != "" {
		if _, err := ParseTrustLevel(string(opts.TrustLevel)); err != nil {
			return nil, &Error{Op: op, ID: id, Err: err}
		}
	}
	if err := checkNote("note", opts.Note); err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	return e.writeVersionDetail(ctx, "quarantine.release", id, func(cur *Memory) (*Memory, map[string]any, error) {
		if cur.Status != StatusQuarantined {
			return nil, nil, notQuarantined(cur)
		}
		next := cur.Clone()
		next.Status = StatusActive
		if opts.TrustLevel != "" {
			next.Trust = Trust{Level: opts.TrustLevel, Score: opts.TrustLevel.DefaultScore()}
		}
		d := map[string]any{}
		if opts.Note != "" {
			d["note"] = opts.Note
		}
		return next, d, nil
	})
}

// Reject removes a quarantined memory the way Forget does — every version,
// index entry, vector and edge — and returns its deletion certificate,
// recorded in the audit log as a quarantine.reject entry with the reason.
// Rejecting a memory that is not quarantined is ErrInvalid.
func (e *Engine) Reject(ctx context.Context, id int64, reason string) (*DeletionCertificate, error) {
	const op = "quarantine reject"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if err := checkNote("reason", reason); err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	var cert *DeletionCertificate
	err := e.b.Update(ctx, func(tx Tx) error {
		cur, err := e.getWritable(tx, id)
		if err != nil {
			return err
		}
		if cur.Status != StatusQuarantined {
			return notQuarantined(cur)
		}
		au := e.auditor(tx)
		if cert, err = e.forgetTx(tx, au, "quarantine.reject", id, reason, nil); err != nil {
			return err
		}
		return au.Close()
	})
	if err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	if err := e.vec.Forgotten(ctx); err != nil {
		return nil, &Error{Op: op, ID: id, Err: err}
	}
	cert.ErasureStatus = e.Erasure(ctx)
	return cert, nil
}

func notQuarantined(m *Memory) error {
	return invalidf("memory %d is not quarantined (its status is %s); only memories in the review queue can be released or rejected (see memos quarantine list)", m.ID, m.Status)
}

// checkNote validates a free-text note or reason.
func checkNote(name, s string) error {
	if !utf8.ValidString(s) || len(s) > 4096 {
		return invalidf("%s must be valid UTF-8 of at most 4096 bytes", name)
	}
	return nil
}

// errEmptySource is the error for a forget-source without a source.
var errEmptySource = fmt.Errorf("%w: the source is empty; give the source to forget, e.g. conversation:7", ErrInvalid)
