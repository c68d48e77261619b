package core

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"
)

// Bounds of a trace (TraceRequest).
const (
	DefaultTraceDepth = 10
	MaxTraceDepth     = 100
	DefaultTraceNodes = 100
	MaxTraceNodes     = 1000
)

// TraceRequest asks where a memory came from and what came from it.
type TraceRequest struct {
	ID int64
	// MaxDepth is how many steps the trace follows in each direction
	// (default DefaultTraceDepth, at most MaxTraceDepth); MaxNodes the most
	// memories it lists in both together (default DefaultTraceNodes, at
	// most MaxTraceNodes).
	MaxDepth, MaxNodes int
}

// TraceNode is a memory a trace reached.
type TraceNode struct {
	ID        int64     `json:"id"`
	Version   int       `json:"version"`
	Namespace string    `json:"namespace"`
	Type      Type      `json:"type"`
	Status    Status    `json:"status"`
	Source    string    `json:"source,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// Excerpt is the start of the content.
	Excerpt string `json:"excerpt"`
	// Depth is how many steps away from the traced memory it is.
	Depth int `json:"depth"`
	// Parent is the memory one step closer to the traced one through which
	// the trace reached this one, Via the edge between them (derived_from,
	// or supersedes: the newer memory replaced the older one) and
	// EdgeSource where that edge came from (e.g. capture, consolidate,
	// dream, supersede, or the source of the memory that named it).
	Parent     int64    `json:"parent"`
	Via        EdgeType `json:"via"`
	EdgeSource string   `json:"edge_source,omitempty"`
}

// TraceResult is the provenance of a memory.
type TraceResult struct {
	// Memory is the traced memory at its current version.
	Memory *Memory `json:"memory"`
	// DerivedFrom lists what it came from, transitively: the memories it
	// was derived from or replaced, then theirs, nearest first.
	DerivedFrom []TraceNode `json:"derived_from"`
	// Derived lists what came from it, transitively: the memories derived
	// from it or that replaced it, then theirs, nearest first.
	Derived []TraceNode `json:"derived"`
	// Truncated says the trace stopped at MaxDepth or MaxNodes with more
	// to follow.
	Truncated bool `json:"truncated,omitempty"`
}

// provenance reports whether an edge of type t says that its From came
// from its To.
func provenance(t EdgeType) bool { return t == EdgeDerivedFrom || t == EdgeSupersedes }

// Trace returns the provenance of memory req.ID: its source, what it was
// derived from (transitively) and what was derived from it, following
// derived_from edges (written by capture from a turn to the facts drawn
// from it, by consolidation from a survivor to the duplicates merged into
// it, by dream from a knowledge page to its members, and by remember's
// derived_from) and supersedes edges (from a memory to the one it
// replaced). Each memory is listed once per direction, at its shortest
// distance, so cycles end; memories outside this handle's scope are left
// out, and not followed.
func (e *Engine) Trace(ctx context.Context, req TraceRequest) (*TraceResult, error) {
	const op = "trace"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	switch {
	case req.MaxDepth == 0:
		req.MaxDepth = DefaultTraceDepth
	case req.MaxDepth < 0 || req.MaxDepth > MaxTraceDepth:
		return nil, &Error{Op: op, ID: req.ID, Err: invalidf("max_depth %d is outside 1–%d", req.MaxDepth, MaxTraceDepth)}
	}
	switch {
	case req.MaxNodes == 0:
		req.MaxNodes = DefaultTraceNodes
	case req.MaxNodes < 0 || req.MaxNodes > MaxTraceNodes:
		return nil, &Error{Op: op, ID: req.ID, Err: invalidf("max_nodes %d is outside 1–%d", req.MaxNodes, MaxTraceNodes)}
	}
	var res *TraceResult
	err := e.b.View(ctx, func(tx ReadTx) error {
		m, err := e.getScoped(tx, req.ID, 0)
		if err != nil {
			return err
		}
		m.Embedding.Vector = nil
		if e.access != nil {
			e.access.overlay(m)
		}
		res = &TraceResult{Memory: m, DerivedFrom: []TraceNode{}, Derived: []TraceNode{}}
		budget := req.MaxNodes
		get := func(id int64) (*Memory, error) { return e.getScoped(tx, id, 0) }
		for _, up := range []bool{true, false} {
			nodes, truncated, err := traceWalk(ctx, tx, get, req.ID, up, req.MaxDepth, &budget)
			if err != nil {
				return err
			}
			if up {
				res.DerivedFrom = nodes
			} else {
				res.Derived = nodes
			}
			res.Truncated = res.Truncated || truncated
		}
		return nil
	})
	if err != nil {
		return nil, &Error{Op: op, ID: req.ID, Err: err}
	}
	return res, nil
}

// traceWalk follows provenance edges from id breadth first, towards what
// id came from (up) or what came from it, to at most maxDepth steps and
// *budget memories (which it lowers), reading memories with get (which
// says ErrNotFound outside the caller's scope); it reports whether it
// stopped with more to follow.
func traceWalk(ctx context.Context, tx ReadTx, get func(int64) (*Memory, error), id int64, up bool, maxDepth int, budget *int) ([]TraceNode, bool, error) {
	nodes := []TraceNode{}
	seen := map[int64]bool{id: true}
	frontier := []int64{id}
	for depth := 1; len(frontier) > 0; depth++ {
		var next []int64
		for _, from := range frontier {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
			edges, err := tx.Edges(from)
			if err != nil {
				return nil, false, err
			}
			for _, ed := range edges {
				other := ed.To
				if !up {
					other = ed.From
				}
				if !provenance(ed.Type) || other == from || seen[other] || (up && ed.From != from) || (!up && ed.To != from) {
					continue
				}
				m, err := get(other)
				if errors.Is(err, ErrNotFound) {
					continue // outside the scope: neither listed nor followed
				}
				if err != nil {
					return nil, false, err
				}
				if depth > maxDepth || *budget == 0 {
					return nodes, true, nil
				}
				seen[other] = true
				*budget--
				nodes = append(nodes, TraceNode{ID: m.ID, Version: m.Version, Namespace: m.Namespace, Type: m.Type, Status: m.Status,
					Source: m.Source, CreatedAt: m.CreatedAt, Excerpt: excerpt(m.Content, 160), Depth: depth,
					Parent: from, Via: ed.Type, EdgeSource: ed.Source})
				next = append(next, other)
			}
		}
		frontier = next
	}
	return nodes, false, nil
}

// excerpt returns the start of s, at most n runes, on one line, with "…"
// when it was cut.
func excerpt(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimRightFunc(string(r[:n-1]), unicode.IsSpace) + "…"
}
