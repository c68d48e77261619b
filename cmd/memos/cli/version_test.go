package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestVersion: memos version (text and --json) and memos --version report
// the stamped version, commit and date, the Go version and what is
// compiled in; memos mcp reports the same version as its serverInfo.
func TestVersion(t *testing.T) {
	old := [3]string{buildVersion, buildCommit, buildDate}
	t.Cleanup(func() { buildVersion, buildCommit, buildDate = old[0], old[1], old[2] })
	buildVersion, buildCommit, buildDate = "v1.2.3", "0123456789abcdef", "2026-12-01T10:00:00Z"

	e := newEnv(t)
	var b BuildInfo
	e.json(&b, "version")
	if b.Version != "v1.2.3" || b.Commit != "0123456789abcdef" || b.Date != "2026-12-01T10:00:00Z" ||
		b.Go != runtime.Version() || b.Platform != runtime.GOOS+"/"+runtime.GOARCH ||
		!slices.Contains(b.Backends, "sqlite") || !slices.Contains(b.Embedders, "hash") || !slices.Contains(b.Extractors, "rules") {
		t.Errorf("memos version --json: %+v", b)
	}
	text := e.ok("version")
	for _, want := range []string{"memos v1.2.3\n", "0123456789abcdef", "2026-12-01T10:00:00Z", runtime.Version(), "sqlite", "hash"} {
		if !strings.Contains(text, want) {
			t.Errorf("memos version does not say %q:\n%s", want, text)
		}
	}
	if got := e.ok("--version"); got != text {
		t.Errorf("memos --version:\n%s\nwant what memos version prints:\n%s", got, text)
	}
	var b2 BuildInfo
	e.json(&b2, "--version")
	if b2.Version != "v1.2.3" {
		t.Errorf("memos --version --json: %+v", b2)
	}
	if out := e.ok(); !strings.Contains(out, "Usage:") {
		t.Errorf("memos alone no longer prints the help:\n%s", out)
	}

	// The MCP server (stdio) introduces itself with the same version. The
	// request's input stays open until the answer is read.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		code := run(context.Background(), e.environ, []string{"mcp"}, inR, outW, io.Discard)
		outW.Close()
		done <- code
	}()
	go io.WriteString(inW, init)
	line, err := bufio.NewReader(outR).ReadString('\n')
	inW.Close()
	go io.Copy(io.Discard, outR)
	if code := <-done; code != 0 {
		t.Errorf("memos mcp: exit %d", code)
	}
	var resp struct {
		Result struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		} `json:"result"`
	}
	if err != nil || json.Unmarshal([]byte(line), &resp) != nil || resp.Result.ServerInfo.Version != "v1.2.3" {
		t.Errorf("memos mcp serverInfo: %v %+v\n%s", err, resp, line)
	}
}
