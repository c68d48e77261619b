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

// ForgetSource forgets every memory in scope whose source matches
// req.Source and, transitively, every memory derived from them through
// derived_from edges (A —derived_from→ B: A was derived from B). A derived
// memory that is also derived from memories that stay survives unless
// req.Strict. Each memory is forgotten as by Forget, with its own deletion
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
	}
	return rep, nil
}

// closeOverSource fills rep's Matched, Derived and Kept: the least set that
// holds the matching memories and every memory derived from the set — only
// from the set, unless Strict. A cycle of derived_from edges outside the
// set therefore keeps its members.
func (e *Engine) closeOverSource(ctx context.Context, tx ReadTx, req ForgetSourceRequest, rep *ForgetSourceReport) error {
	gone := map[int64]bool{}
	err := tx.Scan(ScanOptions{Filter: Filter{Namespaces: e.scope()}}, func(m *Memory) error {
		if SourceMatches(m.Source, req.Source) {
			gone[m.ID] = true
			rep.Matched = append(rep.Matched, m.ID)
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	// derivedFrom caches each memory's derived_from targets.
	derivedFrom := map[int64][]int64{}
	targets := func(id int64) ([]int64, error) {
		if ts, ok := derivedFrom[id]; ok {
			return ts, nil
		}
		edges, err := tx.Edges(id)
		if err != nil {
			return nil, err
		}
		ts := []int64{}
		for _, ed := range edges {
			if ed.Type == EdgeDerivedFrom && ed.From == id {
				ts = append(ts, ed.To)
			}
		}
		derivedFrom[id] = ts
		return ts, nil
	}
	kept := map[int64]bool{}
	frontier := slices.Clone(rep.Matched)
	for len(frontier) > 0 {
		var next []int64
		for _, id := range frontier {
			edges, err := tx.Edges(id)
			if err != nil {
				return err
			}
			for _, ed := range edges {
				if ed.Type != EdgeDerivedFrom || ed.To != id || gone[ed.From] {
					continue
				}
				child := ed.From
				m, err := tx.Get(child, 0)
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if !e.inScope(m) {
					continue
				}
				ts, err := targets(child)
				if err != nil {
					return err
				}
				all := true
				for _, t := range ts {
					all = all && gone[t]
				}
				if all || req.Strict {
					gone[child] = true
					delete(kept, child)
					rep.Derived = append(rep.Derived, child)
					next = append(next, child)
				} else {
					kept[child] = true
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		frontier = next
	}
	for id := range kept {
		rep.Kept = append(rep.Kept, id)
	}
	slices.Sort(rep.Kept)
	return nil
}
