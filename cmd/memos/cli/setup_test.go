package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// setupCase is one client's documented file and entry layout, written out
// here independently of setup.go's table.
type setupCase struct {
	client string
	file   string   // under $HOME on Linux
	path   []string // object path of the servers in the file
	toml   bool
}

var setupCases = []setupCase{
	{"claude-desktop", ".config/Claude/claude_desktop_config.json", []string{"mcpServers"}, false},
	{"claude-code", ".claude.json", []string{"mcpServers"}, false},
	{"cursor", ".cursor/mcp.json", []string{"mcpServers"}, false},
	{"vscode", ".config/Code/User/mcp.json", []string{"servers"}, false},
	{"windsurf", ".codeium/windsurf/mcp_config.json", []string{"mcpServers"}, false},
	{"codex", ".codex/config.toml", []string{"mcp_servers"}, true},
	{"gemini", ".gemini/settings.json", []string{"mcpServers"}, false},
	{"opencode", ".config/opencode/opencode.json", []string{"mcp"}, false},
}

// decodeConfig reads a client's file as a generic document.
func decodeConfig(t *testing.T, c setupCase, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if c.toml {
		err = toml.Unmarshal(b, &doc)
	} else {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil {
		t.Fatalf("%s does not decode: %v\n%s", file, err, b)
	}
	return doc
}

// servers is the servers object of a decoded file.
func (c setupCase) servers(doc map[string]any) map[string]any {
	var v any = doc
	for _, k := range c.path {
		v = v.(map[string]any)[k]
	}
	m, _ := v.(map[string]any)
	return m
}

// commandLine is the command and arguments of a stdio entry, whatever the
// client's layout.
func (c setupCase) commandLine(t *testing.T, entry any) []string {
	t.Helper()
	m, ok := entry.(map[string]any)
	if !ok {
		t.Fatalf("%s: entry %v is not an object", c.client, entry)
	}
	var line []string
	if c.client == "opencode" {
		if m["type"] != "local" || m["enabled"] != true {
			t.Errorf("opencode entry: %v, want type local, enabled", m)
		}
		for _, s := range m["command"].([]any) {
			line = append(line, s.(string))
		}
		return line
	}
	if want := map[string]string{"claude-code": "stdio", "vscode": "stdio"}[c.client]; m["type"] != nil || want != "" {
		if m["type"] != want {
			t.Errorf("%s entry type %v, want %q", c.client, m["type"], want)
		}
	}
	line = append(line, m["command"].(string))
	for _, s := range m["args"].([]any) {
		line = append(line, s.(string))
	}
	return line
}

func setupEnv(t *testing.T) (*env, string) {
	home := t.TempDir()
	return &env{t: t, environ: []string{"HOME=" + home}}, home
}

// TestSetupClients sets memos up for every client on a fresh HOME: the
// file appears where the client reads it, with the entry that runs the
// binary with the store and namespace given; a rerun changes nothing; the
// uninstall removes it.
func TestSetupClients(t *testing.T) {
	for _, c := range setupCases {
		t.Run(c.client, func(t *testing.T) {
			e, home := setupEnv(t)
			bin := filepath.Join(home, "bin", "memos")
			store := filepath.Join(home, "stores", "work")
			e.ok("setup", c.client, "--command", bin, "--home", store, "-n", "project:web")
			file := filepath.Join(home, c.file)
			srv := c.servers(decodeConfig(t, c, file))
			want := []string{bin, "mcp", "--home", store, "--namespace", "project:web"}
			if got := c.commandLine(t, srv["memos"]); !slices.Equal(got, want) {
				t.Errorf("entry runs %q, want %q", got, want)
			}
			before, _ := os.ReadFile(file)

			var rep setupReport
			e.json(&rep, "setup", c.client, "--command", bin, "--home", store, "-n", "project:web")
			if rep.Action != "unchanged" || rep.Backup != "" {
				t.Errorf("rerun: %+v, want unchanged without a backup", rep)
			}
			if after, _ := os.ReadFile(file); string(after) != string(before) {
				t.Errorf("rerun changed the file:\n%s\n---\n%s", before, after)
			}
			if backups, _ := filepath.Glob(file + ".memos-backup-*"); len(backups) != 0 {
				t.Errorf("rerun left backups %v", backups)
			}

			// Another namespace replaces the entry, keeping one.
			e.json(&rep, "setup", c.client, "--command", bin, "-n", "user:me")
			srv = c.servers(decodeConfig(t, c, file))
			if got := c.commandLine(t, srv["memos"]); !slices.Equal(got, []string{bin, "mcp", "--namespace", "user:me"}) || rep.Action != "updated" || len(srv) != 1 {
				t.Errorf("update: %+v, entry %q, %d servers", rep, got, len(srv))
			}

			e.json(&rep, "setup", c.client, "--uninstall")
			if srv := c.servers(decodeConfig(t, c, file)); rep.Action != "removed" || len(srv) != 0 {
				t.Errorf("uninstall: %+v, servers left %v", rep, srv)
			}
			e.json(&rep, "setup", c.client, "--uninstall")
			if rep.Action != "absent" {
				t.Errorf("second uninstall: %+v, want absent", rep)
			}
		})
	}
}

// existing is a configuration with another server and other settings, in
// an indent and number format the edit must keep.
func existing(c setupCase) string {
	if c.toml {
		return `# my settings
model = "o3"

[mcp_servers.other]
command = "other-server"   # keep this comment
args = ["--x"]

[profiles.fast]
model = "mini"
`
	}
	return `{
    "theme": "dark",
    "` + c.path[0] + `": {
        "other": {"command": "other-server", "args": ["--x"]}
    },
    "zzz": [1, 2.50, "a<b&c"]
}
`
}

// TestSetupMerge runs setup on a file that already has another server and
// other settings: they stay, in their order and form; the old file is
// backed up; --dry-run prints the diff and changes nothing; --uninstall
// removes memos' entry only.
func TestSetupMerge(t *testing.T) {
	for _, c := range setupCases {
		t.Run(c.client, func(t *testing.T) {
			e, home := setupEnv(t)
			file := filepath.Join(home, c.file)
			os.MkdirAll(filepath.Dir(file), 0o755)
			orig := existing(c)
			if err := os.WriteFile(file, []byte(orig), 0o640); err != nil {
				t.Fatal(err)
			}
			bin := "/usr/local/bin/memos"

			out := e.ok("setup", c.client, "--command", bin, "--dry-run")
			if got, _ := os.ReadFile(file); string(got) != orig {
				t.Fatalf("--dry-run changed the file")
			}
			if !strings.Contains(out, "--- "+file) || !strings.Contains(out, "+") || !strings.Contains(out, bin) || !strings.Contains(out, "dry run") {
				t.Errorf("--dry-run output has no diff:\n%s", out)
			}
			if backups, _ := filepath.Glob(file + ".memos-backup-*"); len(backups) != 0 {
				t.Errorf("--dry-run made backups %v", backups)
			}

			var rep setupReport
			e.json(&rep, "setup", c.client, "--command", bin)
			if rep.Action != "added" || rep.Backup == "" {
				t.Fatalf("setup: %+v", rep)
			}
			if b, err := os.ReadFile(rep.Backup); err != nil || string(b) != orig {
				t.Errorf("backup %s: %v, holds %q", rep.Backup, err, b)
			}
			got, _ := os.ReadFile(file)
			if st, _ := os.Stat(file); st.Mode().Perm() != 0o640 {
				t.Errorf("file mode %v, want the file's 0640", st.Mode().Perm())
			}
			doc := decodeConfig(t, c, file)
			srv := c.servers(doc)
			if got := c.commandLine(t, srv["memos"]); !slices.Equal(got, []string{bin, "mcp"}) {
				t.Errorf("entry runs %q", got)
			}
			if !reflect.DeepEqual(srv["other"], map[string]any{"command": "other-server", "args": []any{"--x"}}) {
				t.Errorf("the other server changed: %v", srv["other"])
			}
			text := string(got)
			if c.toml {
				for _, keep := range []string{"# my settings\nmodel = \"o3\"\n", "command = \"other-server\"   # keep this comment\n", "[profiles.fast]\nmodel = \"mini\"\n"} {
					if !strings.Contains(text, keep) {
						t.Errorf("lost %q:\n%s", keep, text)
					}
				}
			} else {
				if doc["theme"] != "dark" || !strings.Contains(text, "2.50") || !strings.Contains(text, `"a<b&c"`) {
					t.Errorf("other settings changed:\n%s", text)
				}
				if !strings.HasPrefix(text, "{\n    \"theme\": \"dark\",\n    \"") || strings.Index(text, "zzz") < strings.Index(text, "other") {
					t.Errorf("order or indent not kept:\n%s", text)
				}
			}

			e.json(&rep, "setup", c.client, "--uninstall")
			doc = decodeConfig(t, c, file)
			if srv := c.servers(doc); rep.Action != "removed" || len(srv) != 1 || srv["other"] == nil {
				t.Errorf("uninstall: %+v, servers %v", rep, srv)
			}
			if c.toml {
				var o map[string]any
				toml.Unmarshal([]byte(orig), &o)
				if !reflect.DeepEqual(doc, o) {
					t.Errorf("after uninstall the file holds %v, want %v", doc, o)
				}
			}
		})
	}
}

// TestSetupMalformed: a file that does not parse is refused and left as it
// was, with no backup; the message shows the entry to add by hand.
func TestSetupMalformed(t *testing.T) {
	for _, c := range setupCases {
		t.Run(c.client, func(t *testing.T) {
			e, home := setupEnv(t)
			file := filepath.Join(home, c.file)
			os.MkdirAll(filepath.Dir(file), 0o755)
			bad := "{\n  // my servers\n  \"" + c.path[0] + "\": {\n"
			if c.toml {
				bad = "[mcp_servers.other\ncommand = \n"
			}
			os.WriteFile(file, []byte(bad), 0o600)
			for _, args := range [][]string{{"setup", c.client, "--command", "/bin/memos"}, {"setup", c.client, "--uninstall"}} {
				r := e.run(args...)
				if r.code != 2 || !strings.Contains(r.stderr, file) || !strings.Contains(r.stderr, "changed nothing") {
					t.Errorf("%v: exit %d, stderr %s", args, r.code, r.stderr)
				}
				if got, _ := os.ReadFile(file); string(got) != bad {
					t.Errorf("%v changed the malformed file", args)
				}
				if backups, _ := filepath.Glob(file + ".memos-backup-*"); len(backups) != 0 {
					t.Errorf("%v made backups %v", args, backups)
				}
			}
			if r := e.run("setup", c.client, "--command", "/bin/memos"); !strings.Contains(r.stderr, "/bin/memos") {
				t.Errorf("the refusal does not show the entry:\n%s", r.stderr)
			}
		})
	}
}

// TestSetupRemote writes entries that connect to a running memos serve, with
// the token as a bearer header, in each client's own layout.
func TestSetupRemote(t *testing.T) {
	const u = "https://memos.example:7077/mcp"
	want := map[string]string{ // the key that holds the URL
		"claude-code": "url", "cursor": "url", "vscode": "url", "windsurf": "serverUrl",
		"codex": "url", "gemini": "httpUrl", "opencode": "url",
	}
	for _, c := range setupCases {
		t.Run(c.client, func(t *testing.T) {
			e, home := setupEnv(t)
			r := e.run("setup", c.client, "--url", u, "--token", "s3cret-token-0123456789")
			if c.client == "claude-desktop" {
				if r.code != 2 || !strings.Contains(r.stderr, "Connectors") {
					t.Errorf("claude-desktop --url: exit %d, %s", r.code, r.stderr)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			m := c.servers(decodeConfig(t, c, filepath.Join(home, c.file)))["memos"].(map[string]any)
			hdr := "headers"
			if c.toml {
				hdr = "http_headers"
			}
			if m[want[c.client]] != u || !reflect.DeepEqual(m[hdr], map[string]any{"Authorization": "Bearer s3cret-token-0123456789"}) {
				t.Errorf("entry %v", m)
			}
			if m["command"] != nil && c.client != "opencode" {
				t.Errorf("a remote entry with a command: %v", m)
			}
		})
	}
	e, _ := setupEnv(t)
	for _, args := range [][]string{
		{"setup", "cursor", "--token", "abc"},                             // a token without --url
		{"setup", "cursor", "--url", u, "-n", "user:me"},                  // the server decides
		{"setup", "cursor", "--url", "ftp://x/mcp"},                       // not http
		{"setup", "nosuch"},                                               // unknown client
		{"setup", "windsurf", "--project"},                                // no project file
		{"setup", "cursor", "--command", "/bin/memos", "-n", "Bad Space"}, // malformed namespace
	} {
		if r := e.run(args...); r.code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, r.code, r.stderr)
		}
	}
}

// TestSetupPaths checks the documented file of each client on macOS and
// Windows (Linux is what the other tests write).
func TestSetupPaths(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`}[k]
	}
	for _, tc := range []struct{ client, goos, home, want string }{
		{"claude-desktop", "darwin", "/Users/me", "/Users/me/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", "windows", `C:\Users\me`, filepath.Join(`C:\Users\me\AppData\Roaming`, "Claude", "claude_desktop_config.json")},
		{"vscode", "darwin", "/Users/me", "/Users/me/Library/Application Support/Code/User/mcp.json"},
		{"vscode", "windows", `C:\Users\me`, filepath.Join(`C:\Users\me\AppData\Roaming`, "Code", "User", "mcp.json")},
		{"cursor", "darwin", "/Users/me", "/Users/me/.cursor/mcp.json"},
		{"windsurf", "windows", `C:\Users\me`, filepath.Join(`C:\Users\me`, ".codeium", "windsurf", "mcp_config.json")},
		{"codex", "darwin", "/Users/me", "/Users/me/.codex/config.toml"},
	} {
		c, err := lookupMCPClient(tc.client)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.file(tc.goos, tc.home, env); got != tc.want {
			t.Errorf("%s on %s: %s, want %s", tc.client, tc.goos, got, tc.want)
		}
	}
	// CODEX_HOME and XDG_CONFIG_HOME move the files.
	e, home := setupEnv(t)
	e = e.with("CODEX_HOME="+filepath.Join(home, "cx"), "XDG_CONFIG_HOME="+filepath.Join(home, "xdg"))
	e.ok("setup", "codex", "--command", "/bin/memos")
	e.ok("setup", "opencode", "--command", "/bin/memos")
	for _, f := range []string{"cx/config.toml", "xdg/opencode/opencode.json"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestSetupProject writes the project file in the working directory, and
// OpenCode's newer mcp.servers layout when the file already uses it.
func TestSetupProject(t *testing.T) {
	e, _ := setupEnv(t)
	dir := t.TempDir()
	t.Chdir(dir)
	e.ok("setup", "vscode", "--project", "--command", "/bin/memos")
	c := setupCase{"vscode", "", []string{"servers"}, false}
	if got := c.commandLine(t, c.servers(decodeConfig(t, c, filepath.Join(dir, ".vscode", "mcp.json")))["memos"]); !slices.Equal(got, []string{"/bin/memos", "mcp"}) {
		t.Errorf("vscode project entry %q", got)
	}
	os.WriteFile("opencode.json", []byte(`{"$schema": "https://opencode.ai/config.json", "mcp": {"servers": {"x": {"type": "local", "command": ["x"]}}}}`), 0o644)
	e.ok("setup", "opencode", "--project", "--command", "/bin/memos")
	oc := setupCase{"opencode", "", []string{"mcp", "servers"}, false}
	srv := oc.servers(decodeConfig(t, oc, filepath.Join(dir, "opencode.json")))
	if got := oc.commandLine(t, srv["memos"]); !slices.Equal(got, []string{"/bin/memos", "mcp"}) || srv["x"] == nil {
		t.Errorf("opencode mcp.servers: %v", srv)
	}
}

// TestSetupSymlink: a configuration file that is a symbolic link stays one;
// the file it points to gets the entry.
func TestSetupSymlink(t *testing.T) {
	e, home := setupEnv(t)
	real := filepath.Join(t.TempDir(), "dotfiles", "mcp.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte(`{"mcpServers": {}}`), 0o600)
	link := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	e.ok("setup", "cursor", "--command", "/bin/memos")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link", link)
	}
	c := setupCase{"cursor", "", []string{"mcpServers"}, false}
	if got := c.commandLine(t, c.servers(decodeConfig(t, c, real))["memos"]); !slices.Equal(got, []string{"/bin/memos", "mcp"}) {
		t.Errorf("the link's target holds %q", got)
	}
}

// TestSetupEntryRuns sets up Claude Code with the real memos binary and a
// store given in MEMOS_HOME, then starts the entry as the client would —
// its command and arguments, in an environment without MEMOS_HOME — and
// stores a memory over MCP: it lands in that store.
func TestSetupEntryRuns(t *testing.T) {
	t.Parallel()
	bin := buildMemos(t)
	home, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	cmd := exec.Command(bin, "setup", "claude-code", "-n", "project:web")
	cmd.Env = []string{"HOME=" + home, "MEMOS_HOME=" + store}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("memos setup: %v\n%s", err, out)
	}
	c := setupCase{"claude-code", ".claude.json", []string{"mcpServers"}, false}
	line := c.commandLine(t, c.servers(decodeConfig(t, c, filepath.Join(home, c.file)))["memos"])
	if line[0] != bin {
		t.Errorf("the entry runs %s, want the binary that wrote it, %s", line[0], bin)
	}
	msgs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store","arguments":{"content":"Alice prefers tea"}}}`,
	}
	srv := exec.Command(line[0], line[1:]...)
	srv.Env = []string{"HOME=" + home, "GORACE=atexit_sleep_ms=0"}
	stdin, _ := srv.StdinPipe()
	stdout, _ := srv.StdoutPipe()
	var stderr strings.Builder
	srv.Stderr = &stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	var stored string
	for i, m := range msgs {
		io.WriteString(stdin, m+"\n")
		if i == 1 {
			continue // a notification has no answer
		}
		if !sc.Scan() {
			t.Fatalf("no answer to %s\nstderr: %s", m, stderr.String())
		}
		stored = sc.Text()
	}
	stdin.Close()
	if err := srv.Wait(); err != nil {
		t.Errorf("memos mcp: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stored, "project:web") || strings.Contains(stored, `"isError":true`) {
		t.Errorf("memory_store answered %s", stored)
	}
	if _, err := os.Stat(filepath.Join(store, "memory.db")); err != nil {
		t.Errorf("the store in MEMOS_HOME was not used: %v", err)
	}
}
