package core

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memos-go/memos/core/internal/govern"
)

// ForgetSourceRequest asks ForgetSource to remove everything that came from
// a source.
type ForgetSourceRequest struct {
	// Source is matched exactly or as a prefix ending at a separator (see
	// SourceMatches): "conversation:7" takes conversation:7#turn-3 but not
	// conversation:70. Required.
	Source string `json:"source"`
	// DryRun lists what would be forgotten and forgets nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Strict also forgets a memory derived from a forgotten one and from
	// others that stay; by default such a memory survives.
	Strict bool   `json:"strict,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// ForgetSourceReport says what ForgetSource forgot (or, on a dry run, would
// forget).
type ForgetSourceReport struct {
	Source string `json:"source"`
	DryRun bool   `json:"dry_run,omitempty"`
	// Matched are the memories whose source matched; Derived those
	// forgotten because they were derived (transitively, over derived_from)
	// from forgotten ones; Kept those derived from forgotten ones that
	// survive because they are also derived from memories that stay.
	Matched []int64 `json:"matched"`
	Derived []int64 `json:"derived"`
	Kept    []int64 `json:"kept"`
	// Certificates holds one deletion certificate per forgotten memory
	// (none on a dry run).
	Certificates []*DeletionCertificate `json:"certificates"`
}

// forgetSourceBatch is how many memories one transaction forgets: a large
// source does not hold the write lock for long, and a failure part way
// keeps the batches already committed (each fully certified).
const forgetSourceBatch = 200

// ForgetSource forgets every memory in scope (on a limited handle: in its
// namespaces, see Limit) whose source matches
// req.Source and, transitively, every memory derived from them through
// derived_from edges (A —derived_from→ B: A was derived from B). A derived
// memory that is also derived from memories that stay survives unless
// req.Strict; a cycle of derived_from edges that hangs off the source goes
// with it (see govern.CloseOverSource). Each memory is forgotten as by
// Forget, with its own deletion certificate, in transactions of up to 200
// memories. It finds the matching memories by a scan of the scope: O(n).
func (e *Engine) ForgetSource(ctx context.Context, req ForgetSourceRequest) (*ForgetSourceReport, error) {
	const op = "forget source"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Source) == "" {
		return nil, &Error{Op: op, Err: errEmptySource}
	}
	if !utf8.ValidString(req.Source) || len(req.Source) > 4096 {
		return nil, &Error{Op: op, Err: invalidf("source must be valid UTF-8 of at most 4096 bytes")}
	}
	if err := checkNote("reason", req.Reason); err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	rep := &ForgetSourceReport{Source: req.Source, DryRun: req.DryRun, Matched: []int64{}, Derived: []int64{},
		Kept: []int64{}, Certificates: []*DeletionCertificate{}}
	// The memories this handle reads and may change.
	nss := slices.DeleteFunc(e.scope(), func(ns string) bool { return !e.mayChange(ns) })
	may := func(m *Memory) bool { return e.inScope(m) && e.mayChange(m.Namespace) }
	err := e.b.View(ctx, func(tx ReadTx) error {
		c, err := govern.CloseOverSource(ctx, tx, req.Source, req.Strict, nss, may)
		if err != nil {
			return err
		}
		rep.Matched = append(rep.Matched[:0], c.Matched...)
		rep.Derived = append(rep.Derived[:0], c.Derived...)
		rep.Kept = append(rep.Kept[:0], c.Kept...)
		return nil
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	if req.DryRun {
		return rep, nil
	}
	ids := append(slices.Clone(rep.Matched), rep.Derived...)
	hash := govern.SourceHash(req.Source)
	for start := 0; start < len(ids); start += forgetSourceBatch {
		batch := ids[start:min(start+forgetSourceBatch, len(ids))]
		var certs []*DeletionCertificate
		err := e.b.Update(ctx, func(tx Tx) error {
			certs = certs[:0]
			au := e.auditor(tx)
			for _, id := range batch {
				cert, err := e.forgetTx(tx, au, "forget", id, req.Reason, map[string]any{"forget_source_sha256": hash})
				if errors.Is(err, ErrNotFound) {
					continue // forgotten meanwhile
				}
				if err != nil {
					return err
				}
				certs = append(certs, cert)
			}
			return au.Close()
		})
		if err != nil {
			if start > 0 {
				_ = e.vec.Forgotten(ctx)
			}
			return rep, &Error{Op: op, Err: err}
		}
		rep.Certificates = append(rep.Certificates, certs...)
	}
	if len(ids) > 0 {
		if err := e.vec.Forgotten(ctx); err != nil {
			return rep, &Error{Op: op, Err: err}
		}
		st := e.Erasure(ctx)
		for _, c := range rep.Certificates {
			c.ErasureStatus = st
		}
	}
	return rep, nil
}
