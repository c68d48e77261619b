package core_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

// traced returns each node of ns as "id@depth via parent".
func traced(ns []core.TraceNode) []string {
	out := []string{}
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%d@%d %s %d", n.ID, n.Depth, n.Via, n.Parent))
	}
	return out
}

func trace(t *testing.T, e *core.Engine, req core.TraceRequest) *core.TraceResult {
	t.Helper()
	res, err := e.Trace(context.Background(), req)
	if err != nil {
		t.Fatalf("Trace(%+v): %v", req, err)
	}
	return res
}

// TestTraceCapture checks the provenance capture and supersede record: a
// fact extracted from a turn traces back to the turn (and its source),
// the memory that superseded the fact traces back through it to the turn,
// and the turn lists both as derived from it.
func TestTraceCapture(t *testing.T) {
	ctx := context.Background()
	e := openCapture(t, rules(t))
	res, err := e.Capture(ctx, core.CaptureRequest{Session: "chat-7", Turns: []core.Turn{
		{Speaker: "Melanie", Text: "I love painting landscapes with my kids.", Time: captureDay},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 1 {
		t.Fatalf("capture extracted %d memories, want 1", len(res.Memories))
	}
	turn, fact := res.Turns[0], res.Memories[0]
	newer, err := e.Supersede(ctx, fact.ID, core.Input{Content: "Melanie now paints portraits with her kids"})
	if err != nil {
		t.Fatal(err)
	}

	tr := trace(t, e, core.TraceRequest{ID: fact.ID})
	if tr.Memory.ID != fact.ID || tr.Memory.Source != "session:chat-7" || tr.Truncated {
		t.Errorf("trace of the fact: memory %d source %q truncated %v", tr.Memory.ID, tr.Memory.Source, tr.Truncated)
	}
	if got, want := traced(tr.DerivedFrom), []string{fmt.Sprintf("%d@1 derived_from %d", turn, fact.ID)}; !slices.Equal(got, want) {
		t.Errorf("the fact derived from %v, want %v", got, want)
	}
	if n := tr.DerivedFrom[0]; n.Source != "session:chat-7#turn-1" || n.EdgeSource != "capture" || n.Type != core.TypeTurn ||
		n.Version != 1 || !strings.HasPrefix(n.Excerpt, "Melanie: I love painting") {
		t.Errorf("the turn's node: %+v", n)
	}
	if got, want := traced(tr.Derived), []string{fmt.Sprintf("%d@1 supersedes %d", newer.ID, fact.ID)}; !slices.Equal(got, want) {
		t.Errorf("derived from the fact: %v, want %v", got, want)
	}
	if tr.Memory.Version != 2 || tr.Memory.ValidTo.IsZero() {
		t.Errorf("the superseded fact is at version %d, valid to %v; want version 2 with its validity ended", tr.Memory.Version, tr.Memory.ValidTo)
	}

	tr = trace(t, e, core.TraceRequest{ID: newer.ID})
	want := []string{fmt.Sprintf("%d@1 supersedes %d", fact.ID, newer.ID), fmt.Sprintf("%d@2 derived_from %d", turn, fact.ID)}
	if got := traced(tr.DerivedFrom); !slices.Equal(got, want) || len(tr.Derived) != 0 {
		t.Errorf("the newer memory derived from %v, want %v; derived %v, want none", got, want, traced(tr.Derived))
	}
	tr = trace(t, e, core.TraceRequest{ID: turn})
	want = []string{fmt.Sprintf("%d@1 derived_from %d", fact.ID, turn), fmt.Sprintf("%d@2 supersedes %d", newer.ID, fact.ID)}
	if got := traced(tr.Derived); !slices.Equal(got, want) || len(tr.DerivedFrom) != 0 {
		t.Errorf("derived from the turn: %v, want %v; the turn derived from %v, want nothing", got, want, traced(tr.DerivedFrom))
	}
}

// TestTraceConsolidate checks that a survivor of consolidation traces back
// to the duplicate merged into it.
func TestTraceConsolidate(t *testing.T) {
	ctx := context.Background()
	clock := &settableClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := openDream(t, "sqlite", clock)
	keep := remember(t, e, core.Input{Content: "Alice's home lab runs Proxmox on three nodes", TrustLevel: core.TrustCertain, Source: "chat:1"})
	dup := remember(t, e, core.Input{Content: "Alice's home lab runs Proxmox on three nodes.", Source: "chat:2"})
	rep, err := e.Consolidate(ctx, core.ConsolidateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Merges) != 1 || rep.Merges[0].Survivor != keep.ID {
		t.Fatalf("consolidation merged %+v; want %d kept", rep.Merges, keep.ID)
	}
	tr := trace(t, e, core.TraceRequest{ID: keep.ID})
	if len(tr.DerivedFrom) != 1 || tr.DerivedFrom[0].ID != dup.ID || tr.DerivedFrom[0].EdgeSource != "consolidate" ||
		tr.DerivedFrom[0].Status != core.StatusArchived || tr.DerivedFrom[0].Source != "chat:2" {
		t.Errorf("the survivor derived from %+v; want the archived duplicate %d from chat:2, linked by consolidate", tr.DerivedFrom, dup.ID)
	}
}

// TestTraceBounds checks that a trace ends on cycles, stops at its depth
// and node bounds saying it did, leaves out (and does not follow) memories
// of other namespaces, and refuses bounds out of range.
func TestTraceBounds(t *testing.T) {
	ctx := context.Background()
	e := openAt(t, filepath.Join(t.TempDir(), "memory.db"), core.Options{Namespace: "project:a"})
	defer e.Close()
	// A chain c0 ← c1 ← ... ← c5 (each derived from the one before).
	var chain []*core.Memory
	for i := range 6 {
		in := core.Input{Content: fmt.Sprintf("step %d of the chain", i)}
		if i > 0 {
			in.DerivedFrom = []int64{chain[i-1].ID}
		}
		chain = append(chain, remember(t, e, in))
	}
	tr := trace(t, e, core.TraceRequest{ID: chain[5].ID})
	if len(tr.DerivedFrom) != 5 || tr.Truncated || tr.DerivedFrom[4].ID != chain[0].ID || tr.DerivedFrom[4].Depth != 5 {
		t.Errorf("the whole chain: %v truncated %v", traced(tr.DerivedFrom), tr.Truncated)
	}
	tr = trace(t, e, core.TraceRequest{ID: chain[5].ID, MaxDepth: 2})
	if got := traced(tr.DerivedFrom); len(got) != 2 || !tr.Truncated || tr.DerivedFrom[1].ID != chain[3].ID {
		t.Errorf("max depth 2: %v truncated %v; want c4, c3 and truncated", got, tr.Truncated)
	}
	tr = trace(t, e, core.TraceRequest{ID: chain[2].ID, MaxNodes: 3})
	if len(tr.DerivedFrom)+len(tr.Derived) != 3 || !tr.Truncated {
		t.Errorf("max nodes 3: %v and %v, truncated %v; want 3 and truncated", traced(tr.DerivedFrom), traced(tr.Derived), tr.Truncated)
	}

	// A cycle: c0 derived from c5 as well.
	if _, err := e.Link(ctx, core.Edge{From: chain[0].ID, To: chain[5].ID, Type: core.EdgeDerivedFrom}); err != nil {
		t.Fatal(err)
	}
	tr = trace(t, e, core.TraceRequest{ID: chain[0].ID})
	if len(tr.DerivedFrom) != 5 || len(tr.Derived) != 5 || tr.Truncated {
		t.Errorf("in a cycle of 6: derived from %v, derived %v; want the 5 others each way", traced(tr.DerivedFrom), traced(tr.Derived))
	}

	// A memory of another namespace that c3 names is neither listed nor
	// followed; tracing it from here is not found.
	other, err := e.In("project:b")
	if err != nil {
		t.Fatal(err)
	}
	x := remember(t, other, core.Input{Content: "a note of project b"})
	y := remember(t, other, core.Input{Content: "what project b drew from it", DerivedFrom: []int64{x.ID}})
	err = e.Backend().Update(ctx, func(tx core.Tx) error {
		return tx.Link(core.Edge{From: chain[3].ID, To: y.ID, Type: core.EdgeDerivedFrom, Weight: 1, CreatedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	tr = trace(t, e, core.TraceRequest{ID: chain[3].ID})
	for _, n := range append(tr.DerivedFrom, tr.Derived...) {
		if n.Namespace != "project:a" {
			t.Errorf("the trace of c3 lists memory %d of %s", n.ID, n.Namespace)
		}
	}
	if _, err := e.Trace(ctx, core.TraceRequest{ID: y.ID}); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("trace of another namespace's memory: %v, want ErrNotFound", err)
	}
	for _, req := range []core.TraceRequest{{ID: chain[0].ID, MaxDepth: -1}, {ID: chain[0].ID, MaxDepth: 101}, {ID: chain[0].ID, MaxNodes: 1001}} {
		if _, err := e.Trace(ctx, req); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("Trace(%+v): %v, want ErrInvalid", req, err)
		}
	}
}
