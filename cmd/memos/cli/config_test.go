package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core/text"
)

type shownValue struct {
	Value  any    `json:"value"`
	Source string `json:"source"`
	Origin string `json:"origin"`
}

// show runs config show --json and returns the values by key.
func (e *env) show(flags ...string) map[string]shownValue {
	e.t.Helper()
	var out struct {
		Values []struct {
			Key string `json:"key"`
			shownValue
		} `json:"values"`
	}
	e.json(&out, append([]string{"config", "show"}, flags...)...)
	m := map[string]shownValue{}
	for _, v := range out.Values {
		m[v.Key] = v.shownValue
	}
	return m
}

func (e *env) writeConfig(yaml string) {
	e.t.Helper()
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func wantValue(t *testing.T, vals map[string]shownValue, key string, value any, source, origin string) {
	t.Helper()
	v, ok := vals[key]
	if !ok {
		t.Fatalf("config show has no %s", key)
	}
	if v.Value != value || v.Source != source || (origin != "" && v.Origin != origin) {
		t.Errorf("%s = %v from %s %s, want %v from %s %s", key, v.Value, v.Source, v.Origin, value, source, origin)
	}
}

// TestConfigPrecedence checks defaults < file < env < flags, both in what
// config show reports and in what the commands do.
func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	vals := e.show()
	wantValue(t, vals, "namespace", "default", "default", "")
	wantValue(t, vals, "backend", "sqlite", "default", "")
	wantValue(t, vals, "embedder.name", "hash", "default", "")
	wantValue(t, vals, "vector.index", "exact", "default", "")
	wantValue(t, vals, "vector.precision", "float32", "default", "")
	wantValue(t, vals, "backends.sqlite.path", filepath.Join(e.home, "memory.db"), "default", "")
	wantValue(t, vals, "home", e.home, "env", "MEMOS_HOME")
	wantValue(t, vals, "search.candidates", float64(30), "default", "")

	e.writeConfig("namespace: project:file\nsearch:\n  candidates: 20\n  recency_half_life: 48h\nembedder:\n  hash:\n    dim: 64\nbackends:\n  sqlite:\n    path: other.db\n")
	file := filepath.Join(e.home, "config.yaml")
	vals = e.show()
	wantValue(t, vals, "namespace", "project:file", "file", file)
	wantValue(t, vals, "search.candidates", float64(20), "file", file)
	wantValue(t, vals, "search.recency_half_life", "48h", "file", file)
	wantValue(t, vals, "embedder.hash.dim", float64(64), "file", file)
	wantValue(t, vals, "backends.sqlite.path", filepath.Join(e.home, "other.db"), "file", file)

	ee := e.with("MEMOS_NAMESPACE=project:env", "MEMOS_SEARCH__CANDIDATES=30", "MEMOS_EMBEDDER=hash", "MEMOS_UNRELATED_TOOL=1")
	vals = ee.show()
	wantValue(t, vals, "namespace", "project:env", "env", "MEMOS_NAMESPACE")
	wantValue(t, vals, "search.candidates", float64(30), "env", "MEMOS_SEARCH__CANDIDATES")
	wantValue(t, vals, "embedder.name", "hash", "env", "MEMOS_EMBEDDER")

	vals = ee.show("--namespace", "project:flag")
	wantValue(t, vals, "namespace", "project:flag", "flag", "--namespace")

	// The commands use the effective values.
	if m := e.add("from the file's namespace"); m.Namespace != "project:file" {
		t.Errorf("add with the file's namespace wrote to %s", m.Namespace)
	}
	if m := ee.add("from the env's namespace"); m.Namespace != "project:env" {
		t.Errorf("add with MEMOS_NAMESPACE wrote to %s", m.Namespace)
	}
	if m := ee.add("from the flag's namespace", "--namespace", "project:flag"); m.Namespace != "project:flag" {
		t.Errorf("add with --namespace wrote to %s", m.Namespace)
	}
	st := e.stats()
	if st.Embedder.Dim != 64 || st.Store.Path != filepath.Join(e.home, "other.db") {
		t.Errorf("stats = %+v, want the file's embedder dim 64 and store other.db", st)
	}
	if _, err := os.Stat(filepath.Join(e.home, "other.db")); err != nil {
		t.Errorf("store not at the configured path: %v", err)
	}

	// --home beats MEMOS_HOME; without either the home is ~/.memos.
	other := filepath.Join(t.TempDir(), "elsewhere")
	wantValue(t, e.show("--home", other), "home", other, "flag", "--home")
	userHome := t.TempDir()
	noHome := &env{t: t, environ: []string{"HOME=" + userHome}}
	wantValue(t, noHome.show(), "home", filepath.Join(userHome, ".memos"), "default", "")
}

// TestConfigErrors checks that configuration mistakes name the key and
// where it was set, exit with 2 and create no store.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml string
		env        []string
		want       []string // in stderr
	}{
		{"unknown top-level key", "colour: red\n", nil, []string{"config.yaml", `"colour"`}},
		{"unknown backend key", "backends:\n  sqlite:\n    pth: x.db\n", nil, []string{"config.yaml", "backends.sqlite.pth", "path"}},
		{"unknown search key", "search:\n  candidate: 5\n", nil, []string{"config.yaml", "search.candidate"}},
		{"wrong type", "search:\n  candidates: many\n", nil, []string{"config.yaml", "search.candidates", "integer"}},
		{"bad duration", "search:\n  recency_half_life: fortnight\n", nil, []string{"search.recency_half_life", "duration"}},
		{"unknown embedder key", "embedder:\n  hash:\n    size: 8\n", nil, []string{"embedder.hash.size", "dim"}},
		{"embedder as a value", "embedder: hash\n", nil, []string{"config.yaml", "embedder.name"}},
		{"home in the file", "home: /elsewhere\n", nil, []string{"config.yaml", "home"}},
		{"invalid YAML", "search: [\n", nil, []string{"config.yaml", "YAML"}},
		{"unknown backend section", "backends:\n  mysql:\n    dsn: x\n", nil, []string{"config.yaml", "mysql", "sqlite"}},
		{"unknown vector key", "vector:\n  index: exact\n  size: 3\n", nil, []string{"vector.size"}},
		{"unknown vector index", "vector:\n  index: annoy\n", nil, []string{"annoy", "exact"}},
		{"unknown vector precision", "vector:\n  precision: float16\n", nil, []string{"config.yaml", "vector.precision", `"float16"`, "float32, int8"}},
		{"unknown env vector precision", "", []string{"MEMOS_VECTOR__PRECISION=int4"}, []string{"MEMOS_VECTOR__PRECISION", `"int4"`, "float32, int8"}},
		{"malformed namespace", "namespace: team\n", nil, []string{"config.yaml", "malformed namespace"}},
		{"namespace not a string", "namespace: 7\n", nil, []string{"config.yaml", "namespace"}},
		{"engine rejects a value", "search:\n  trust_weight: 2\n", nil, []string{"search.trust_weight"}},
		{"unknown env key", "", []string{"MEMOS_SEARCH__NOPE=1"}, []string{"env MEMOS_SEARCH__NOPE", "search.nope"}},
		{"bad env value", "", []string{"MEMOS_BACKENDS__SQLITE__BUSY_TIMEOUT=soon"}, []string{"MEMOS_BACKENDS__SQLITE__BUSY_TIMEOUT", "duration"}},
		{"unknown backend", "", []string{"MEMOS_BACKEND=nope"}, []string{"env MEMOS_BACKEND", `"nope"`, "sqlite"}},
		{"unknown embedder", "", []string{"MEMOS_EMBEDDER=nope"}, []string{"env MEMOS_EMBEDDER", `"nope"`, "hash"}},
		{"malformed env namespace", "", []string{"MEMOS_NAMESPACE=Project X"}, []string{"env MEMOS_NAMESPACE", "malformed namespace"}},
	}
	for _, c := range cases {
		e := newEnv(t).with(c.env...)
		if c.yaml != "" {
			e.writeConfig(c.yaml)
		}
		r := e.run("add", "something")
		if r.code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", c.name, r.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr %q does not mention %q", c.name, r.stderr, w)
			}
		}
		// (The engine validates search settings only once the backend is
		// open, so that case leaves an empty store behind.)
		if _, err := os.Stat(filepath.Join(e.home, "memory.db")); !os.IsNotExist(err) && c.name != "engine rejects a value" {
			t.Errorf("%s: a store was created despite the bad configuration", c.name)
		}
	}
}

func TestInit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var out struct {
		Home, Config string
		Created      bool
	}
	e.json(&out, "init")
	file := filepath.Join(e.home, "config.yaml")
	if !out.Created || out.Config != file || out.Home != e.home {
		t.Fatalf("init = %+v", out)
	}
	b, err := os.ReadFile(file)
	if err != nil || string(b) != config.Template() {
		t.Fatalf("config.yaml is not the template (%v)", err)
	}

	// Never overwrite.
	mine := string(b) + "namespace: project:mine\n"
	if err := os.WriteFile(file, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	e.json(&out, "init")
	if out.Created {
		t.Error("second init says it created the file")
	}
	if b, _ := os.ReadFile(file); string(b) != mine {
		t.Error("second init changed config.yaml")
	}
	if o := e.ok("init"); !strings.Contains(o, "unchanged") {
		t.Errorf("init on an existing file says %q", o)
	}
	wantValue(t, e.show(), "namespace", "project:mine", "file", file)

	// Every key the template shows is a valid key: uncommented, it loads.
	header, body, _ := strings.Cut(config.Template(), "\n\n")
	if !strings.Contains(header, "memos configuration") {
		t.Fatalf("template header: %q", header)
	}
	var lines []string
	for l := range strings.SplitSeq(body, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "# "))
	}
	u := newEnv(t)
	u.writeConfig(strings.Join(lines, "\n"))
	vals := u.show()
	wantValue(t, vals, "namespace", "default", "file", "")
	wantValue(t, vals, "backends.sqlite.path", filepath.Join(u.home, "memory.db"), "file", "")
	u.add("the uncommented template works")
}

func TestQuickstart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	home := filepath.Join(t.TempDir(), "tour")
	out := e.ok("quickstart", "--home", home)
	for _, want := range []string{"$ memos add", "$ memos search \"what does alice like\"", "--mode fts", "forgot memory",
		"deletion certificate", "not found", "memos init", "export MEMOS_HOME=" + home} {
		if !strings.Contains(out, want) {
			t.Errorf("quickstart output lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "memory.db")); err != nil {
		t.Errorf("the tour's store is not in --home: %v", err)
	}
	if _, err := os.Stat(e.home); !os.IsNotExist(err) {
		t.Errorf("quickstart --home touched MEMOS_HOME (%v)", err)
	}
	// The store is kept, so the commands it suggests work on it.
	tour := &env{t: t, home: home, environ: []string{"HOME=" + t.TempDir(), "MEMOS_HOME=" + home}}
	if st := tour.stats(); st.Memories != 5 || st.Edges != 1 {
		t.Errorf("tour store stats = %+v", st)
	}
	if r := e.run("quickstart", "--home", home); r.code != 2 || !strings.Contains(r.stderr, "empty store") {
		t.Errorf("quickstart on a used store: exit %d, stderr %q", r.code, r.stderr)
	}

	var js struct {
		Home  string `json:"home"`
		Steps []struct {
			Command string `json:"command"`
			Result  any    `json:"result"`
			Error   string `json:"error"`
		} `json:"steps"`
	}
	home2 := filepath.Join(t.TempDir(), "tour2")
	e.json(&js, "quickstart", "--home", home2)
	if len(js.Steps) < 15 || !strings.HasPrefix(js.Steps[0].Command, "memos add ") {
		t.Fatalf("quickstart --json: %d steps, first %+v", len(js.Steps), js.Steps)
	}
	for _, s := range js.Steps {
		if s.Result == nil && s.Error == "" {
			t.Errorf("step %q has neither result nor error", s.Command)
		}
	}
	// Each step runs its command's operation: the last history and edges
	// steps answer what those commands answer now, field for field.
	tour2 := &env{t: t, home: home2, environ: []string{"HOME=" + t.TempDir(), "MEMOS_HOME=" + home2}}
	for _, cmd := range []string{"history", "edges"} {
		var last any
		var argv []string
		for _, s := range js.Steps {
			if f := strings.Fields(s.Command); len(f) == 3 && f[1] == cmd {
				last, argv = s.Result, f[1:]
			}
		}
		var now any
		tour2.json(&now, argv...)
		// A version carries the memory's live access statistics, which
		// the tour's searches changed after its step (they are flushed
		// in the background): they are not the step's to answer.
		last, now = withoutAccess(last), withoutAccess(now)
		if last == nil || !reflect.DeepEqual(last, now) {
			t.Errorf("the tour's memos %s step answered\n%v\nthe command answers\n%v", strings.Join(argv, " "), last, now)
		}
	}
}

// withoutAccess returns v, decoded JSON, without the access statistics of
// the memories in it.
func withoutAccess(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k != "access_count" && k != "last_accessed_at" {
				out[k] = withoutAccess(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutAccess(x)
		}
		return out
	}
	return v
}

// TestQuickstartTemporaryStore runs the tour without --home: it must use a
// fresh temporary directory and leave MEMOS_HOME alone. (Not parallel: it
// points TMPDIR at the test's directory.)
func TestQuickstartTemporaryStore(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e := newEnv(t)
	e.ok("quickstart")
	dirs, _ := filepath.Glob(filepath.Join(tmp, "memos-quickstart-*", "memory.db"))
	if len(dirs) != 1 {
		t.Errorf("want one temporary tour store in TMPDIR, found %v", dirs)
	}
	if _, err := os.Stat(e.home); !os.IsNotExist(err) {
		t.Errorf("quickstart touched MEMOS_HOME (%v)", err)
	}
}

// TestConfigShowsEveryDefault: config show gives every setting memos knows
// the default of its value (not "(default)"), with its source; the template
// memos init writes shows the same defaults, and uncommenting them changes
// nothing but the source.
func TestConfigShowsEveryDefault(t *testing.T) {
	e := newEnv(t).with("MEMOS_SEARCH__CANDIDATES=12")
	vals := e.show("--backend", "sqlite")
	wantValue(t, vals, "search.recency_half_life", "720h", "default", "")
	wantValue(t, vals, "search.candidates", float64(12), "env", "MEMOS_SEARCH__CANDIDATES")
	wantValue(t, vals, "backend", "sqlite", "flag", "--backend")
	wantValue(t, vals, "server.timeout", "30s", "default", "")
	wantValue(t, vals, "governance.trusted_score", 0.9, "default", "")
	// The default modules tell their defaults (driver.Defaulter) too.
	wantValue(t, vals, "backends.sqlite.busy_timeout", "30s", "default", "")
	wantValue(t, vals, "backends.sqlite.keyword_prune_rows", float64(text.DefaultPruneRows), "default", "")
	wantValue(t, vals, "embedder.hash.dim", float64(256), "default", "")
	wantValue(t, vals, "extractor.rules.min_words", float64(4), "default", "")
	wantValue(t, vals, "summarizer.extractive.sentences", float64(6), "default", "")
	wantValue(t, vals, "summarizer.extractive.lambda", 0.7, "default", "")
	var unknown []string
	for k, v := range vals {
		if v.Value == nil {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		t.Errorf("config show has no value for %v", unknown)
	}
	if out := e.ok("config", "show"); !strings.Contains(out, "720h") || strings.Contains(out, "search.candidates                    (default)") {
		t.Errorf("config show:\n%s", out)
	}

	// Uncomment every default of the template: the values stay, from the file.
	e.ok("init")
	b, err := os.ReadFile(filepath.Join(e.home, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var yaml strings.Builder
	inSection := false
	for _, l := range strings.Split(string(b), "\n") {
		if m := strings.TrimPrefix(l, "# "); m != l && !strings.HasPrefix(m, " ") {
			name, _, _ := strings.Cut(m, ":")
			inSection = slices.Contains([]string{"search", "governance", "consolidate", "server"}, name)
			if inSection {
				yaml.WriteString(name + ":\n")
			}
			continue
		}
		if inSection && strings.HasPrefix(l, "#   ") {
			kv, _, _ := strings.Cut(strings.TrimPrefix(l, "# "), " # ")
			yaml.WriteString(kv + "\n")
		}
	}
	e.writeConfig(yaml.String())
	fromFile := &env{t: t, home: e.home, environ: []string{"HOME=" + t.TempDir(), "MEMOS_HOME=" + e.home}}
	again := fromFile.show()
	for k, v := range vals {
		if !strings.HasPrefix(k, "search.") && !strings.HasPrefix(k, "governance.") && !strings.HasPrefix(k, "consolidate.") && !strings.HasPrefix(k, "server.") || k == "search.candidates" {
			continue
		}
		w := again[k]
		got, want := fmt.Sprint(w.Value), fmt.Sprint(v.Value)
		if want == "[]" { // an empty list reads as not set: its default, either way
			continue
		}
		if got != want || w.Source != "file" {
			t.Errorf("%s: the template's default reads back as %v from %s, config show says %v", k, w.Value, w.Source, v.Value)
		}
	}
}
