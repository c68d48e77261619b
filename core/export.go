package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ExportedMemory is one memory as Export reads it: every version, oldest
// first, and the edges that start at it (each edge is reported once, by the
// memory it starts from).
type ExportedMemory struct {
	Versions []*Memory
	Edges    []Edge
}

// ExportOptions selects what Export reads.
type ExportOptions struct {
	// Namespaces limits the export to these namespaces; nil exports every
	// namespace of the store (not only this handle's scope).
	Namespaces []string
	// Statuses limits the export to memories whose current status is one of
	// these; nil exports every status (active, quarantined, archived).
	Statuses []Status
}

// exportBatch is how many memories one read transaction of Export covers.
const exportBatch = 256

// Export calls fn for every memory that opts selects, in ascending id order,
// with its whole history and outgoing edges; it stops at the first error fn
// returns. It reads in transactions of 256 memories, so a long export does
// not hold one read snapshot, and writes made meanwhile may or may not be
// seen. Embeddings are included (Memory.Embedding).
func (e *Engine) Export(ctx context.Context, opts ExportOptions, fn func(ExportedMemory) error) error {
	const op = "export"
	if err := e.checkOpen(op); err != nil {
		return err
	}
	if err := e.whole(op); err != nil {
		return err
	}
	for _, ns := range opts.Namespaces {
		if err := ValidateNamespace(ns); err != nil {
			return &Error{Op: op, Err: err}
		}
	}
	e.flushAccesses() // the export carries the access statistics
	var ids []int64
	err := e.b.View(ctx, func(tx ReadTx) error {
		return tx.Scan(ScanOptions{Filter: Filter{Namespaces: opts.Namespaces, Statuses: opts.Statuses}}, func(m *Memory) error {
			ids = append(ids, m.ID)
			return nil
		})
	})
	if err != nil {
		return &Error{Op: op, Err: err}
	}
	for start := 0; start < len(ids); start += exportBatch {
		batch := ids[start:min(start+exportBatch, len(ids))]
		var out []ExportedMemory
		err := e.b.View(ctx, func(tx ReadTx) error {
			for _, id := range batch {
				h, err := tx.History(id)
				if errors.Is(err, ErrNotFound) {
					continue // forgotten since the scan
				}
				if err != nil {
					return fmt.Errorf("memory %d: %w", id, err)
				}
				es, err := tx.Edges(id)
				if err != nil {
					return fmt.Errorf("memory %d: %w", id, err)
				}
				es = slices.DeleteFunc(es, func(ed Edge) bool { return ed.From != id })
				out = append(out, ExportedMemory{Versions: h, Edges: es})
			}
			return nil
		})
		if err != nil {
			return &Error{Op: op, Err: err}
		}
		for _, m := range out {
			if err := fn(m); err != nil {
				return err
			}
		}
	}
	return nil
}
