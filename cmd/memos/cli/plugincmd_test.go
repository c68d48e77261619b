package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/plugins"
)

// buildPlugin builds the plugin in package dir pkg (relative to this
// package) into a temporary directory, with -race when the tests run with it
// so that the build reuses the test binary's packages.
func buildPlugin(t *testing.T, pkg string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build a plugin")
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.Command(gobin, append(args, pkg)...).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
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
