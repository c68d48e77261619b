package cli

import (
	"encoding/json"
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

	// The MCP server (stdio) introduces itself with the same version.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	r := e.runStdin(init, "mcp")
	var resp struct {
		Result struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &resp); err != nil || resp.Result.ServerInfo.Version != "v1.2.3" {
		t.Errorf("memos mcp serverInfo: %v %+v\nstdout %s\nstderr %s", err, resp, r.stdout, r.stderr)
	}
}
