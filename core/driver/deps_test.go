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
	args := append([]string{"list", "-deps", "-test=false", "-f", "{{.ImportPath}}"}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if p == f || (f != "github.com/memos-go/memos/core" && strings.HasPrefix(p, f)) {
				t.Errorf("an implementer package depends on %s (check with: go list -deps %s)", p, strings.Join(pkgs, " "))
			}
		}
	}
}
