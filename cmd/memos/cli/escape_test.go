package cli

import (
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
)

// Terminal escape sequences in memory text are shown escaped in human output
// (get, search, pack), so a stored memory cannot drive the user's terminal,
// and kept exactly in --json.
func TestHumanOutputEscapesControls(t *testing.T) {
	e := newEnv(t)
	content := "deploy key rotated \x1b[2J\x1b]0;pwned\x07 by ops\rfake line \u009b31m red \u202eevil"
	m := e.add(content)
	id := "1"
	if m.Content != content {
		t.Fatalf("stored content %q, want %q", m.Content, content)
	}
	raw := []string{"\x1b", "\x07", "\r", "\u009b", "\u202e"}
	for _, args := range [][]string{{"get", id}, {"search", "deploy key rotated"}, {"pack", "deploy key rotated"}} {
		out := e.ok(args...)
		for _, c := range raw {
			if strings.Contains(out, c) {
				t.Errorf("memos %s prints the control character %q raw:\n%q", strings.Join(args, " "), c, out)
			}
		}
		for _, want := range []string{`\x1b[2J`, `\x07`, `\x9b31m`, `\u202e`} { // a line break may become a space
			if !strings.Contains(out, want) {
				t.Errorf("memos %s: output lacks the escaped form %s:\n%s", strings.Join(args, " "), want, out)
			}
		}
	}
	var got core.Memory
	e.json(&got, "get", id)
	if got.Content != content {
		t.Fatalf("get --json content = %q, want the exact text %q", got.Content, content)
	}
}
