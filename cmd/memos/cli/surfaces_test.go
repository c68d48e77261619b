package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// openSQLite opens an engine on the SQLite store at path with the hash
// embedder, as the default configuration does.
func openSQLite(t *testing.T, path string) *core.Engine {
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
	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// httpOps serves the operation table over HTTP on a loopback listener, on a
// store of its own, and returns its URL.
func httpOps(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	eng := openSQLite(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(eng, server.Options{Addr: "127.0.0.1:0", StorePath: path, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the server did not stop within a minute")
		}
		eng.Close()
	})
	return "http://" + ln.Addr().String()
}

// TestOneValidationEverySurface: a request that the operation refuses is
// refused with the same words on the command line, over HTTP and over MCP:
// the check is the operation's, not a front-end's.
func TestOneValidationEverySurface(t *testing.T) {
	e := newEnv(t)
	e.add("a memory so that the store exists")
	url := httpOps(t)
	mcp := startMCP(t, e)
	mcp.initialize("2025-06-18")

	for i, c := range []struct {
		op    string
		args  []string // the command
		stdin string
		json  string // the request over HTTP and MCP
		want  string // the operation's words
	}{
		{"quarantine-reject", []string{"quarantine", "reject", "1"}, "", `{"id":1}`,
			"quarantine-reject needs a reason: say why the memory is rejected"},
		{"quarantine-reject", []string{"quarantine", "reject", "1", "--reason", " "}, "", `{"id":1,"reason":" "}`,
			"quarantine-reject needs a reason"},
		{"lesson-outcome", []string{"lesson", "outcome", "1"}, "", `{"id":1}`,
			"lesson-outcome needs success: true when following the lesson worked, false when it did not"},
		{"capture", []string{"capture"}, "Alice: I moved to Lisbon\n", `{"turns":[{"speaker":"Alice","text":"I moved to Lisbon"}]}`,
			"a capture needs a session name"},
		{"context-pack", []string{"pack"}, "", `{}`,
			"a pack needs a query, or bootstrap for the namespace's most significant memories"},
		{"context-pack", []string{"pack", "--bootstrap", "--as-of", "2024-01-01"}, "", `{"bootstrap":true,"as_of":"2024-01-01"}`,
			"a bootstrap pack reads the current versions; it takes no as-of time"},
		{"set-validity", []string{"set-validity", "1"}, "", `{"id":1}`,
			"give valid_from, valid_to or both"},
	} {
		name := fmt.Sprintf("%s %s", c.op, c.json)
		r := e.runStdin(c.stdin, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: memos %s: exit %d, %q; want %q", name, strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}

		res, err := http.Post(url+"/api/mem/"+c.op, "application/json", strings.NewReader(c.json))
		if err != nil {
			t.Fatal(err)
		}
		var body api.ErrorBody
		derr := json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || derr != nil || body.Error.Kind != "invalid" || !strings.Contains(body.Error.Message, c.want) {
			t.Errorf("%s: HTTP %d %+v (%v); want 400 invalid %q", name, res.StatusCode, body, derr, c.want)
		}

		o, _ := api.Lookup(c.op)
		mcp.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, 100+i, o.Tool, c.json))
		m := mcp.recv(o.Tool)
		var tool struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &tool) != nil || !tool.IsError || len(tool.Content) == 0 {
			t.Errorf("%s: MCP %s answered %+v %s; want a tool error", name, o.Tool, m.Error, m.Result)
			continue
		}
		body = api.ErrorBody{}
		if err := json.Unmarshal([]byte(tool.Content[0].Text), &body); err != nil || body.Error.Kind != "invalid" || !strings.Contains(body.Error.Message, c.want) {
			t.Errorf("%s: MCP %s: %s; want invalid %q", name, o.Tool, tool.Content[0].Text, c.want)
		}
	}
}
