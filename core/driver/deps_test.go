package driver_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Implementers (backends, embedders, plugins, the conformance kits) link the
// contract, never the engine: a plugin author's binary must not carry the
// retrieval pipeline, the BPE tokenizer or the engine's regexp engine.
func TestImplementersDoNotLinkTheEngine(t *testing.T) {
	pkgs := []string{
		"./core/driver", "./plugins/...", "./backends/...", "./embedders/...",
		"./core/backendtest", "./core/embedtest", "./core/vector/...", "./examples/embedder-plugin",
	}
	forbidden := []string{
		"github.com/memos-go/memos/core", // the engine
		"github.com/tiktoken-go/tokenizer",
		"github.com/dlclark/regexp2",
	}
	// The upgrade fixtures' package, which drives the engine, is
	// core/upgradetest: no package under backends/ imports the engine.
	roots := goList(t, append([]string{"-f", "{{.ImportPath}}"}, pkgs...)...)
	out := goList(t, append([]string{"-deps", "-test=false", "-f", "{{.ImportPath}}"}, roots...)...)
	for _, p := range out {
		for _, f := range forbidden {
			if p == f || (f != "github.com/memos-go/memos/core" && strings.HasPrefix(p, f)) {
				t.Errorf("an implementer package depends on %s (check with: go list -deps %s)", p, strings.Join(pkgs, " "))
			}
		}
	}
}

// goList runs go list with args in the module root and returns its output's
// fields.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}
