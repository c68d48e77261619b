package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/core"
)

// TestListAndTraceRoutes checks the list and trace operations over HTTP as
// a client calls them: list pages through the namespace and default with
// next_cursor, filters by the request's fields, lists quarantined memories
// only when asked and another namespace's never; a bad cursor or time is a
// 400; trace follows derived_from edges both ways.
func TestListAndTraceRoutes(t *testing.T) {
	l := start(t, server.Options{})
	var mems []core.Memory
	for i := range 7 {
		var m core.Memory
		l.must(t, "remember", obj{"content": fmt.Sprintf("note %d about the garden", i), "namespace": "project:a",
			"significance": 1 + i, "source": fmt.Sprintf("conversation:%d", i%2), "entities": []string{"Garden"}}, &m)
		mems = append(mems, m)
	}
	var shared, other, held, drawn core.Memory
	l.must(t, "remember", obj{"content": "a shared note"}, &shared)
	l.must(t, "remember", obj{"content": "project b's note", "namespace": "project:b"}, &other)
	l.must(t, "remember", obj{"content": "held for review", "namespace": "project:a", "quarantine": true}, &held)
	l.must(t, "remember", obj{"content": "what the first note led to", "namespace": "project:a", "derived_from": []int64{mems[0].ID}}, &drawn)

	var ids []int64
	body := obj{"namespace": "project:a", "limit": 3}
	for pages := 0; ; pages++ {
		var page core.ListResult
		l.must(t, "list", body, &page)
		if len(page.Memories) > 3 || pages > 5 {
			t.Fatalf("page %d: %d memories", pages, len(page.Memories))
		}
		for _, m := range page.Memories {
			ids = append(ids, m.ID)
		}
		if page.NextCursor == "" {
			break
		}
		body["cursor"] = page.NextCursor
	}
	want := []int64{drawn.ID, shared.ID}
	for i := 6; i >= 0; i-- {
		want = append(want, mems[i].ID)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("list of project:a by 3: %v, want %v (newest first, default included, nothing held or of project:b)", ids, want)
	}

	var page core.ListResult
	l.must(t, "list", obj{"namespace": "project:a", "namespace_only": true, "sort": "significance", "source_prefix": "conversation:1",
		"entity": "garden", "created_after": "2000-01-01"}, &page)
	if got := []int64{page.Memories[0].ID, page.Memories[1].ID, page.Memories[2].ID}; len(page.Memories) != 3 || !slices.Equal(got, []int64{mems[5].ID, mems[3].ID, mems[1].ID}) {
		t.Errorf("filtered list: %+v", page.Memories)
	}
	l.must(t, "list", obj{"namespace": "project:a", "statuses": []string{"quarantined"}}, &page)
	if len(page.Memories) != 1 || page.Memories[0].ID != held.ID {
		t.Errorf("list of quarantined memories: %+v", page.Memories)
	}
	for _, bad := range []obj{{"cursor": "nonsense"}, {"created_after": "last week"}, {"sort": "oldest"}, {"statuses": []string{"deleted"}}, {"limit": 5000}} {
		if r := l.call(t, "list", "", bad, nil); r.status != http.StatusBadRequest || r.errKind() != "invalid" {
			t.Errorf("list %v: %d %s, want 400 invalid", bad, r.status, r.body)
		}
	}

	var tr core.TraceResult
	l.must(t, "trace", obj{"namespace": "project:a", "id": mems[0].ID}, &tr)
	if tr.Memory.ID != mems[0].ID || len(tr.Derived) != 1 || tr.Derived[0].ID != drawn.ID || tr.Derived[0].Via != core.EdgeDerivedFrom || len(tr.DerivedFrom) != 0 {
		t.Errorf("trace of memory %d: %+v", mems[0].ID, tr)
	}
	if r := l.call(t, "trace", "", obj{"namespace": "project:a", "id": other.ID}, nil); r.status != http.StatusNotFound {
		t.Errorf("trace of project b's memory from project:a: %d %s, want 404", r.status, r.body)
	}
}

// TestListAndTraceTools checks the MCP tools memos_list and memos_trace.
func TestListAndTraceTools(t *testing.T) {
	l := start(t, server.Options{})
	var a, b core.Memory
	l.must(t, "remember", obj{"content": "the turn it came from", "type": "turn"}, &a)
	l.must(t, "remember", obj{"content": "the fact drawn from it", "derived_from": []int64{a.ID}}, &b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "list-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any, out any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		if err := json.Unmarshal(mustJSON(t, res.StructuredContent), out); err != nil {
			t.Fatal(err)
		}
	}
	var page core.ListResult
	call("memos_list", map[string]any{"types": []string{"turn"}}, &page)
	if len(page.Memories) != 1 || page.Memories[0].ID != a.ID || page.NextCursor != "" {
		t.Errorf("memos_list of turns: %+v", page)
	}
	var tr core.TraceResult
	call("memos_trace", map[string]any{"id": b.ID}, &tr)
	if len(tr.DerivedFrom) != 1 || tr.DerivedFrom[0].ID != a.ID || !strings.Contains(tr.DerivedFrom[0].Excerpt, "turn it came from") {
		t.Errorf("memos_trace: %+v", tr)
	}
}
