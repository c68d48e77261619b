package core

import (
	"context"

	"github.com/memos-go/memos/core/internal/importing"
)

// Import's engine lives in core/internal/importing; these are the names a
// user of the engine gives it.
type (
	// ImportedMemory is one memory with its whole history, as an export or
	// another memory system holds it.
	ImportedMemory = importing.Memory
	// ImportedEdge is an edge between two memories of the same import.
	ImportedEdge = importing.Edge
	// ImportRequest is what Import stores.
	ImportRequest = importing.Request
	// ImportReport says what Import stored.
	ImportReport = importing.Report
)

// Import stores memories with their history and the edges between them. It
// validates everything before it writes anything: an invalid version or edge
// is an ErrInvalid naming it (ImportedMemory.Name), and nothing is stored. It
// then writes in transactions of 256 memories; the edges follow in one more.
//
// Import is idempotent: a memory is skipped when the store already holds one
// in the same namespace with the same creation time and the same first
// version's content, so that running an import again (also after an
// interruption) adds only what is missing. An edge the store already holds
// with the same weight and source is skipped too; others are added or
// replace the edge of the same ends and type.
func (e *Engine) Import(ctx context.Context, req ImportRequest) (*ImportReport, error) {
	const op = "import"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if err := e.whole(op); err != nil {
		return nil, err
	}
	d := importing.Deps{Backend: e.b, Namespace: e.ns, Model: e.model, Embed: e.embed, Clock: e.clock}
	rep, err := importing.Run(ctx, d, req)
	if err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	if !req.DryRun {
		if err := e.vec.Sync(ctx); err != nil {
			return rep, &Error{Op: op, Err: err}
		}
	}
	return rep, nil
}
