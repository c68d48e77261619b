package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/core"
)

// post sends body with a content type and an Accept header.
func (l *live) post(t *testing.T, path, token, ctype, accept string, body []byte) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, l.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return reply{res.StatusCode, b.Bytes(), res.Header}
}

// TestAuditOverHTTPAndMCP: the audit log is listed and exported over HTTP
// and MCP, and the export checks with no store.
func TestAuditOverHTTPAndMCP(t *testing.T) {
	l := start(t, server.Options{})
	var m core.Memory
	l.must(t, "remember", obj{"content": "Alice prefers open-source tools", "source": "conversation:1"}, &m)
	l.must(t, "update", obj{"id": m.ID, "significance": 8}, nil)
	l.must(t, "remember", obj{"content": "Bob drinks tea"}, nil)
	var log api.AuditOut
	l.must(t, "audit", obj{"memory_id": m.ID}, &log)
	if len(log.Entries) != 2 || log.Entries[0].Action != "remember" || log.Entries[1].Action != "update" {
		t.Fatalf("audit memory_id=%d: %+v", m.ID, log.Entries)
	}
	l.must(t, "audit", obj{"source": "conversation:1", "since": "2000-01-01"}, &log)
	if len(log.Entries) != 1 {
		t.Errorf("audit source: %+v", log.Entries)
	}
	if r := l.call(t, "audit", "", obj{"since": "last week"}, nil); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "since") {
		t.Errorf("audit since=last week: %d %s", r.status, r.body)
	}
	r := l.call(t, "audit-export", "", obj{}, nil)
	if r.status != http.StatusOK {
		t.Fatalf("audit-export: %d %s", r.status, r.body)
	}
	rep, err := core.VerifyAuditExport(bytes.NewReader(r.body))
	if err != nil || rep.Entries != 3 {
		t.Fatalf("the exported log does not verify: %v %+v", err, rep)
	}
	cs := mcpSession(t, l)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memos_audit", Arguments: obj{"action": "update"}})
	if err != nil || res.IsError {
		t.Fatalf("memos_audit: %v %+v", err, res)
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &log); err != nil || len(log.Entries) != 1 {
		t.Errorf("memos_audit action=update: %v %+v", err, log.Entries)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memos_audit_export", Arguments: obj{}})
	if err != nil || res.IsError {
		t.Fatalf("memos_audit_export: %v %+v", err, res)
	}
	if _, err := core.VerifyAuditExport(strings.NewReader(res.Content[0].(*mcp.TextContent).Text)); err != nil {
		t.Errorf("memos_audit_export does not verify: %v", err)
	}
}

func mcpSession(t *testing.T, l *live) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestExportImportRoutes: export streams NDJSON (or JSON on request), import
// reads it back as the request body (or inside JSON), all or nothing, and
// both stay closed to a token limited to namespaces.
func TestExportImportRoutes(t *testing.T) {
	tokens := []server.Token{{Name: "admin", Token: adminToken}, {Name: "a", Token: agentAToken, Namespaces: []string{"agent:a"}}}
	src := start(t, server.Options{Tokens: tokens})
	var a, b core.Memory
	src.call(t, "remember", adminToken, obj{"content": "Alice prefers open-source tools", "namespace": "agent:a"}, &a)
	src.call(t, "remember", adminToken, obj{"content": "Alice's lab runs Proxmox"}, &b)
	src.call(t, "link", adminToken, obj{"from": a.ID, "to": b.ID, "type": "supports", "namespace": "agent:a"}, nil)

	r := src.post(t, "/api/mem/export", adminToken, "application/json", "", []byte(`{}`))
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("export: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	export := r.body
	if n := bytes.Count(export, []byte("\n")); n != 4 { // header, two memories, one edge
		t.Fatalf("export has %d lines:\n%s", n, export)
	}
	var asJSON api.ExportOut
	r = src.post(t, "/api/mem/export", adminToken, "application/json", "application/json", []byte(`{"namespaces":["agent:a"]}`))
	if err := json.Unmarshal(r.body, &asJSON); err != nil || asJSON.Memories != 1 || asJSON.DroppedEdges != 1 || !strings.Contains(asJSON.JSONL, "Alice prefers") {
		t.Fatalf("export as JSON: %v %s", err, r.body)
	}
	for _, c := range []struct {
		op, ctype string
		body      []byte
	}{{"export", "application/json", []byte(`{}`)}, {"import", "application/x-ndjson", export}, {"import", "application/json", []byte(`{"jsonl":"x"}`)}} {
		if r := src.post(t, "/api/mem/"+c.op, agentAToken, c.ctype, "", c.body); r.status != http.StatusForbidden {
			t.Errorf("%s (%s) by a limited token: %d %s", c.op, c.ctype, r.status, r.body)
		}
	}

	dst := start(t, server.Options{Tokens: tokens})
	// A truncated export is refused whole: nothing is stored.
	lines := bytes.SplitAfter(export, []byte("\n"))
	truncated := bytes.Join(lines[:2], nil)
	if r := dst.post(t, "/api/mem/import", adminToken, "application/x-ndjson", "", truncated); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "truncated") {
		t.Errorf("truncated import: %d %s", r.status, r.body)
	}
	var rep core.ImportReport
	r = dst.post(t, "/api/mem/import?dry_run=true", adminToken, "application/x-ndjson", "", export)
	if err := json.Unmarshal(r.body, &rep); r.status != http.StatusOK || err != nil || !rep.DryRun || rep.Imported != 2 {
		t.Fatalf("dry run import: %d %s", r.status, r.body)
	}
	if st, _ := dst.eng.Stats(context.Background()); st.StoreMemories != 0 {
		t.Fatalf("a refused or dry-run import stored %d memories", st.StoreMemories)
	}
	if r := dst.post(t, "/api/mem/import?dry_run=perhaps", adminToken, "application/x-ndjson", "", export); r.status != http.StatusBadRequest {
		t.Errorf("dry_run=perhaps: %d %s", r.status, r.body)
	}
	r = dst.post(t, "/api/mem/import", adminToken, "application/x-ndjson", "", export)
	if err := json.Unmarshal(r.body, &rep); r.status != http.StatusOK || err != nil || rep.Imported != 2 || rep.Edges != 1 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	// Again, inside JSON: everything is already there.
	body, _ := json.Marshal(obj{"jsonl": string(export)})
	r = dst.post(t, "/api/mem/import", adminToken, "application/json", "", body)
	if err := json.Unmarshal(r.body, &rep); r.status != http.StatusOK || err != nil || rep.Imported != 0 || rep.Skipped != 2 {
		t.Fatalf("import again: %d %s", r.status, r.body)
	}
	var page core.ListResult
	dst.call(t, "list", adminToken, obj{"namespace": "agent:a"}, &page)
	if len(page.Memories) != 2 {
		t.Errorf("after import, agent:a and default list %d memories", len(page.Memories))
	}
}

// TestSearchIncludeQuarantined: include_quarantined shows the review queue
// of the namespaces a caller may read, as review does, and no other.
func TestSearchIncludeQuarantined(t *testing.T) {
	l := start(t, server.Options{Tokens: []server.Token{{Name: "admin", Token: adminToken},
		{Name: "a", Token: agentAToken, Namespaces: []string{"agent:a"}}}})
	for _, ns := range []string{"agent:a", "agent:b"} {
		l.call(t, "remember", adminToken, obj{"content": "the crane password is in the blue binder of " + ns, "namespace": ns, "quarantine": true}, nil)
	}
	for _, op := range []string{"search", "explain", "context-pack"} {
		var plain, with struct {
			Hits     []json.RawMessage `json:"hits"`
			Memories []json.RawMessage `json:"memories"`
			Result   *struct {
				Hits []json.RawMessage `json:"hits"`
			} `json:"result"`
		}
		l.call(t, op, agentAToken, obj{"query": "crane password binder"}, &plain)
		r := l.call(t, op, agentAToken, obj{"query": "crane password binder", "include_quarantined": true}, &with)
		if r.status != http.StatusOK {
			t.Fatalf("%s include_quarantined: %d %s", op, r.status, r.body)
		}
		if strings.Contains(string(r.body), "agent:b") {
			t.Errorf("%s include_quarantined shows agent:b to a token of agent:a: %s", op, r.body)
		}
		if !strings.Contains(string(r.body), "blue binder of agent:a") {
			t.Errorf("%s include_quarantined does not show agent:a's review queue: %s", op, r.body)
		}
		if len(plain.Hits)+len(plain.Memories) != 0 || plain.Result != nil && len(plain.Result.Hits) != 0 {
			t.Errorf("%s without include_quarantined shows the review queue", op)
		}
	}
}

// TestImportBodyBounded: an NDJSON import body is bounded by max_body like
// every other body: beyond it the answer is 413 too_large and nothing is
// stored; within it the import goes through.
func TestImportBodyBounded(t *testing.T) {
	src := start(t, server.Options{})
	for i := range 40 {
		src.must(t, "remember", obj{"content": fmt.Sprintf("memory number %d about the lab's Proxmox cluster and its backups", i)}, nil)
	}
	export := src.post(t, "/api/mem/export", "", "application/json", "", []byte(`{}`)).body
	dst := start(t, server.Options{MaxBody: int64(len(export) - 1)})
	r := dst.post(t, "/api/mem/import", "", "application/x-ndjson", "", export)
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.body), `"too_large"`) || !strings.Contains(string(r.body), "server.max_body") {
		t.Fatalf("import over max_body: %d %s", r.status, r.body)
	}
	if st, _ := dst.eng.Stats(context.Background()); st.StoreMemories != 0 {
		t.Fatalf("an import over max_body stored %d memories", st.StoreMemories)
	}
	ok := start(t, server.Options{MaxBody: int64(len(export))})
	var rep core.ImportReport
	r = ok.post(t, "/api/mem/import", "", "application/x-ndjson", "", export)
	if err := json.Unmarshal(r.body, &rep); r.status != http.StatusOK || err != nil || rep.Imported != 40 {
		t.Fatalf("import within max_body: %d %s", r.status, r.body)
	}
}

// TestUpdateClears: update clears a text field given as "" (valid_to: still
// true), changes metadata key by key (null removes a key) and leaves what is
// not given, over HTTP and MCP alike; an update that changes nothing is
// refused.
func TestUpdateClears(t *testing.T) {
	l := start(t, server.Options{})
	var m core.Memory
	l.must(t, "remember", obj{"content": "Alice lives in Paris", "source": "conversation:1", "session": "s1",
		"valid_from": "2019-01-01", "valid_to": "2023-06-30", "metadata": obj{"a": "1", "b": "2"}}, &m)
	var up core.Memory
	l.must(t, "update", obj{"id": m.ID, "valid_to": "", "metadata": obj{"a": nil, "c": "3"}}, &up)
	if up.Version != 2 || !up.ValidTo.IsZero() || up.ValidFrom.Year() != 2019 || up.Source != "conversation:1" ||
		len(up.Metadata) != 2 || up.Metadata["b"] != "2" || up.Metadata["c"] != "3" {
		t.Fatalf("update valid_to \"\" and metadata {a:null,c:3}: %+v", up)
	}
	cs := mcpSession(t, l)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memos_update",
		Arguments: obj{"id": m.ID, "source": "", "valid_from": "", "metadata": obj{"b": nil}}})
	if err != nil || res.IsError {
		t.Fatalf("memos_update: %v %+v", err, res)
	}
	up = core.Memory{}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &up); err != nil {
		t.Fatal(err)
	}
	if up.Version != 3 || up.Source != "" || !up.ValidFrom.IsZero() || up.Session != "s1" || len(up.Metadata) != 1 || up.Metadata["c"] != "3" {
		t.Errorf("memos_update source \"\", valid_from \"\", metadata {b:null}: %+v", up)
	}
	for _, c := range []struct {
		body obj
		msg  string
	}{{obj{"id": m.ID}, "nothing to update"}, {obj{"id": m.ID, "significance": 0}, "outside 1–10"}, {obj{"id": m.ID, "valid_to": "soon"}, "not a time"}} {
		if r := l.call(t, "update", "", c.body, nil); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), c.msg) {
			t.Errorf("update %v: %d %s", c.body, r.status, r.body)
		}
	}
}

// TestConsolidateTook: consolidate answers the time its pass took as a
// duration, and its old took_ns for one more release.
func TestConsolidateTook(t *testing.T) {
	l := start(t, server.Options{})
	l.must(t, "remember", obj{"content": "Alice prefers open-source tools"}, nil)
	var out struct {
		Took   string `json:"took"`
		TookNS *int64 `json:"took_ns"`
	}
	l.must(t, "consolidate", obj{"dry_run": true}, &out)
	d, err := time.ParseDuration(out.Took)
	if err != nil || d <= 0 || out.TookNS == nil || *out.TookNS != int64(d) {
		t.Errorf("consolidate took %q (%v), took_ns %v", out.Took, err, out.TookNS)
	}
}
