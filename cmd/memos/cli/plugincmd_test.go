package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/core/provider/rerank/reranktest"
	"github.com/memos-go/memos/core/testbin"
	"github.com/memos-go/memos/plugins"
)

// buildPlugin builds the plugin in package dir pkg (relative to this
// package) into a temporary directory, with -race when the tests run with it
// so that the build reuses the test binary's packages.
func buildPlugin(t *testing.T, pkg string) string {
	t.Helper()
	return testbin.Build(t, pkg)
}

func TestPluginTestPasses(t *testing.T) {
	t.Parallel()
	bin := buildPlugin(t, "../../../examples/embedder-plugin")
	e := newEnv(t)

	n := len(embedtest.Cases()) + 1 // and HostSplitsBatches, skipped: no max batch
	out := e.ok("plugin", "test", bin)
	for _, s := range []string{"model trigrams-v1-256, 256 dimensions, no max batch, normalised",
		"pass    same text gives the same vector alone and in a batch",
		"skip    " + embedtest.HostSplitsBatches.Name,
		fmt.Sprintf("%d of %d cases passed, 0 failed, 1 skipped", n-1, n)} {
		if !strings.Contains(out, s) {
			t.Errorf("plugin test printed\n%s\nwant %q in it", out, s)
		}
	}

	sum, err := plugins.FileChecksum(bin)
	if err != nil {
		t.Fatal(err)
	}
	var rep pluginReport
	e.json(&rep, "plugin", "test", bin, "--checksum", sum)
	if rep.Model.ID != "trigrams-v1-256" || rep.Passed != n-1 || rep.Failed != 0 || rep.Skipped != 1 || len(rep.Cases) != n {
		t.Errorf("plugin test --json: %+v", rep)
	}
	for _, c := range rep.Cases {
		if c.Result == "fail" {
			t.Errorf("case %q failed: %s", c.Name, c.Message)
		}
	}

	bad := "sha256:" + strings.Repeat("0", 64)
	if r := e.run("plugin", "test", bin, "--checksum", bad); r.code != 2 || !strings.Contains(r.stderr, "checksum") {
		t.Errorf("plugin test with a wrong checksum: exit %d, %q; want 2 and a checksum error", r.code, r.stderr)
	}
	if r := e.run("plugin", "test", filepath.Join(t.TempDir(), "missing")); r.code != 2 {
		t.Errorf("plugin test of a missing binary: exit %d, %q; want 2", r.code, r.stderr)
	}
}

// TestBrokenPlugin runs a plugin that breaks the embedder contract.
func TestBrokenPlugin(t *testing.T) {
	t.Parallel()
	bin := buildPlugin(t, "./testdata/brokenplugin")

	t.Run("plugin test fails", func(t *testing.T) {
		e := newEnv(t)
		r := e.run("plugin", "test", bin, "--arg", "inconsistent")
		if r.code == 0 {
			t.Fatalf("plugin test of a broken plugin exited 0:\n%s", r.stdout)
		}
		for _, s := range []string{"fail    same text gives the same vector alone and in a batch", "pass    info is stable", "max batch 2"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("plugin test printed\n%s\nwant %q in it", r.stdout, s)
			}
		}
		if !strings.Contains(r.stderr, "conformance cases") {
			t.Errorf("stderr %q does not say that cases failed", r.stderr)
		}
		r = e.run("plugin", "test", bin, "--arg", "inconsistent", "--json")
		var rep pluginReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("--json output does not parse: %v\n%s", err, r.stdout)
		}
		if r.code == 0 || rep.Failed == 0 || rep.Passed == 0 {
			t.Errorf("plugin test --json of a broken plugin: exit %d, %+v", r.code, rep)
		}
	})

	// An interrupt while the plugin hangs in Embed (ignoring its context)
	// ends the command with exit code 130, and the plugin process with it.
	t.Run("interrupt ends the plugin", func(t *testing.T) {
		e := newEnv(t)
		pidfile := filepath.Join(t.TempDir(), "pid")
		if err := os.MkdirAll(e.home, 0o700); err != nil {
			t.Fatal(err)
		}
		cfg := fmt.Sprintf("embedder:\n  name: plugin\n  plugin:\n    path: %s\n    args: [hang, %q]\n", bin, pidfile)
		if err := os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var stderr bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, e.environ, []string{"add", "this never gets embedded"}, strings.NewReader(""), io.Discard, &stderr)
		}()
		var pid int
		for pid == 0 {
			select {
			case code := <-done:
				t.Fatalf("memos add ended (exit %d) before the plugin was called: %s", code, stderr.String())
			case <-time.After(20 * time.Millisecond):
			}
			if b, err := os.ReadFile(pidfile); err == nil && len(b) > 0 {
				if pid, err = strconv.Atoi(string(b)); err != nil {
					t.Fatal(err)
				}
			}
		}
		cancel()
		if code := <-done; code != 130 {
			t.Errorf("interrupted memos add: exit %d, want 130; stderr %q", code, stderr.String())
		}
		for deadline := time.Now().Add(30 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("plugin process %d still runs after the command ended", pid)
			}
		}
	})
}

// TestRerankerPlugin builds the example reranker plugin, checks it with
// plugin test, and searches a store configured with it: the plugin reorders
// the results and explain shows its scores.
func TestRerankerPlugin(t *testing.T) {
	t.Parallel()
	bin := buildPlugin(t, "../../../examples/reranker-plugin")
	e := newEnv(t)

	n := len(reranktest.Cases())
	out := e.ok("plugin", "test", bin)
	for _, s := range []string{"/reranker-plugin: reranker; started in",
		"pass    a text's rank does not depend on its position",
		fmt.Sprintf("%d of %d cases passed, 0 failed, 0 skipped", n, n)} {
		if !strings.Contains(out, s) {
			t.Errorf("plugin test printed\n%s\nwant %q in it", out, s)
		}
	}
	var rep pluginReport
	e.json(&rep, "plugin", "test", bin)
	if fmt.Sprint(rep.Kinds) != "[reranker]" || rep.Model != nil || rep.Passed != n || rep.Failed != 0 || rep.Cases[0].Kind != "reranker" {
		t.Errorf("plugin test --json: %+v", rep)
	}
	if r := e.run("plugin", "test", bin, "--kind", "embedder"); r.code != 2 || !strings.Contains(r.stderr, "not an embedder plugin") {
		t.Errorf("plugin test --kind embedder of a reranker: exit %d, %q; want 2 saying what it is", r.code, r.stderr)
	}

	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("reranker:\n  name: plugin\n  plugin:\n    path: %s\n", bin)
	if err := os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"apple apple apple pie recipe with cinnamon", "apple apple crumble for dessert",
		"the apple orchard visit in autumn", "apple stock price fell"} {
		e.add(s)
	}
	var res core.SearchResult
	e.json(&res, "search", "apple orchard autumn", "--no-expand")
	if len(res.Hits) == 0 || res.Hits[0].Memory.Content != "the apple orchard visit in autumn" {
		t.Fatalf("search with the reranker plugin: %+v; want the orchard note first", res.Hits)
	}
	var x api.ExplainOut
	e.json(&x, "explain", "apple orchard autumn")
	scored := 0
	for _, c := range x.Candidates {
		if c.RerankScore != nil {
			scored++
		}
	}
	if !strings.Contains(x.Rerank, "reranked the top") || scored == 0 {
		t.Fatalf("explain: rerank note %q, %d candidates with a reranker score", x.Rerank, scored)
	}
	if out := e.ok("explain", "apple orchard autumn"); !strings.Contains(out, "; rerank ") || !strings.Contains(out, "reranker: reranked the top") {
		t.Fatalf("explain does not show the reranker's scores:\n%s", out)
	}
}

// TestHungRerankerPlugin configures a reranker plugin that never answers:
// searches still succeed, in the fused order, and explain says why.
func TestHungRerankerPlugin(t *testing.T) {
	t.Parallel()
	bin := buildPlugin(t, "../../../plugins/testdata/testplugin")
	e := newEnv(t)
	notes := []string{"apple apple apple pie recipe with cinnamon", "the apple orchard visit in autumn"}
	for _, s := range notes {
		e.add(s)
	}
	var base core.SearchResult
	e.json(&base, "search", "apple orchard autumn", "--no-expand")
	cfg := fmt.Sprintf("reranker:\n  name: plugin\n  plugin:\n    path: %s\n    env: {MEMOS_TESTPLUGIN_KIND: reranker, MEMOS_TESTPLUGIN_MODE: hang}\nsearch:\n  rerank_timeout: 300ms\n", bin)
	if err := os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var res core.SearchResult
	e.json(&res, "search", "apple orchard autumn", "--no-expand")
	if fmt.Sprint(hitIDs(res)) != fmt.Sprint(hitIDs(base)) {
		t.Fatalf("with a hung reranker: %v, want the fused order %v", hitIDs(res), hitIDs(base))
	}
	if out := e.ok("explain", "apple orchard autumn"); !strings.Contains(out, "reranker failed, kept the fused order") || !strings.Contains(out, "rerank_timeout") {
		t.Fatalf("explain does not say the reranker failed:\n%s", out)
	}
}
