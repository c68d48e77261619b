package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
)

// TestListCommand checks memos list: pages follow the printed cursor, the
// flags filter as the list operation's fields do, quarantined memories
// show only with --status, and mistakes exit 2 with a message.
func TestListCommand(t *testing.T) {
	e := newEnv(t)
	var added []int64
	for i := range 5 {
		m := e.add(fmt.Sprintf("Alice note number %d", i), "--significance", fmt.Sprint(2+i), "--source", fmt.Sprintf("conversation:%d", i%2), "--entities", "Alice")
		added = append(added, m.ID)
	}
	held := e.add("a held note", "--quarantine")
	other := e.add("a note of project b", "--namespace", "project:b")

	var ids []int64
	args := []string{"list", "--limit", "2"}
	for pages := 0; ; pages++ {
		var page core.ListResult
		e.json(&page, args...)
		if pages > 5 || len(page.Memories) > 2 {
			t.Fatalf("page %d: %+v", pages, page)
		}
		for _, m := range page.Memories {
			ids = append(ids, m.ID)
		}
		if page.NextCursor == "" {
			break
		}
		args = []string{"list", "--limit", "2", "--cursor", page.NextCursor}
	}
	want := slices.Clone(added)
	slices.Reverse(want)
	if !slices.Equal(ids, want) {
		t.Errorf("list by 2: %v, want %v", ids, want)
	}

	var page core.ListResult
	e.json(&page, "list", "--sort", "significance", "--source-prefix", "conversation:0", "--entity", "alice", "--created-after", "2000-01-01", "--types", "fact")
	if got := []int64{}; len(page.Memories) != 3 || !slices.Equal(append(got, page.Memories[0].ID, page.Memories[1].ID, page.Memories[2].ID), []int64{added[4], added[2], added[0]}) {
		t.Errorf("filtered list: %+v", page.Memories)
	}
	e.json(&page, "list", "--statuses", "quarantined")
	if len(page.Memories) != 1 || page.Memories[0].ID != held.ID {
		t.Errorf("list --status quarantined: %+v", page.Memories)
	}
	e.json(&page, "list", "--statuses", "all", "--namespace", "project:b", "--namespace-only")
	if len(page.Memories) != 1 || page.Memories[0].ID != other.ID {
		t.Errorf("list --namespace project:b --namespace-only: %+v", page.Memories)
	}

	out := e.ok("list", "--limit", "2")
	if !strings.Contains(out, "Alice note number 4") || !strings.Contains(out, "more: repeat the command with --cursor ") {
		t.Errorf("list's text output:\n%s", out)
	}
	if out := e.ok("list", "--entity", "nobody"); !strings.Contains(out, "no memories match (listed namespace default)") {
		t.Errorf("an empty list:\n%s", out)
	}
	for _, bad := range [][]string{{"list", "--cursor", "nonsense"}, {"list", "--sort", "oldest"}, {"list", "--created-after", "yesterday"},
		{"list", "--statuses", "gone"}, {"list", "--limit", "0"}, {"list", "extra"}} {
		if r := e.run(bad...); r.code != 2 || r.stderr == "" {
			t.Errorf("memos %s: exit %d, stderr %q; want 2 and a message", strings.Join(bad, " "), r.code, r.stderr)
		}
	}
}

// TestTraceCommand checks memos trace over a chain of derived memories and
// a supersede, in JSON and as text.
func TestTraceCommand(t *testing.T) {
	e := newEnv(t)
	turn := e.add("Alice: I moved to Porto", "--type", "turn", "--source", "conversation:1#turn-1")
	fact := e.add("Alice lives in Porto", "--derived-from", fmt.Sprint(turn.ID), "--source", "conversation:1")
	var tr core.TraceResult
	e.json(&tr, "trace", fmt.Sprint(fact.ID))
	if tr.Memory.ID != fact.ID || len(tr.DerivedFrom) != 1 || tr.DerivedFrom[0].ID != turn.ID || tr.DerivedFrom[0].Source != "conversation:1#turn-1" {
		t.Errorf("trace --json: %+v", tr)
	}
	out := e.ok("trace", fmt.Sprint(turn.ID))
	for _, want := range []string{"source: conversation:1#turn-1", "derived from: nothing", "derived:", fmt.Sprintf("derived_from %d", turn.ID), "Alice lives in Porto"} {
		if !strings.Contains(out, want) {
			t.Errorf("trace's text output lacks %q:\n%s", want, out)
		}
	}
	if r := e.run("trace", "999"); r.code == 0 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("trace of an unknown id: exit %d, %s", r.code, r.stderr)
	}
	if r := e.run("trace", fmt.Sprint(fact.ID), "--max-depth", "0"); r.code != 2 {
		t.Errorf("trace --max-depth 0: exit %d, %s", r.code, r.stderr)
	}
}
