package core

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"
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
// req.Strict (see closeOverSource for cycles). Each memory is forgotten as by Forget, with its own deletion
// certificate, in transactions of up to 200 memories. It finds the
// matching memories by a scan of the scope: O(n).
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
	err := e.b.View(ctx, func(tx ReadTx) error {
		return e.closeOverSource(ctx, tx, req, rep)
	})
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	if req.DryRun {
		return rep, nil
	}
	ids := append(slices.Clone(rep.Matched), rep.Derived...)
	hash := sourceHash(req.Source)
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
			return au.close()
		})
		if err != nil {
			if start > 0 {
				_ = e.forgotten(ctx)
			}
			return rep, &Error{Op: op, Err: err}
		}
		rep.Certificates = append(rep.Certificates, certs...)
	}
	if len(ids) > 0 {
		if err := e.forgotten(ctx); err != nil {
			return rep, &Error{Op: op, Err: err}
		}
		st := e.Erasure(ctx)
		for _, c := range rep.Certificates {
			c.ErasureStatus = st
		}
	}
	return rep, nil
}

// closeOverSource fills rep's Matched, Derived and Kept. Derived is the
// largest set of memories reachable from the matching ones over incoming
// derived_from edges in which every member is derived only from matching
// memories or members (with Strict: every reachable memory). So a cycle of
// derived_from edges that hangs off the source goes with it, and a memory
// that is also derived from something that stays is kept, with everything
// derived from it alone.
func (e *Engine) closeOverSource(ctx context.Context, tx ReadTx, req ForgetSourceRequest, rep *ForgetSourceReport) error {
	matched := map[int64]bool{}
	nss := slices.DeleteFunc(e.scope(), func(ns string) bool { return !e.mayChange(ns) })
	err := tx.Scan(ScanOptions{Filter: Filter{Namespaces: nss}}, func(m *Memory) error {
		if SourceMatches(m.Source, req.Source) {
			matched[m.ID] = true
			rep.Matched = append(rep.Matched, m.ID)
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	// Walk the memories derived from the matching ones, breadth first,
	// noting each one's derived_from targets.
	targets := map[int64][]int64{}
	reach := map[int64]bool{}
	var order []int64
	frontier := slices.Clone(rep.Matched)
	for len(frontier) > 0 {
		var next []int64
		for _, id := range frontier {
			edges, err := tx.Edges(id)
			if err != nil {
				return err
			}
			for _, ed := range edges {
				child := ed.From
				if ed.Type != EdgeDerivedFrom || ed.To != id || matched[child] || reach[child] {
					continue
				}
				m, err := tx.Get(child, 0)
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if !e.inScope(m) || !e.mayChange(m.Namespace) {
					continue
				}
				ces, err := tx.Edges(child)
				if err != nil {
					return err
				}
				for _, ce := range ces {
					if ce.Type == EdgeDerivedFrom && ce.From == child {
						targets[child] = append(targets[child], ce.To)
					}
				}
				reach[child] = true
				order = append(order, child)
				next = append(next, child)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		frontier = next
	}
	kept := map[int64]bool{}
	for changed := !req.Strict; changed; {
		changed = false
		for _, id := range order {
			if !reach[id] {
				continue
			}
			for _, t := range targets[id] {
				if !matched[t] && !reach[t] {
					delete(reach, id)
					kept[id], changed = true, true
					break
				}
			}
		}
	}
	for _, id := range order {
		if reach[id] {
			rep.Derived = append(rep.Derived, id)
		}
	}
	for id := range kept {
		rep.Kept = append(rep.Kept, id)
	}
	slices.Sort(rep.Kept)
	return nil
}
