package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
)

// TestRenamedFlags: the flags that took their operation's field names still
// answer to their old names for a release, with a warning that names the
// new one; the old form of lesson outcome too.
func TestRenamedFlags(t *testing.T) {
	e := newEnv(t)
	m := e.add("Bob lives in Berlin", "--type", "fact")
	e.ok("learn", "check the crane before lifting")
	for _, c := range []struct {
		args []string
		warn string
	}{
		{[]string{"search", "berlin", "--pool", "memory", "--type", "fact", "--ref-time", "2024-01-01"}, "--pool is now --pools"},
		{[]string{"explain", "berlin", "--type", "fact"}, "--type is now --types"},
		{[]string{"pack", "berlin", "--pool", "all"}, "--pool is now --pools"},
		{[]string{"list", "--status", "all", "--type", "fact"}, "--status is now --statuses"},
		{[]string{"set-validity", "1", "--from", "2019-01-01", "--to", "2030-01-01"}, "--from is now --valid-from"},
		{[]string{"lesson", "outcome", "2", "success"}, `is now "lesson outcome <id> --success=true"`},
	} {
		r := e.run(c.args...)
		if r.code != 0 || !strings.Contains(r.stderr, c.warn) {
			t.Errorf("%v: exit %d, stderr %q, want a warning %q", c.args, r.code, r.stderr, c.warn)
		}
	}
	var got core.Memory
	e.json(&got, "get", "1")
	if got.ValidFrom.Year() != 2019 || got.ValidTo.Year() != 2030 || got.ID != m.ID {
		t.Errorf("set-validity --from/--to: valid %v – %v", got.ValidFrom, got.ValidTo)
	}
	var l core.Lesson
	e.json(&l, "lesson", "show", "2")
	if l.Successes != 1 {
		t.Errorf("lesson outcome 2 success: %d successes", l.Successes)
	}
	for _, c := range [][]string{{"lesson", "outcome", "2"}, {"lesson", "outcome", "2", "--success=false", "success"}, {"lesson", "outcome", "2", "maybe"}} {
		if r := e.run(c...); r.code != 2 {
			t.Errorf("%v: exit %d (%s)", c, r.code, r.stderr)
		}
	}
	e.ok("lesson", "outcome", "2", "--success=false")
	e.json(&l, "lesson", "show", "2")
	if l.Failures != 1 {
		t.Errorf("--success=false: %d failures", l.Failures)
	}
	// explain's durations are the configuration's strings.
	var x struct {
		Config map[string]json.RawMessage `json:"config"`
	}
	e.json(&x, "explain", "berlin")
	if s := string(x.Config["recency_half_life"]); s != `"720h"` {
		t.Errorf("explain --json: recency_half_life %s", s)
	}
}
