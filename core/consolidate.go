package core

import (
	"context"
	"time"

	"github.com/memos-go/memos/core/internal/consolidate"
)

// Consolidation lives in core/internal/consolidate; this file is the
// engine's facade over it.

// ConsolidateConfig holds the thresholds of consolidation; zero fields take
// the defaults noted, chosen on the LoCoMo dev turns.
type ConsolidateConfig = consolidate.Config

// ConsolidateRequest says what Consolidate does.
type ConsolidateRequest = consolidate.Request

// ConsolidateReport says what Consolidate did (or, in a dry run, would do).
type ConsolidateReport = consolidate.Report

// Merge is one group of duplicates: the survivor keeps the others'
// entities, sources and access counts and is derived_from them; they are
// archived.
type Merge = consolidate.Merge

// Archival is a memory archived as stale.
type Archival = consolidate.Archival

// PageChange is a knowledge page written (created or refreshed) or left
// alone (unchanged).
type PageChange = consolidate.PageChange

// Consolidate tidies this handle's namespace (not the shared default one,
// unless it is the handle's): it merges duplicates, archives stale
// memories and, with req.Pages, distils clusters into knowledge pages. It
// never deletes: merged and stale memories are archived (invisible to
// recall, kept with their history), and every change is a new version with
// an audit entry. Each merge group, each batch of archivals and each page is
// its own transaction, so searches are never blocked for long and an
// interrupted run leaves the store consistent; running again finishes the
// work, and a run with nothing to do writes nothing.
func (e *Engine) Consolidate(ctx context.Context, req ConsolidateRequest) (*ConsolidateReport, error) {
	const op = "consolidate"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	start := time.Now()
	if req.Pages && (e.summarizer == nil || e.emb == nil) {
		return nil, &Error{Op: op, Err: invalidf("knowledge pages need an embedder and a summarizer")}
	}
	e.flushAccesses() // archiving and merges read the access statistics
	if err := e.vec.Sync(ctx); err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	d := consolidate.Deps{Backend: e.b, Namespace: e.ns, Model: e.model, Sync: e.vec.Sync, Embed: e.embed,
		Summarizer: e.summarizer, PutVersion: e.putVersion, Clock: e.clock,
		Get: func(tx ReadTx, id int64) (*Memory, error) { return e.getScoped(tx, id, 0) }}
	if e.emb != nil {
		d.Search = func(ctx context.Context, q []float32, k int, f VectorFilter) ([]Hit, error) {
			return e.vec.Search(ctx, q, k, f)
		}
	}
	rep, err := consolidate.Run(ctx, d, e.consolidate, req)
	if err != nil {
		return rep, &Error{Op: op, Err: err}
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// ConsolidateEvery runs Consolidate with req every interval until ctx ends,
// calling report (if not nil) with each run's result; it returns when ctx
// ends, after the run in progress, if any, stops at its next transaction.
// A run that fails is reported and the next one tries again.
func (e *Engine) ConsolidateEvery(ctx context.Context, interval time.Duration, req ConsolidateRequest, report func(*ConsolidateReport, error)) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rep, err := e.Consolidate(ctx, req)
		if report != nil && ctx.Err() == nil {
			report(rep, err)
		}
	}
}
