package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/core"
)

// This file holds memos setup: it writes the memos MCP server entry into an
// MCP client's own configuration file (see setupfile.go for the editing).

// mcpClient is one MCP client whose configuration file memos setup edits.
type mcpClient struct {
	name, title string
	// file is the user-level configuration file for goos; home is the
	// user's home directory and env reads the environment.
	file func(goos, home string, env func(string) string) string
	// project is the project-level file, relative to the working
	// directory ("" when the client has none).
	project string
	// toml: the file is TOML and the entry is the table [servers.<name>];
	// else it is JSON and the entry is at the object path servers.
	toml    bool
	servers []string
	// stdio is the entry that starts command with args; remote the entry
	// that connects to url, sending headers (nil when the client's file
	// cannot hold remote servers).
	stdio  func(command string, args []string) any
	remote func(url string, headers map[string]string) any
}

// appData is %APPDATA% (the roaming application data folder) on Windows.
func appData(home string, env func(string) string) string {
	if d := env("APPDATA"); d != "" {
		return d
	}
	return filepath.Join(home, "AppData", "Roaming")
}

// xdgConfig is $XDG_CONFIG_HOME, by default ~/.config.
func xdgConfig(home string, env func(string) string) string {
	if d := env("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	return filepath.Join(home, ".config")
}

// mcpServersEntry is the common {command, args} form of a stdio server.
type mcpServersEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

var mcpClients = []*mcpClient{
	{
		name: "claude-desktop", title: "Claude Desktop",
		file: func(goos, home string, env func(string) string) string {
			switch goos {
			case "darwin":
				return filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
			case "windows":
				return filepath.Join(appData(home, env), "Claude", "claude_desktop_config.json")
			}
			return filepath.Join(xdgConfig(home, env), "Claude", "claude_desktop_config.json")
		},
		servers: []string{"mcpServers"},
		stdio:   func(c string, a []string) any { return mcpServersEntry{Command: c, Args: a} },
		// The file takes local servers only; remote ones are added in the app.
	},
	{
		name: "claude-code", title: "Claude Code",
		file:    func(_, home string, _ func(string) string) string { return filepath.Join(home, ".claude.json") },
		project: ".mcp.json",
		servers: []string{"mcpServers"},
		stdio:   func(c string, a []string) any { return mcpServersEntry{Type: "stdio", Command: c, Args: a} },
		remote:  func(u string, h map[string]string) any { return mcpServersEntry{Type: "http", URL: u, Headers: h} },
	},
	{
		name: "cursor", title: "Cursor",
		file:    func(_, home string, _ func(string) string) string { return filepath.Join(home, ".cursor", "mcp.json") },
		project: filepath.Join(".cursor", "mcp.json"),
		servers: []string{"mcpServers"},
		stdio:   func(c string, a []string) any { return mcpServersEntry{Command: c, Args: a} },
		remote:  func(u string, h map[string]string) any { return mcpServersEntry{URL: u, Headers: h} },
	},
	{
		name: "vscode", title: "VS Code (Copilot)",
		file: func(goos, home string, env func(string) string) string {
			switch goos {
			case "darwin":
				return filepath.Join(home, "Library", "Application Support", "Code", "User", "mcp.json")
			case "windows":
				return filepath.Join(appData(home, env), "Code", "User", "mcp.json")
			}
			return filepath.Join(xdgConfig(home, env), "Code", "User", "mcp.json")
		},
		project: filepath.Join(".vscode", "mcp.json"),
		servers: []string{"servers"},
		stdio:   func(c string, a []string) any { return mcpServersEntry{Type: "stdio", Command: c, Args: a} },
		remote:  func(u string, h map[string]string) any { return mcpServersEntry{Type: "http", URL: u, Headers: h} },
	},
	{
		name: "windsurf", title: "Windsurf",
		file: func(_, home string, _ func(string) string) string {
			return filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")
		},
		servers: []string{"mcpServers"},
		stdio:   func(c string, a []string) any { return mcpServersEntry{Command: c, Args: a} },
		remote: func(u string, h map[string]string) any {
			return struct {
				ServerURL string            `json:"serverUrl"`
				Headers   map[string]string `json:"headers,omitempty"`
			}{u, h}
		},
	},
	{
		name: "codex", title: "Codex CLI",
		file: func(_, home string, env func(string) string) string {
			if d := env("CODEX_HOME"); d != "" {
				return filepath.Join(d, "config.toml")
			}
			return filepath.Join(home, ".codex", "config.toml")
		},
		project: filepath.Join(".codex", "config.toml"),
		toml:    true,
		servers: []string{"mcp_servers"},
		stdio: func(c string, a []string) any {
			return struct {
				Command string   `toml:"command"`
				Args    []string `toml:"args"`
			}{c, a}
		},
		remote: func(u string, h map[string]string) any {
			return struct {
				URL     string            `toml:"url"`
				Headers map[string]string `toml:"http_headers,inline,omitempty"`
			}{u, h}
		},
	},
	{
		name: "gemini", title: "Gemini CLI",
		file: func(_, home string, _ func(string) string) string {
			return filepath.Join(home, ".gemini", "settings.json")
		},
		project: filepath.Join(".gemini", "settings.json"),
		servers: []string{"mcpServers"},
		stdio:   func(c string, a []string) any { return mcpServersEntry{Command: c, Args: a} },
		remote: func(u string, h map[string]string) any {
			return struct {
				HTTPURL string            `json:"httpUrl"`
				Headers map[string]string `json:"headers,omitempty"`
			}{u, h}
		},
	},
	{
		name: "opencode", title: "OpenCode",
		file: func(_, home string, env func(string) string) string {
			return filepath.Join(xdgConfig(home, env), "opencode", "opencode.json")
		},
		project: "opencode.json",
		servers: []string{"mcp"},
		stdio: func(c string, a []string) any {
			return struct {
				Type    string   `json:"type"`
				Command []string `json:"command"`
				Enabled bool     `json:"enabled"`
			}{"local", append([]string{c}, a...), true}
		},
		remote: func(u string, h map[string]string) any {
			return struct {
				Type    string            `json:"type"`
				URL     string            `json:"url"`
				Headers map[string]string `json:"headers,omitempty"`
				Enabled bool              `json:"enabled"`
			}{"remote", u, h, true}
		},
	},
}

func mcpClientNames() []string {
	var names []string
	for _, c := range mcpClients {
		names = append(names, c.name)
	}
	return names
}

func lookupMCPClient(name string) (*mcpClient, error) {
	for _, c := range mcpClients {
		if c.name == name {
			return c, nil
		}
	}
	return nil, core.Invalidf("unknown MCP client %q (known: %s)", name, strings.Join(mcpClientNames(), ", "))
}

// setupReport is what memos setup did, printed with --json.
type setupReport struct {
	Client string `json:"client"`
	File   string `json:"file"`
	Name   string `json:"name"`
	// Action is added, updated, unchanged, removed or absent (nothing to
	// remove); with --dry-run it is what would happen.
	Action string `json:"action"`
	DryRun bool   `json:"dry_run,omitempty"`
	Backup string `json:"backup,omitempty"`
	Diff   string `json:"diff,omitempty"`
	Entry  any    `json:"entry,omitempty"`
}

var entryNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (a *app) setupCmd() *cobra.Command {
	var (
		dryRun, uninstall, project bool
		file, name, command        string
		serverURL, token           string
	)
	cmd := &cobra.Command{
		Use:   "setup <client>",
		Short: "Add memos to an MCP client's configuration (" + strings.Join(mcpClientNames(), ", ") + ")",
		Long: `setup writes the memos MCP server entry into the client's own configuration
file, merging it with what the file holds: other servers and settings stay as
they are. Before it changes a file it copies it to FILE.memos-backup-<time>.
A rerun with the same options changes nothing; with other options it replaces
the entry. A file it cannot parse (for example JSON with comments) is left
untouched, and setup prints the entry to add by hand.

The entry runs this memos binary (its absolute path) as "memos mcp", with
--home and --namespace when given as flags or set in MEMOS_HOME and
MEMOS_NAMESPACE, and --backend and --embedder when given as flags. With --url
it instead connects to a running memos serve at that URL (…/mcp), sending
--token as "Authorization: Bearer <token>".

Files (user level; --project writes the file in the current directory):
  claude-desktop  ~/Library/Application Support/Claude/claude_desktop_config.json (macOS),
                  %APPDATA%\Claude\claude_desktop_config.json (Windows),
                  $XDG_CONFIG_HOME/Claude/claude_desktop_config.json (Linux)
  claude-code     ~/.claude.json (user scope); --project: .mcp.json
  cursor          ~/.cursor/mcp.json; --project: .cursor/mcp.json
  vscode          the user profile's mcp.json (~/Library/Application Support/Code/User,
                  %APPDATA%\Code\User, ~/.config/Code/User); --project: .vscode/mcp.json
  windsurf        ~/.codeium/windsurf/mcp_config.json
  codex           $CODEX_HOME/config.toml or ~/.codex/config.toml; --project: .codex/config.toml
  gemini          ~/.gemini/settings.json; --project: .gemini/settings.json
  opencode        ~/.config/opencode/opencode.json; --project: opencode.json
Restart the client afterwards.`,
		Example: `  memos setup claude-desktop
  memos setup cursor --namespace project:web --dry-run
  memos setup codex --home ~/.memos-work
  memos setup vscode --project
  memos setup claude-code --url https://memos.internal:7077/mcp --token "$MEMOS_TOKEN"
  memos setup gemini --uninstall`,
		Args: nargs(1, 1, "a client: "+strings.Join(mcpClientNames(), ", ")),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			c, err := lookupMCPClient(args[0])
			if err != nil {
				return err
			}
			if !entryNameRE.MatchString(name) {
				return core.Invalidf("--name %q: use 1 to 64 letters, digits, _ or -", name)
			}
			path, err := a.setupFile(c, file, project)
			if err != nil {
				return err
			}
			rep := &setupReport{Client: c.name, File: path, Name: name, DryRun: dryRun}
			var entry any
			if !uninstall {
				if entry, err = a.setupEntry(cmd, c, command, serverURL, token); err != nil {
					return err
				}
				rep.Entry = entry
			} else if cmd.Flags().Changed("url") || cmd.Flags().Changed("token") {
				return core.Invalidf("--uninstall removes the %s entry; it takes no --url or --token", name)
			}
			if err := a.applySetup(c, rep, entry); err != nil {
				return err
			}
			return a.emit(rep, func(w io.Writer) { rep.writeText(w, c) })
		}),
	}
	f := cmd.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "print the change as a diff and change nothing")
	f.BoolVar(&uninstall, "uninstall", false, "remove the memos entry (and only it)")
	f.BoolVar(&project, "project", false, "write the client's project file in the current directory instead of the user's")
	f.StringVar(&file, "file", "", "the configuration file to edit (default: the client's, see above)")
	f.StringVar(&name, "name", "memos", "the server's name in the client's configuration")
	f.StringVar(&command, "command", "", "the memos binary the entry runs (default: this one)")
	f.StringVar(&serverURL, "url", "", "connect to a running memos serve at this URL (e.g. http://127.0.0.1:7077/mcp) instead of starting memos mcp")
	f.StringVar(&token, "token", "", "with --url: the bearer token the client sends")
	return cmd
}

// getenv reads the run's environment.
func (a *app) getenv(key string) string {
	for _, kv := range slices.Backward(a.environ) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// setupFile is the configuration file memos setup edits.
func (a *app) setupFile(c *mcpClient, file string, project bool) (string, error) {
	switch {
	case file != "" && project:
		return "", core.Invalidf("give --file or --project, not both")
	case file != "":
		return filepath.Abs(file)
	case project:
		if c.project == "" {
			return "", core.Invalidf("%s has no project configuration file; drop --project to set it up for your user", c.title)
		}
		return filepath.Abs(c.project)
	}
	home := a.getenv("HOME")
	if runtime.GOOS == "windows" {
		home = a.getenv("USERPROFILE")
	}
	if home == "" {
		return "", core.Invalidf("cannot find your home directory (HOME is not set); name the file with --file")
	}
	return c.file(runtime.GOOS, home, a.getenv), nil
}

// setupEntry is the server entry for client c.
func (a *app) setupEntry(cmd *cobra.Command, c *mcpClient, command, serverURL, token string) (any, error) {
	pf := cmd.Root().PersistentFlags()
	if serverURL != "" {
		for _, f := range []string{"home", "namespace", "backend", "embedder"} {
			if pf.Changed(f) {
				return nil, core.Invalidf("--%s does not apply with --url: the server at the URL decides (its own configuration, and the token's namespaces)", f)
			}
		}
		if cmd.Flags().Changed("command") {
			return nil, core.Invalidf("--command does not apply with --url: the client connects to the server, it starts no memos")
		}
		u, err := url.Parse(serverURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, core.Invalidf("--url %q: want the http:// or https:// address of memos serve's MCP endpoint, e.g. http://127.0.0.1:7077/mcp", serverURL)
		}
		if c.remote == nil {
			return nil, core.Invalidf("%s's configuration file takes only servers it starts itself; add %s in the app (Settings > Connectors), or drop --url", c.title, serverURL)
		}
		var headers map[string]string
		if token != "" {
			headers = map[string]string{"Authorization": "Bearer " + token}
		}
		return c.remote(serverURL, headers), nil
	}
	if token != "" {
		return nil, core.Invalidf("--token goes with --url (a running memos serve); memos mcp opens the store itself and needs no token")
	}
	if command == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find this memos binary: %w; name it with --command", err)
		}
		if strings.Contains(exe, string(filepath.Separator)+"go-build") {
			return nil, core.Invalidf("this memos runs from a temporary build (go run), which the client cannot start later; install it (go install ./cmd/memos) and run memos setup from there, or name the binary with --command")
		}
		command = exe
	}
	command, err := filepath.Abs(command)
	if err != nil {
		return nil, err
	}
	args := []string{"mcp"}
	home := a.home
	if !pf.Changed("home") {
		home = a.getenv("MEMOS_HOME")
	}
	if home != "" {
		if home, err = filepath.Abs(expandHome(home, a.getenv("HOME"))); err != nil {
			return nil, err
		}
		args = append(args, "--home", home)
	}
	ns := a.namespace
	if !pf.Changed("namespace") {
		ns = a.getenv("MEMOS_NAMESPACE")
	}
	if ns != "" {
		if err := core.ValidateNamespace(ns); err != nil {
			return nil, err
		}
		args = append(args, "--namespace", ns)
	}
	for _, f := range []struct{ name, val string }{{"backend", a.backend}, {"embedder", a.embedder}} {
		if pf.Changed(f.name) {
			args = append(args, "--"+f.name, f.val)
		}
	}
	return c.stdio(command, args), nil
}

// expandHome replaces a leading ~/ (a shell would have, unquoted).
func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	return p
}

// applySetup edits rep.File: puts entry in, or takes rep.Name out when entry
// is nil. With rep.DryRun it only computes the diff.
func (a *app) applySetup(c *mcpClient, rep *setupReport, entry any) error {
	src, err := os.ReadFile(rep.File)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", rep.File, err)
	}
	var out []byte
	var found, same bool
	if c.toml {
		out, found, same, err = editTOML(src, c.servers[0], rep.Name, entry)
	} else {
		servers := c.servers
		if c.name == "opencode" && jsonHasObject(src, "mcp", "servers") {
			servers = []string{"mcp", "servers"} // OpenCode's newer layout
		}
		out, found, same, err = editJSON(src, servers, rep.Name, entry)
	}
	if err != nil {
		return unparsable(err, rep.File, rep.Name, a.snippet(c, rep.Name, entry))
	}
	switch {
	case entry == nil && !found:
		rep.Action = "absent"
		return nil
	case entry == nil:
		rep.Action = "removed"
	case same:
		rep.Action = "unchanged"
		return nil
	case found:
		rep.Action = "updated"
	default:
		rep.Action = "added"
	}
	var d bytes.Buffer
	writeDiff(&d, rep.File, rep.File+" (memos setup)", src, out)
	rep.Diff = d.String()
	if rep.DryRun {
		return nil
	}
	mode := fs.FileMode(0o600)
	if exists {
		if st, err := os.Stat(rep.File); err == nil {
			mode = st.Mode().Perm()
		}
		rep.Backup = fmt.Sprintf("%s.memos-backup-%s", rep.File, time.Now().Format("20060102-150405"))
		for i := 2; ; i++ {
			if _, err := os.Lstat(rep.Backup); errors.Is(err, fs.ErrNotExist) {
				break
			}
			rep.Backup = fmt.Sprintf("%s.memos-backup-%s-%d", rep.File, time.Now().Format("20060102-150405"), i)
		}
		if err := writeFileAtomic(rep.Backup, src, mode); err != nil {
			return fmt.Errorf("back up %s: %w; nothing changed", rep.File, err)
		}
	} else if err := os.MkdirAll(filepath.Dir(rep.File), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(rep.File), err)
	}
	// A symbolic link (a dotfiles repository, say) stays one: write its target.
	target := rep.File
	if real, err := filepath.EvalSymlinks(rep.File); err == nil {
		target = real
	}
	if err := writeFileAtomic(target, out, mode); err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	return nil
}

// jsonHasObject tells whether the JSON document src has an object at path.
func jsonHasObject(src []byte, path ...string) bool {
	keys, vals, err := jsonMembers(bytes.TrimSpace(src))
	if err != nil {
		return false
	}
	for i, k := range keys {
		if k == path[0] {
			if len(path) == 1 {
				return bytes.HasPrefix(bytes.TrimSpace(vals[i]), []byte("{"))
			}
			return jsonHasObject(vals[i], path[1:]...)
		}
	}
	return false
}

// snippet is the entry as the user would add it by hand.
func (a *app) snippet(c *mcpClient, name string, entry any) []byte {
	if entry == nil {
		return []byte("(remove the " + name + " entry)")
	}
	if c.toml {
		out, _, _, err := editTOML(nil, c.servers[0], name, entry)
		if err != nil {
			return nil
		}
		return out
	}
	out, _, _, err := editJSON(nil, c.servers, name, entry)
	if err != nil {
		return nil
	}
	return out
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it over path, so that a crash leaves the old file or the new one.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func (r *setupReport) writeText(w io.Writer, c *mcpClient) {
	if r.DryRun {
		io.WriteString(w, r.Diff)
	}
	what := map[string]string{
		"added":     "added the %s entry to %s",
		"updated":   "updated the %s entry in %s",
		"removed":   "removed the %s entry from %s",
		"unchanged": "the %s entry in %s is already as asked; nothing changed",
		"absent":    "%s has no entry in %s; nothing changed",
	}[r.Action]
	if r.DryRun && r.Diff != "" {
		what = map[string]string{
			"added":   "would add the %s entry to %s",
			"updated": "would update the %s entry in %s",
			"removed": "would remove the %s entry from %s",
		}[r.Action] + " (dry run: nothing changed)"
	}
	fmt.Fprintf(w, "%s: %s\n", c.title, fmt.Sprintf(what, r.Name, r.File))
	if r.Backup != "" {
		fmt.Fprintf(w, "backup of the old file: %s\n", r.Backup)
	}
	if !r.DryRun && r.Diff != "" {
		fmt.Fprintf(w, "restart %s to load the change\n", c.title)
	}
}
