package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/core"
)

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPTokenScope checks that /mcp applies a token's namespaces as the
// HTTP routes do: a tool call outside them is a forbidden tool error, and
// a memory of another namespace reads as missing. (The TypeScript SDK test
// in cmd/memos/cli covers the protocol itself.)
func TestMCPTokenScope(t *testing.T) {
	const admin, agentA = "admin-token-0123456789", "agent-a-token-0123456789"
	l := start(t, server.Options{Tokens: []server.Token{
		{Name: "admin", Token: admin},
		{Name: "agent-a", Token: agentA, Namespaces: []string{"agent:a"}},
	}})
	var secret core.Memory
	if r := l.call(t, "remember", admin, obj{"content": "agent b's secret plan", "namespace": "agent:b"}, &secret); r.status != 200 {
		t.Fatalf("admin remember: %d %s", r.status, r.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "scope-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{agentA}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	kind := func(res *mcp.CallToolResult) string {
		if !res.IsError {
			return ""
		}
		var e api.ErrorBody
		json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &e)
		return e.Error.Kind
	}
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if k := kind(call("memos_search", map[string]any{"query": "secret plan", "namespace": "agent:b"})); k != "forbidden" {
		t.Errorf("search in agent:b with an agent:a token: %q, want forbidden", k)
	}
	if k := kind(call("memos_audit_verify", map[string]any{})); k != "forbidden" {
		t.Errorf("audit verify with an agent:a token: %q, want forbidden", k)
	}
	hidden := call("memos_get", map[string]any{"id": secret.ID})
	if kind(hidden) != "not_found" || strings.Contains(hidden.Content[0].(*mcp.TextContent).Text, "agent:b") {
		t.Errorf("get of agent b's memory: %+v", hidden.Content[0])
	}
	stored := call("memory_store", map[string]any{"content": "agent a's note"})
	if stored.IsError || !strings.Contains(string(mustJSON(t, stored.StructuredContent)), `"namespace":"agent:a"`) {
		t.Errorf("memory_store with an agent:a token: %+v", stored)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
