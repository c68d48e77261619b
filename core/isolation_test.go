package core_test

import (
	"context"
	"testing"

	"github.com/memos-go/memos/core"
)

// A read sees its namespace and default, also through edges: project:b must
// not learn of a project:a memory linked to a shared one, neither from
// Edges nor from graph expansion in search and packs.
func TestNamespaceIsolationEdges(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	a, err := e.In("project:a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.In("project:b")
	if err != nil {
		t.Fatal(err)
	}
	shared := remember(t, e, core.Input{Content: "the deploy runbook lives in the wiki"})
	secret := remember(t, a, core.Input{Content: "project a deploys with the kestrel pipeline"})
	own := remember(t, b, core.Input{Content: "project b deploys by hand"})
	for _, from := range []int64{secret.ID, own.ID} {
		h := a
		if from == own.ID {
			h = b
		}
		if _, err := h.Link(ctx, core.Edge{From: from, To: shared.ID, Type: core.EdgeSupports}); err != nil {
			t.Fatal(err)
		}
	}

	es, err := b.Edges(ctx, shared.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].From != own.ID {
		t.Fatalf("project:b edges of shared memory %d = %+v; want only the edge from its own memory %d", shared.ID, es, own.ID)
	}
	if es, err := a.Edges(ctx, shared.ID); err != nil || len(es) != 1 || es[0].From != secret.ID {
		t.Fatalf("project:a edges of shared memory %d = %+v, %v; want only the edge from %d", shared.ID, es, err, secret.ID)
	}
	if es, err := e.Edges(ctx, shared.ID); err != nil || len(es) != 0 {
		t.Fatalf("default edges of shared memory %d = %+v, %v; want none", shared.ID, es, err)
	}

	res, err := b.Search(ctx, core.SearchRequest{Query: "deploy runbook wiki"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.Memory.Namespace == "project:a" {
			t.Fatalf("project:b search returned project:a memory %d (origin %q)", h.Memory.ID, h.Origin)
		}
	}
	pk, err := b.ContextPack(ctx, core.PackRequest{Query: "deploy runbook wiki"})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range append(pk.Memories, pk.Neighbours...) {
		if it.ID == secret.ID {
			t.Fatalf("project:b pack holds project:a memory %d (via %q)", it.ID, it.Via)
		}
	}
}
