package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memos-go/memos/api/server"
)

// TestVersion: /healthz (no token needed) and the MCP server's serverInfo
// report the version the server was given.
func TestVersion(t *testing.T) {
	const token = "version-token-0123456789"
	l := start(t, server.Options{Version: "v1.2.3", Tokens: []server.Token{{Name: "t", Token: token}}})
	r := l.do(t, "GET", "/healthz", "", nil)
	var h map[string]string
	if err := json.Unmarshal(r.body, &h); err != nil || r.status != 200 || h["status"] != "ok" || h["version"] != "v1.2.3" {
		t.Errorf("healthz: %d %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("healthz Content-Type %q", ct)
	}
	if r := l.do(t, "POST", "/healthz", "", nil); r.status != 405 {
		t.Errorf("POST /healthz: %d, want 405", r.status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "version-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if si := cs.InitializeResult().ServerInfo; si.Name != "memos" || si.Version != "v1.2.3" {
		t.Errorf("serverInfo %+v, want memos v1.2.3", si)
	}
}
