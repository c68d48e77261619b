package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	_ "github.com/memos-go/memos/core/vector"
	"github.com/memos-go/memos/embedders/hash"
)

// openEngine opens a real SQLite store with the hash embedder.
func openEngine(t testing.TB, path string) *core.Engine {
	t.Helper()
	ctx := context.Background()
	b, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb, VectorSnapshot: path + ".vectors"})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// live is a server on a real loopback listener.
type live struct {
	url    string
	eng    *core.Engine
	path   string
	cancel context.CancelFunc
	done   chan error
}

func start(t testing.TB, opts server.Options) *live {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	return startOn(t, openEngine(t, path), path, opts)
}

func startOn(t testing.TB, eng *core.Engine, path string, opts server.Options) *live {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	opts.StorePath = path
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := server.New(eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &live{url: "http://" + ln.Addr().String(), eng: eng, path: path, cancel: cancel, done: make(chan error, 1)}
	go func() { l.done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { l.stop(t); eng.Close() })
	return l
}

// stop shuts the server down and waits for it (once).
func (l *live) stop(t testing.TB) {
	if l.cancel == nil {
		return
	}
	l.cancel()
	l.cancel = nil
	select {
	case err := <-l.done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(time.Minute):
		t.Error("server did not stop within a minute")
	}
}

type reply struct {
	status int
	body   []byte
	header http.Header
}

func (r reply) errKind() string {
	var e api.ErrorBody
	json.Unmarshal(r.body, &e)
	return e.Error.Kind
}

func (l *live) do(t testing.TB, method, path, token string, body []byte) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, l.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{res.StatusCode, b, res.Header}
}

// call posts v to an operation and decodes a 200 answer into out.
func (l *live) call(t testing.TB, op, token string, v any, out any) reply {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	r := l.do(t, http.MethodPost, "/api/mem/"+op, token, b)
	if out != nil && r.status == http.StatusOK {
		if err := json.Unmarshal(r.body, out); err != nil {
			t.Fatalf("%s: decode %s: %v", op, r.body, err)
		}
	}
	return r
}

func (l *live) must(t testing.TB, op string, v, out any) {
	t.Helper()
	if r := l.call(t, op, "", v, out); r.status != http.StatusOK {
		t.Fatalf("%s %v: status %d: %s", op, v, r.status, r.body)
	}
}

type obj = map[string]any

// TestHTTPOperations walks every operation of the table over a real
// listener, as a client would, and checks the answers.
func TestHTTPOperations(t *testing.T) {
	l := start(t, server.Options{})
	var m1, m2, m3 core.Memory
	l.must(t, "remember", obj{"content": "Alice prefers open-source tools", "type": "preference", "significance": 6, "entities": []string{"Alice"}}, &m1)
	l.must(t, "remember", obj{"content": "Alice's home lab runs Proxmox on three nodes", "source": "conversation:7#turn-3", "valid_from": "2024-01-01"}, &m2)
	if m1.ID == 0 || m2.ID == m1.ID || m1.Type != core.TypePreference || m1.Significance != 6 || !m2.ValidFrom.Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("remember: %+v %+v", m1, m2)
	}
	var batch api.MemoriesOut
	l.must(t, "remember-batch", obj{"namespace": "project:web", "memories": []obj{{"content": "The web app deploys with Caddy"}, {"content": "Staging runs on port 8443", "type": "fact"}}}, &batch)
	if len(batch.Memories) != 2 || batch.Memories[0].Namespace != "project:web" {
		t.Fatalf("remember-batch: %+v", batch)
	}
	m3 = *batch.Memories[0]
	capture := obj{"session": "conversation:1", "turns": []obj{{"speaker": "user", "text": "I moved to Porto last spring", "time": "2025-04-02"}, {"speaker": "assistant", "text": "Noted!"}}}
	var cr core.CaptureResult
	l.must(t, "capture", capture, &cr)
	if len(cr.Turns) != 2 || cr.NewTurns != 2 {
		t.Errorf("capture: %+v", cr)
	}
	l.must(t, "capture", capture, &cr)
	if cr.NewTurns != 0 {
		t.Errorf("capturing the same turns again stored %d new ones", cr.NewTurns)
	}
	l.must(t, "get", obj{"id": cr.Turns[0]}, &m3)
	if m3.Pool != core.PoolRaw || m3.Session != "conversation:1" {
		t.Errorf("captured turn: %+v", m3)
	}
	m3 = *batch.Memories[0]

	var got core.Memory
	l.must(t, "get", obj{"id": m1.ID}, &got)
	if got.Content != m1.Content {
		t.Errorf("get: %+v", got)
	}
	// Another namespace's memory is invisible from the default one.
	if r := l.call(t, "get", "", obj{"id": m3.ID}, nil); r.status != 404 || r.errKind() != "not_found" {
		t.Errorf("get of project:web memory from default: %d %s", r.status, r.body)
	}
	l.must(t, "get", obj{"id": m3.ID, "namespace": "project:web"}, &got)

	var up core.Memory
	l.must(t, "update", obj{"id": m2.ID, "content": "Alice's home lab runs Proxmox on four nodes", "significance": 7}, &up)
	if up.Version != 2 || up.Significance != 7 || up.Source != m2.Source {
		t.Errorf("update: %+v", up)
	}
	var hist api.VersionsOut
	l.must(t, "history", obj{"id": m2.ID}, &hist)
	if len(hist.Versions) != 2 || hist.Versions[0].Content != m2.Content {
		t.Errorf("history: %+v", hist)
	}
	var rev core.Memory
	l.must(t, "revert", obj{"id": m2.ID, "version": 1}, &rev)
	if rev.Version != 3 || rev.Content != m2.Content {
		t.Errorf("revert: %+v", rev)
	}

	var edge core.Edge
	l.must(t, "link", obj{"from": m1.ID, "to": m2.ID, "type": "supports", "weight": 0.5}, &edge)
	if edge.Type != core.EdgeSupports || edge.Weight != 0.5 {
		t.Errorf("link: %+v", edge)
	}
	var edges api.EdgesOut
	l.must(t, "edges", obj{"id": m2.ID}, &edges)
	if len(edges.Edges) != 1 || edges.Edges[0].From != m1.ID {
		t.Errorf("edges: %+v", edges)
	}
	var un api.UnlinkOut
	l.must(t, "unlink", obj{"from": m1.ID, "to": m2.ID, "type": "supports"}, &un)
	l.must(t, "edges", obj{"id": m2.ID}, &edges)
	if !un.Removed || len(edges.Edges) != 0 {
		t.Errorf("unlink: %+v, edges after: %+v", un, edges)
	}

	// Search in every mode, with filters and both clocks.
	for _, mode := range []string{"hybrid", "keyword", "vector"} {
		var res core.SearchResult
		l.must(t, "search", obj{"query": "what does alice prefer", "mode": mode}, &res)
		if len(res.Hits) == 0 || res.Hits[0].Memory.ID != m1.ID {
			t.Errorf("search %s: %+v", mode, res.Hits)
		}
	}
	var res core.SearchResult
	l.must(t, "search", obj{"query": `proxmox AND "home lab"`, "mode": "fts"}, &res)
	if len(res.Hits) != 1 || res.Hits[0].Memory.ID != m2.ID {
		t.Errorf("fts: %+v", res.Hits)
	}
	l.must(t, "search", obj{"query": "alice", "mode": "keyword", "types": []string{"preference"}, "pools": []string{"memory"}}, &res)
	if len(res.Hits) != 1 || res.Hits[0].Memory.ID != m1.ID {
		t.Errorf("types filter: %+v", res.Hits)
	}
	l.must(t, "search", obj{"query": "proxmox", "mode": "keyword", "valid_at": "2023-06-01"}, &res)
	if len(res.Hits) != 0 {
		t.Errorf("valid_at before valid_from found %+v", res.Hits)
	}
	l.must(t, "search", obj{"query": "proxmox", "mode": "keyword", "as_of": "2020-01-01T00:00:00Z"}, &res)
	if len(res.Hits) != 0 {
		t.Errorf("as_of before the store existed found %+v", res.Hits)
	}
	// The question's reference time: what "last weekend" is read against.
	l.must(t, "search", obj{"query": "proxmox last weekend", "mode": "keyword", "reference_time": "2024-03-21"}, &res)
	if res.Time == nil || len(res.Time.Expressions) != 1 || !res.Time.Expressions[0].From.Equal(time.Date(2024, 3, 16, 0, 0, 0, 0, time.UTC)) ||
		res.Keyword != `"proxmox"` {
		t.Errorf("reference_time: keyword %q, time %+v", res.Keyword, res.Time)
	}
	l.must(t, "search", obj{"query": "caddy", "mode": "keyword", "namespace": "project:web"}, &res)
	if len(res.Hits) != 1 || res.Hits[0].Memory.ID != m3.ID {
		t.Errorf("namespace search: %+v", res.Hits)
	}
	var x api.ExplainOut
	l.must(t, "explain", obj{"query": "what does alice prefer"}, &x)
	if len(x.Candidates) == 0 || x.Result == nil {
		t.Errorf("explain: %+v", x)
	}

	var pk core.Pack
	l.must(t, "context-pack", obj{"query": "what did alice prefer in May 2023", "reference_time": "2024-01-01T00:00:00Z"}, &pk)
	if pk.Time == nil || !pk.Time.ReferenceTime.Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) || len(pk.Time.Expressions) != 1 {
		t.Errorf("context-pack reference_time: %+v", pk.Time)
	}
	l.must(t, "context-pack", obj{"query": "what does alice prefer", "budget": 300}, &pk)
	if len(pk.Memories) == 0 || pk.Memories[0].ID != m1.ID || pk.Tokens > 300 {
		t.Errorf("context-pack: %+v", pk)
	}
	l.must(t, "context-pack", obj{"bootstrap": true}, &pk)
	if !pk.Bootstrap || len(pk.Memories) == 0 {
		t.Errorf("bootstrap pack: %+v", pk)
	}

	var sv core.Memory
	l.must(t, "set-validity", obj{"id": m1.ID, "valid_from": "2020-01-01"}, &sv)
	if !sv.ValidFrom.Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) || !sv.ValidTo.IsZero() {
		t.Errorf("set-validity: %+v", sv)
	}
	var sup core.Memory
	l.must(t, "supersede", obj{"id": m1.ID, "content": "Alice now prefers tools with a support contract", "valid_from": "2025-01-01"}, &sup)
	l.must(t, "get", obj{"id": m1.ID}, &got)
	if sup.Type != core.TypePreference || !got.ValidTo.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("supersede: new %+v, old %+v", sup, got)
	}

	var cert core.DeletionCertificate
	l.must(t, "forget", obj{"id": m2.ID, "reason": "user asked"}, &cert)
	if cert.MemoryID != m2.ID || cert.Versions != 3 || len(cert.ContentHash) != 64 || cert.AuditHash == "" {
		t.Errorf("forget: %+v", cert)
	}
	if r := l.call(t, "get", "", obj{"id": m2.ID}, nil); r.status != 404 {
		t.Errorf("get after forget: %d %s", r.status, r.body)
	}
	var cons core.ConsolidateReport
	l.must(t, "consolidate", obj{"dry_run": true}, &cons)
	if !cons.DryRun || cons.Before == 0 {
		t.Errorf("consolidate dry run: %+v", cons)
	}
	var st core.Stats
	l.must(t, "stats", obj{}, &st)
	if st.Memories != 4 {
		t.Errorf("stats: %d memories in default, want 4 (2 left of the remembered, 2 turns)", st.Memories)
	}
	var audit core.AuditReport
	l.must(t, "audit-verify", nil, &audit)
	if audit.Entries < 1 {
		t.Errorf("audit-verify: %+v", audit)
	}
}

// TestHTTPErrors checks every error a client can provoke: the status, the
// kind, and that nothing was stored.
func TestHTTPErrors(t *testing.T) {
	l := start(t, server.Options{MaxBody: 4096})
	var m core.Memory
	l.must(t, "remember", obj{"content": "one memory"}, &m)
	big := fmt.Sprintf(`{"content":%q}`, strings.Repeat("x", 5000))
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		kind, msg                string
	}{
		{"malformed JSON", "POST", "/api/mem/remember", `{"content":`, 400, "invalid", "ends too early"},
		{"syntax error", "POST", "/api/mem/remember", `{content: 1}`, 400, "invalid", "malformed JSON"},
		{"unknown field", "POST", "/api/mem/remember", `{"content":"a","colour":"red"}`, 400, "invalid", `unknown field \"colour\"`},
		{"wrong type", "POST", "/api/mem/remember", `{"content":"a","significance":"high"}`, 400, "invalid", `field \"significance\": cannot use a JSON string, want an integer`},
		{"trailing data", "POST", "/api/mem/remember", `{"content":"a"} {"content":"b"}`, 400, "invalid", "after the JSON object"},
		{"empty content", "POST", "/api/mem/remember", `{"content":"  "}`, 400, "invalid", "content is empty"},
		{"significance", "POST", "/api/mem/remember", `{"content":"a","significance":11}`, 400, "invalid", "outside 1–10"},
		{"bad namespace", "POST", "/api/mem/remember", `{"content":"a","namespace":"Team X"}`, 400, "invalid", "malformed namespace"},
		{"bad date", "POST", "/api/mem/remember", `{"content":"a","valid_from":"yesterday"}`, 400, "invalid", "not a time"},
		{"bad batch item", "POST", "/api/mem/remember-batch", `{"memories":[{"content":"fine"},{"content":""}]}`, 400, "invalid", "empty"},
		{"bad fts query", "POST", "/api/mem/search", `{"query":"\"open","mode":"fts"}`, 400, "invalid", "quote"},
		{"bad mode", "POST", "/api/mem/search", `{"query":"a","mode":"psychic"}`, 400, "invalid", "unknown search mode"},
		{"unknown id", "POST", "/api/mem/get", `{"id":424242}`, 404, "not_found", "424242"},
		{"unknown version", "POST", "/api/mem/get", fmt.Sprintf(`{"id":%d,"version":9}`, m.ID), 404, "not_found", "versions 1 to 1"},
		{"unknown route", "POST", "/api/mem/teleport", `{}`, 404, "not_found", "no route"},
		{"wrong method", "GET", "/api/mem/search", ``, 405, "method_not_allowed", "use POST"},
		{"body too large", "POST", "/api/mem/remember", big, 413, "too_large", "over the limit of 4096 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := l.do(t, c.method, c.path, "", []byte(c.body))
			if r.status != c.status || r.errKind() != c.kind || !strings.Contains(string(r.body), c.msg) {
				t.Errorf("%s %s %s: %d %s; want %d %s containing %q", c.method, c.path, c.body, r.status, r.body, c.status, c.kind, c.msg)
			}
		})
	}
	var st core.Stats
	l.must(t, "stats", obj{}, &st)
	if st.Memories != 1 {
		t.Errorf("the bad requests stored something: %d memories, want 1", st.Memories)
	}

	// A closed store answers 503 closed, a request past its deadline 504.
	short := start(t, server.Options{Timeout: time.Nanosecond})
	if r := short.call(t, "search", "", obj{"query": "anything"}, nil); r.status != 504 || r.errKind() != "deadline_exceeded" {
		t.Errorf("timed-out search: %d %s", r.status, r.body)
	}
	l.eng.Close()
	if r := l.call(t, "stats", "", obj{}, nil); r.status != 503 || r.errKind() != "closed" {
		t.Errorf("closed store: %d %s", r.status, r.body)
	}
	if r := l.do(t, "GET", "/healthz", "", nil); r.status != 200 {
		t.Errorf("healthz: %d", r.status)
	}
}

// TestTokens checks the token rules: a request without a valid token is
// refused, a token limited to namespaces gets 403 outside them and learns
// nothing about memories it may not see.
func TestTokens(t *testing.T) {
	const admin, agentA = "admin-token-0123456789", "agent-a-token-0123456789"
	l := start(t, server.Options{Tokens: []server.Token{
		{Name: "admin", Token: admin},
		{Name: "agent-a", Token: agentA, Namespaces: []string{"agent:a"}},
	}})
	for _, c := range []struct{ name, auth string }{{"no token", ""}, {"wrong token", "agent-a-token-0123456780"}} {
		r := l.call(t, "search", c.auth, obj{"query": "x"}, nil)
		if r.status != 401 || r.errKind() != "unauthorized" || r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
		if r := l.do(t, "POST", "/mcp", c.auth, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); r.status != 401 {
			t.Errorf("%s on /mcp: %d %s", c.name, r.status, r.body)
		}
	}
	var secret, own core.Memory
	if r := l.call(t, "remember", admin, obj{"content": "agent b's secret plan", "namespace": "agent:b"}, &secret); r.status != 200 {
		t.Fatalf("admin remember: %d %s", r.status, r.body)
	}
	// The agent token writes to its namespace by default.
	if r := l.call(t, "remember", agentA, obj{"content": "agent a's own note"}, &own); r.status != 200 || own.Namespace != "agent:a" {
		t.Fatalf("agent remember: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		op   string
		body obj
	}{
		{"get", obj{"id": secret.ID, "namespace": "agent:b"}},
		{"search", obj{"query": "secret plan", "namespace": "agent:b"}},
		{"remember", obj{"content": "x", "namespace": "default"}},
		{"forget", obj{"id": secret.ID, "namespace": "agent:b"}},
		{"audit-verify", obj{}},
	} {
		r := l.call(t, c.op, agentA, c.body, nil)
		if r.status != 403 || r.errKind() != "forbidden" {
			t.Errorf("agent-a %s %v: %d %s; want 403 forbidden", c.op, c.body, r.status, r.body)
		}
	}
	if r := l.do(t, "GET", "/metrics", agentA, nil); r.status != 403 {
		t.Errorf("agent-a /metrics: %d", r.status)
	}
	// Another namespace's id and an id that never existed read the same.
	rs := l.call(t, "get", agentA, obj{"id": secret.ID}, nil)
	rn := l.call(t, "get", agentA, obj{"id": 987654}, nil)
	if rs.status != 404 || rn.status != 404 ||
		strings.ReplaceAll(string(rs.body), fmt.Sprint(secret.ID), "N") != strings.ReplaceAll(string(rn.body), "987654", "N") {
		t.Errorf("hidden id and missing id differ:\n%s\n%s", rs.body, rn.body)
	}
	var res core.SearchResult
	l.call(t, "search", agentA, obj{"query": "secret plan", "mode": "keyword"}, &res)
	if len(res.Hits) != 0 {
		t.Errorf("agent-a found %+v", res.Hits)
	}
	if r := l.call(t, "get", admin, obj{"id": secret.ID, "namespace": "agent:b"}, nil); r.status != 200 {
		t.Errorf("admin get: %d %s", r.status, r.body)
	}
	if r := l.do(t, "GET", "/healthz", "", nil); r.status != 200 {
		t.Errorf("healthz needs no token: %d", r.status)
	}
}

func TestListenRules(t *testing.T) {
	eng := openEngine(t, filepath.Join(t.TempDir(), "memory.db"))
	defer eng.Close()
	_, err := server.New(eng, server.Options{Addr: "0.0.0.0:7077"})
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "MEMOS_TOKEN") {
		t.Errorf("non-loopback without a token: %v", err)
	}
	if _, err := server.New(eng, server.Options{Addr: "0.0.0.0:7077", Tokens: []server.Token{{Token: "short"}}}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("short token: %v", err)
	}
	if _, err := server.New(eng, server.Options{Addr: "[::]:7077", Tokens: []server.Token{{Token: "0123456789abcdef0123", Namespaces: []string{"nope"}}}}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("bad token namespace: %v", err)
	}
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true, "0.0.0.0:1": false, "192.168.1.2:1": false, ":7077": false} {
		if server.Loopback(addr) != want {
			t.Errorf("Loopback(%q) = %v", addr, !want)
		}
	}
	// No CORS headers unless configured; configured origins get them.
	l := start(t, server.Options{CORSOrigins: []string{"https://app.example"}})
	req, _ := http.NewRequest("OPTIONS", l.url+"/api/mem/search", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Errorf("preflight from a configured origin: %d %v", res.StatusCode, res.Header)
	}
	req.Header.Set("Origin", "https://evil.example")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin got CORS headers: %v", res.Header)
	}
}

// TestOpenAPI validates /openapi.json with kin-openapi and checks that every
// operation of the table is a route in it with its schemas.
func TestOpenAPI(t *testing.T) {
	l := start(t, server.Options{Version: "test"})
	r := l.do(t, "GET", "/openapi.json", "", nil)
	if r.status != 200 {
		t.Fatalf("openapi.json: %d", r.status)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(r.body)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is not valid: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi %q, want 3.1", doc.OpenAPI)
	}
	for _, o := range api.Ops() {
		p := doc.Paths.Find(o.Path())
		if p == nil || p.Post == nil {
			t.Errorf("route POST %s of %s is missing", o.Path(), o.Name)
			continue
		}
		if p.Post.RequestBody == nil || p.Post.Responses.Status(200) == nil {
			t.Errorf("%s: no request body or 200 response", o.Path())
		}
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/openapi.json"} {
		if doc.Paths.Find(p) == nil {
			t.Errorf("%s is missing", p)
		}
	}
	if n := doc.Paths.Len(); n != len(api.Ops())+4 {
		t.Errorf("%d paths, want %d", n, len(api.Ops())+4)
	}
	// The schema says what the server enforces.
	in := doc.Paths.Find("/api/mem/remember").Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	if !slices.Contains(in.Required, "content") || in.AdditionalProperties.Has == nil || *in.AdditionalProperties.Has {
		t.Errorf("remember's schema: required %v, additionalProperties %+v", in.Required, in.AdditionalProperties)
	}
	if err := in.VisitJSON(map[string]any{"content": "x", "significance": 11.0}); err == nil {
		t.Error("the schema accepts significance 11")
	}
}

// TestMetrics checks that requests are counted per operation and the store
// size is exported.
func TestMetrics(t *testing.T) {
	l := start(t, server.Options{})
	l.must(t, "remember", obj{"content": "count me"}, nil)
	l.call(t, "get", "", obj{"id": 999}, nil)
	r := l.do(t, "GET", "/metrics", "", nil)
	for _, want := range []string{
		`memos_requests_total{op="remember",result="ok",transport="http"} 1`,
		`memos_requests_total{op="get",result="not_found",transport="http"} 1`,
		`memos_request_duration_seconds_count{op="remember",transport="http"} 1`,
		"memos_store_bytes ",
	} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// FuzzDecode feeds arbitrary bodies to every operation's decoder: it must
// never panic, and whatever it accepts must encode back to JSON.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"content":"a","significance":5}`, `{"query":"x","mode":"fts","pools":["raw"]}`,
		`{"id":1,"valid_from":"","valid_to":"2024-01-01"}`, `{"id":1,"from":"","to":"2024-01-01"}`, `{"memories":[{"content":"a"}]}`, `[]`, `null`, `{"id":1e400}`, "{\"content\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, o := range api.Ops() {
			in, err := o.Decode(body)
			if err != nil {
				if !errors.Is(err, core.ErrInvalid) {
					t.Fatalf("%s: decode error %v is not ErrInvalid", o.Name, err)
				}
				continue
			}
			if _, err := json.Marshal(in); err != nil {
				t.Fatalf("%s: accepted %q but cannot encode it: %v", o.Name, body, err)
			}
		}
	})
}

var _ = net.Listen
