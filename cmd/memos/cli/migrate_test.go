package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/core"
)

func TestMigrateToBolt(t *testing.T) {
	e := newEnv(t)
	a := e.add("Alice prefers open-source tools", "--type", "preference")
	b := e.add("Alice's home lab runs Proxmox on three nodes")
	e.ok("update", "2", "Alice's home lab runs Proxmox on four nodes")
	e.ok("link", "1", "2", "--type", "supports")
	e.ok("forget", "2", "--reason", "test")

	var rep core.MigrateReport
	e.json(&rep, "migrate", "--to", "bolt")
	// Five audit entries: two remembers, the update, the link, the forget.
	if rep.Memories != 1 || rep.Edges != 0 || rep.AuditEntries != 5 || rep.MaxID != b.ID || !rep.Verified {
		t.Fatalf("report = %+v", rep)
	}
	onBolt := e.with("MEMOS_BACKEND=bolt")
	if out := onBolt.ok("get", "1"); !strings.Contains(out, a.Content) {
		t.Fatalf("get 1 on the copy:\n%s", out)
	}
	if m := onBolt.add("new on bolt"); m.ID <= b.ID {
		t.Fatalf("the copy reused forgotten id %d", m.ID)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"migrate", "--to", "bolt"}, "not empty"},
		{[]string{"migrate", "--to", "sqlite"}, "already uses"},
		{[]string{"migrate", "--to", "nope"}, "no backend named"},
		{[]string{"migrate"}, "--to names"},
	} {
		r := e.run(c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("memos %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), r.code, r.stderr, c.msg)
		}
	}
}

// A bolt store that a command opened once (it holds the engine's settings,
// no memory) is a new store: migrate copies into it, with or without
// --force.
func TestMigrateIntoTargetOpenedOnceCLI(t *testing.T) {
	for _, args := range [][]string{{"migrate", "--to", "bolt"}, {"migrate", "--to", "bolt", "--force"}} {
		e := newEnv(t)
		e.add("Alice prefers open-source tools")
		// memos mcp opens (and so creates) the store its client may write
		// to; with no input it ends at once. A read such as stats no longer
		// creates one.
		if r := e.with("MEMOS_BACKEND=bolt").runStdin("", "mcp"); r.code != 0 {
			t.Fatalf("memos mcp on a new bolt store: exit %d, stderr %s", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(e.home, "memory.bolt")); err != nil {
			t.Fatalf("memos mcp left no bolt store: %v", err)
		}
		var rep core.MigrateReport
		e.json(&rep, args...)
		if rep.Memories != 1 || !rep.Verified {
			t.Fatalf("memos %s into a target opened once: report %+v", strings.Join(args, " "), rep)
		}
	}
}
