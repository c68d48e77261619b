package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goish matches what user-facing text must not show: Go packages and
// functions (strconv.ParseInt), exported Go names in parentheses and
// camel-case field names (AsOf, MMRLambda).
var goish = regexp.MustCompile(`\b(strconv|time|json|fmt|jsonrpc2?)\.[A-Za-z]|\b[A-Z][a-z]+[A-Z][A-Za-z]*\b|\(or [A-Z]`)

// TestMessagesSpeakToUsers: each message names flags and settings as the
// user types them and says what is wrong, without Go identifiers or words
// that only make sense inside the project.
func TestMessagesSpeakToUsers(t *testing.T) {
	e := newEnv(t)
	e.add("the launch plan for project x", "-n", "project:x")
	plugin := filepath.Join(t.TempDir(), "my-embedder")
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
		not  string
	}{
		{[]string{"add", "x", "--significance", "high"}, 2, `--significance "high" is not a whole number`, "strconv"},
		{[]string{"search", "x", "--limit", "ten"}, 2, `--limit "ten" is not a whole number`, "strconv"},
		{[]string{"forget", "1", "--wait=soon"}, 2, `--wait "soon" is not a duration`, "time:"},
		{[]string{"pack"}, 2, "needs a query, or bootstrap", "Bootstrap"},
		{[]string{"pack", "--bootstrap", "--as-of", "2024-01-01"}, 2, "takes no as-of time", "AsOf"},
		{[]string{"get", "1"}, 3, "not found in namespace default", "default or default"},
		{[]string{"get", "1", "-n", "project:y"}, 3, "not found in namespace project:y or default", ""},
		{[]string{"plugin", "test", plugin, "--checksum", "sha256:0000"}, 2, "64 hex digits", "--kind"},
	} {
		r := e.run(c.args...)
		msg := r.stderr
		if r.code != c.code || !strings.Contains(msg, c.want) || c.not != "" && strings.Contains(msg, c.not) || goish.MatchString(msg) {
			t.Errorf("memos %s: exit %d, %q; want %d, saying %q without %q or Go names", strings.Join(c.args, " "), r.code, msg, c.code, c.want, c.not)
		}
	}
	for _, cmd := range []string{"search", "pack", "explain"} {
		if out := e.ok(cmd, "--help"); strings.Contains(out, "seed") {
			t.Errorf("memos %s --help speaks of the seed:\n%s", cmd, out)
		}
	}
}
