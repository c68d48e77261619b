package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	_ "github.com/memos-go/memos/embedders/hash"
)

// env is a private memos home and environment; every run gets a fresh
// command tree and configuration, as a new process would.
type env struct {
	t       *testing.T
	home    string
	environ []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	home := filepath.Join(t.TempDir(), "memos-home")
	return &env{t: t, home: home, environ: []string{"HOME=" + t.TempDir(), "MEMOS_HOME=" + home}}
}

// with returns a copy of e with extra environment variables.
func (e *env) with(kv ...string) *env {
	c := *e
	c.environ = append(slices.Clone(e.environ), kv...)
	return &c
}

type result struct {
	code           int
	stdout, stderr string
}

func (e *env) runStdin(stdin string, args ...string) result {
	e.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), e.environ, args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.runStdin("", args...)
}

// ok runs args and fails the test unless they succeed.
func (e *env) ok(args ...string) string {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("memos %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// json runs args with --json and decodes stdout into v.
func (e *env) json(v any, args ...string) {
	e.t.Helper()
	out := e.ok(append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.t.Fatalf("memos %s --json: output does not parse: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (e *env) add(content string, flags ...string) *core.Memory {
	e.t.Helper()
	var m core.Memory
	e.json(&m, append([]string{"add", content}, flags...)...)
	return &m
}

func (e *env) stats() statsJSON {
	e.t.Helper()
	var s statsJSON
	e.json(&s, "stats")
	return s
}

type statsJSON struct {
	Store    storeInfo      `json:"store"`
	Memories int            `json:"memories"`
	Versions int            `json:"versions"`
	Edges    int            `json:"edges"`
	Seq      uint64         `json:"seq"`
	ByNS     map[string]int `json:"by_namespace"`
	Embedder core.ModelInfo `json:"embedder"`
}

func hitIDs(res core.SearchResult) []int64 {
	ids := make([]int64, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.Memory.ID
	}
	return ids
}

// TestTour runs the command sequence of issue 2 end to end.
func TestTour(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	m1 := e.add("Alice prefers open-source tools", "--type", "preference", "--significance", "6", "--entities", "Alice")
	if m1.ID != 1 || m1.Type != core.TypePreference || m1.Significance != 6 || !slices.Equal(m1.Entities, []string{"Alice"}) || m1.Pool != core.PoolMemory {
		t.Fatalf("add 1 = %+v", m1)
	}
	out := e.ok("add", "Alice's home lab runs Proxmox on three nodes", "--type", "fact", "--source", "conversation:7#turn-3")
	if !strings.Contains(out, "added memory 2") {
		t.Fatalf("human add output = %q", out)
	}
	if _, err := os.Stat(filepath.Join(e.home, "memory.db")); err != nil {
		t.Fatalf("default store not at $MEMOS_HOME/memory.db: %v", err)
	}

	var res core.SearchResult
	e.json(&res, "search", "what does alice like")
	if ids := hitIDs(res); len(ids) == 0 || ids[0] != 1 {
		t.Fatalf("search what does alice like: hits %v, want memory 1 first", ids)
	}
	out = e.ok("search", "what does alice like")
	if lines := strings.Split(out, "\n"); len(lines) < 3 || !strings.Contains(lines[2], "Alice prefers open-source tools") {
		t.Fatalf("human search output does not list memory 1 first:\n%s", out)
	}

	res = core.SearchResult{}
	e.json(&res, "search", `preference AND "open-source"`, "--mode", "fts")
	if ids := hitIDs(res); !slices.Equal(ids, []int64{1}) {
		t.Fatalf("fts search: hits %v, want [1]", ids)
	}

	// Namespaces: a scoped search sees its namespace and default, nothing else.
	infra := e.add("The nginx config lives in /etc/nginx/sites-enabled", "--namespace", "project:infra")
	other := e.add("The config of the other project is secret", "--namespace", "project:other")
	shared := e.add("Shared config conventions: YAML, two spaces")
	res = core.SearchResult{}
	e.json(&res, "search", "config*", "--namespace", "project:infra")
	ids := hitIDs(res)
	if !slices.Contains(ids, infra.ID) || !slices.Contains(ids, shared.ID) || slices.Contains(ids, other.ID) {
		t.Fatalf("search config* in project:infra: hits %v, want %d and %d but not %d", ids, infra.ID, shared.ID, other.ID)
	}
	for _, h := range res.Hits {
		if ns := h.Memory.Namespace; ns != "project:infra" && ns != core.DefaultNamespace {
			t.Fatalf("scoped search returned namespace %s", ns)
		}
	}

	var m core.Memory
	e.json(&m, "get", "2")
	if m.Content != "Alice's home lab runs Proxmox on three nodes" || m.Source != "conversation:7#turn-3" || m.Version != 1 {
		t.Fatalf("get 2 = %+v", m)
	}
	if out := e.ok("get", "2"); !strings.Contains(out, "conversation:7#turn-3") || !strings.Contains(out, "three nodes") {
		t.Fatalf("human get output:\n%s", out)
	}
	e.json(&m, "update", "2", "Alice's home lab runs Proxmox on four nodes")
	if m.Version != 2 || !strings.Contains(m.Content, "four nodes") {
		t.Fatalf("update 2 = version %d %q", m.Version, m.Content)
	}
	var hist struct {
		ID       int64         `json:"id"`
		Versions []core.Memory `json:"versions"`
	}
	e.json(&hist, "history", "2")
	if len(hist.Versions) != 2 || hist.Versions[0].Version != 1 || !strings.Contains(hist.Versions[1].Content, "four") {
		t.Fatalf("history 2 = %+v", hist)
	}
	if out := e.ok("history", "2"); !strings.Contains(out, "2 (current)") {
		t.Fatalf("human history output:\n%s", out)
	}
	e.json(&m, "revert", "2", "1")
	if m.Version != 3 || !strings.Contains(m.Content, "three nodes") {
		t.Fatalf("revert 2 1 = version %d %q", m.Version, m.Content)
	}
	e.json(&m, "get", "2", "--version", "2")
	if m.Version != 2 || !strings.Contains(m.Content, "four") {
		t.Fatalf("get 2 --version 2 = version %d %q", m.Version, m.Content)
	}

	var edge core.Edge
	e.json(&edge, "link", "1", "2", "--type", "relates_to")
	if edge.From != 1 || edge.To != 2 || edge.Type != core.EdgeRelatesTo || edge.Weight != 1 {
		t.Fatalf("link = %+v", edge)
	}
	var edges struct {
		Edges []core.Edge `json:"edges"`
	}
	e.json(&edges, "edges", "2")
	if len(edges.Edges) != 1 || edges.Edges[0].From != 1 {
		t.Fatalf("edges 2 = %+v", edges)
	}

	var cert core.DeletionCertificate
	e.json(&cert, "forget", "2", "--reason", "user asked")
	if cert.MemoryID != 2 || cert.Versions != 3 || cert.Edges != 1 || cert.Reason != "user asked" || len(cert.ContentHash) != 64 || cert.AuditHash == "" {
		t.Fatalf("forget certificate = %+v", cert)
	}
	if r := e.run("get", "2"); r.code != 3 || !strings.Contains(r.stderr, "memos: ") {
		t.Fatalf("get after forget: exit %d, stderr %q; want 3 and a memos: message", r.code, r.stderr)
	}
	e.json(&edges, "edges", "1")
	if len(edges.Edges) != 0 {
		t.Fatalf("edges of 1 after forgetting 2: %+v", edges.Edges)
	}

	st := e.stats()
	// In default scope: 1 and the shared config memory.
	if st.Memories != 2 || st.Edges != 0 || st.Store.Backend != "sqlite" || st.Store.Path != filepath.Join(e.home, "memory.db") || st.Embedder.ID == "" {
		t.Fatalf("stats = %+v", st)
	}
	if out := e.ok("stats"); !strings.Contains(out, "memories") || !strings.Contains(out, "memory.db") {
		t.Fatalf("human stats output:\n%s", out)
	}
	var cfg struct {
		File   string `json:"file"`
		Values []struct {
			Key    string `json:"key"`
			Value  any    `json:"value"`
			Source string `json:"source"`
		} `json:"values"`
	}
	e.json(&cfg, "config", "show")
	if cfg.File != filepath.Join(e.home, "config.yaml") || len(cfg.Values) == 0 {
		t.Fatalf("config show = %+v", cfg)
	}
	if out := e.ok("config", "show"); !strings.Contains(out, "env MEMOS_HOME") {
		t.Fatalf("human config show does not say where home came from:\n%s", out)
	}
}

func TestAddAttributesAndStdin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.runStdin("Notes from the retro:\nship smaller changes\n", "add", "-", "--json",
		"--type", "event", "--pool", "raw", "--entities", "team, retro", "--session", "retro-9",
		"--trust", "imported", "--trust-score", "0.4", "--valid-from", "2024-05-01", "--valid-to", "2024-06-01T12:00:00Z",
		"--emotional-context", "relieved", "--metadata", "k=v", "--meta", "sprint=12")
	if r.code != 0 {
		t.Fatalf("add -: exit %d: %s", r.code, r.stderr)
	}
	var m core.Memory
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatal(err)
	}
	if m.Content != "Notes from the retro:\nship smaller changes" {
		t.Errorf("content from stdin = %q (want the trailing newline dropped, the rest kept)", m.Content)
	}
	if m.Type != core.TypeEvent || m.Pool != core.PoolRaw || !slices.Equal(m.Entities, []string{"team", "retro"}) ||
		m.Session != "retro-9" || m.Trust.Level != core.TrustImported || m.Trust.Score != 0.4 || m.EmotionalContext != "relieved" ||
		m.ValidFrom.Format("2006-01-02") != "2024-05-01" || m.ValidTo.Hour() != 12 || m.Metadata["k"] != "v" || m.Metadata["sprint"] != "12" {
		t.Errorf("attributes not stored as given: %+v", m)
	}

	// update changes only what is given; --metadata merges, key= removes.
	m = core.Memory{} // decode afresh: JSON leaves absent fields untouched
	e.json(&m, "update", "1", "--significance", "8", "--metadata", "k=", "--metadata", "reviewed=yes", "--valid-to", "")
	if m.Version != 2 || m.Significance != 8 || m.Content != "Notes from the retro:\nship smaller changes" ||
		m.Metadata["k"] != nil || m.Metadata["sprint"] != "12" || m.Metadata["reviewed"] != "yes" || !m.ValidTo.IsZero() || m.Session != "retro-9" {
		t.Errorf("update = %+v", m)
	}
	// A text flag given as "" clears its attribute, as the operation's "" does.
	m = core.Memory{}
	e.json(&m, "update", "1", "--session", "", "--valid-from", "")
	if m.Version != 3 || m.Session != "" || !m.ValidFrom.IsZero() || m.EmotionalContext != "relieved" || m.Metadata["reviewed"] != "yes" {
		t.Errorf("update --session \"\" --valid-from \"\" = %+v", m)
	}
	r = e.runStdin("replaced from stdin\n", "update", "1", "-", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"content": "replaced from stdin"`) {
		t.Errorf("update 1 -: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestBadInput checks that every kind of bad input gets a clear error, the
// exit code of its kind, and stores nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.add("Alice prefers open-source tools", "--type", "preference")
	e.add("Alice's home lab runs Proxmox on three nodes")
	before := e.stats()

	big := strings.Repeat("a", core.MaxContentBytes+1)
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
		msg   string // in stderr
	}{
		{"empty content", "", []string{"add", ""}, 2, "content is empty"},
		{"whitespace content", "", []string{"add", " \t\n "}, 2, "content is empty"},
		{"invisible content", "", []string{"add", "\u200b\x00\x1b"}, 2, "content is empty"},
		{"invalid UTF-8", "", []string{"add", "bad \xff\xfe bytes"}, 2, "UTF-8"},
		{"content too large", "", []string{"add", big}, 2, "over the limit"},
		{"stdin too large", big + "aaaa", []string{"add", "-"}, 2, "over the limit"},
		{"empty stdin", "", []string{"add", "-"}, 2, "content is empty"},
		{"significance 0", "", []string{"add", "x", "--significance", "0"}, 2, "outside 1–10"},
		{"significance 11", "", []string{"add", "x", "--significance", "11"}, 2, "outside 1–10"},
		{"significance not a number", "", []string{"add", "x", "--significance", "high"}, 2, "significance"},
		{"unknown type", "", []string{"add", "x", "--type", "opinion"}, 2, `unknown type "opinion"`},
		{"unknown pool", "", []string{"add", "x", "--pool", "archive"}, 2, `unknown pool "archive"`},
		{"unknown trust", "", []string{"add", "x", "--trust", "maybe"}, 2, `unknown trust level "maybe"`},
		{"trust score out of range", "", []string{"add", "x", "--trust-score", "1.5"}, 2, "trust score"},
		{"malformed namespace", "", []string{"add", "x", "--namespace", "nope"}, 2, "malformed namespace"},
		{"namespace without name", "", []string{"add", "x", "--namespace", "project:"}, 2, "malformed namespace"},
		{"bad date", "", []string{"add", "x", "--valid-from", "2024-13-01"}, 2, "valid_from"},
		{"bad time", "", []string{"add", "x", "--valid-to", "yesterday"}, 2, "valid_to"},
		{"valid-to before valid-from", "", []string{"add", "x", "--valid-from", "2024-06-01", "--valid-to", "2024-05-01"}, 2, "valid_to"},
		{"bad meta", "", []string{"add", "x", "--metadata", "novalue"}, 2, "key=value"},
		{"two content arguments", "", []string{"add", "Alice", "likes tea"}, 2, "quote"},
		{"unbalanced quote", "", []string{"search", `preference AND "open`, "--mode", "fts"}, 2, "quote"},
		{"unbalanced parenthesis", "", []string{"search", "(alice OR bob", "--mode", "fts"}, 2, "paren"},
		{"unknown mode", "", []string{"search", "alice", "--mode", "fuzzy"}, 2, "unknown search mode"},
		{"bad limit", "", []string{"search", "alice", "--limit", "0"}, 2, "--limit"},
		{"empty query", "", []string{"search", " "}, 2, "query is empty"},
		{"unknown id", "", []string{"get", "999"}, 3, "999"},
		{"malformed id", "", []string{"get", "abc"}, 2, "not a positive integer"},
		{"missing version", "", []string{"get", "1", "--version", "7"}, 3, "versions 1 to 1"},
		{"update unknown id", "", []string{"update", "999", "new"}, 3, "999"},
		{"update empty content", "", []string{"update", "1", "   "}, 2, "content is empty"},
		{"update nothing", "", []string{"update", "1"}, 2, "nothing to update"},
		{"update bad significance", "", []string{"update", "1", "--significance", "42"}, 2, "outside 1–10"},
		{"history unknown id", "", []string{"history", "999"}, 3, "999"},
		{"revert to missing version", "", []string{"revert", "1", "9"}, 3, "not 9"},
		{"revert unknown id", "", []string{"revert", "999", "1"}, 3, "999"},
		{"revert to current version", "", []string{"revert", "1", "1"}, 2, "already the current version"},
		{"revert bad version", "", []string{"revert", "1", "v1"}, 2, "not a positive integer"},
		{"link unknown id", "", []string{"link", "1", "999"}, 3, "999"},
		{"link to itself", "", []string{"link", "1", "1"}, 2, "itself"},
		{"link bad type", "", []string{"link", "1", "2", "--type", "Relates To"}, 2, "edge type"},
		{"link bad weight", "", []string{"link", "1", "2", "--weight", "-1"}, 2, "edge weight -1 must be a positive number"},
		{"unlink missing edge", "", []string{"unlink", "1", "2"}, 3, "not found"},
		{"forget unknown id", "", []string{"forget", "999"}, 3, "999"},
		{"unknown command", "", []string{"remember", "x"}, 2, "unknown command"},
		{"unknown flag", "", []string{"add", "x", "--colour", "red"}, 2, "unknown flag"},
	}
	// These cases also check the --json form of the error (each run opens
	// the store, which is slow under -race, so not every case does).
	jsonCheck := map[string]bool{"empty content": true, "unknown type": true, "unbalanced quote": true,
		"unknown id": true, "revert to missing version": true, "unknown command": true, "unknown flag": true}
	for _, c := range cases {
		r := e.runStdin(c.stdin, c.args...)
		if r.code != c.code {
			t.Errorf("%s: memos %q: exit %d, want %d (stderr %q)", c.name, c.args, r.code, c.code, r.stderr)
			continue
		}
		if !strings.HasPrefix(r.stderr, "memos: ") || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("%s: stderr %q, want a memos: line mentioning %q", c.name, r.stderr, c.msg)
		}
		if r.stdout != "" {
			t.Errorf("%s: stdout %q, want nothing", c.name, r.stdout)
		}
		if !jsonCheck[c.name] {
			continue
		}
		// With --json the same error comes as a JSON object.
		r = e.runStdin(c.stdin, append(c.args, "--json")...)
		var je struct {
			Error struct{ Kind, Message string } `json:"error"`
		}
		kind := map[int]string{2: "invalid", 3: "not_found"}[c.code]
		if err := json.Unmarshal([]byte(r.stderr), &je); err != nil || r.code != c.code || je.Error.Kind != kind || !strings.Contains(je.Error.Message, c.msg) || r.stdout != "" {
			t.Errorf("%s --json: exit %d, stderr %q (%v)", c.name, r.code, r.stderr, err)
		}
	}
	after := e.stats()
	if after.Memories != before.Memories || after.Versions != before.Versions || after.Edges != before.Edges || after.Seq != before.Seq {
		t.Errorf("bad input changed the store: before %+v, after %+v", before, after)
	}
	if after.ByNS["project:other"] != 0 {
		t.Errorf("something was stored: %+v", after.ByNS)
	}
	if r := e.run("stats", "--namespace", "nope"); r.code != 2 {
		t.Errorf("stats with a malformed --namespace: exit %d", r.code)
	}
}

func TestHelpAndNoArgs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, args := range [][]string{nil, {"--help"}, {"help", "add"}, {"search", "--help"}} {
		r := e.run(args...)
		if r.code != 0 || !strings.Contains(r.stdout, "memos") || r.stderr != "" {
			t.Errorf("memos %q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(e.home); !os.IsNotExist(err) {
		t.Errorf("help created the home directory (%v)", err)
	}
}
