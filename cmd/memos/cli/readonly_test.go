package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadsNeedAStore: a command that only reads, or a dry run, on a home
// that holds no store fails with exit 3 and a message naming the store's path
// and how to create one, and creates nothing: a mistyped MEMOS_HOME does not
// pass for an empty memory. A write creates the store; reads then work.
func TestReadsNeedAStore(t *testing.T) {
	e := newEnv(t)
	jsonl := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"format":"memos-export","version":1,"memories":0,"edges":0}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reads := [][]string{
		{"stats"}, {"search", "alice"}, {"get", "1"}, {"history", "1"}, {"edges", "1"},
		{"explain", "alice"}, {"pack", "alice"}, {"pack", "--bootstrap"},
		{"audit"}, {"audit", "verify"}, {"audit", "export", filepath.Join(t.TempDir(), "audit.json")},
		{"quarantine", "list"}, {"lesson", "list"}, {"lesson", "show", "1"}, {"export"},
		{"consolidate", "--dry-run"}, {"dream", "--dry-run"},
		{"forget-source", "conversation:1", "--dry-run"}, {"import", "jsonl", jsonl, "--dry-run"},
	}
	store := filepath.Join(e.home, "memory.db")
	for _, args := range reads {
		r := e.run(args...)
		if r.code != 3 || !strings.Contains(r.stderr, store) || !strings.Contains(r.stderr, "memos add") {
			t.Errorf("memos %s on a missing store: exit %d, stderr %q; want 3 and a message naming %s", strings.Join(args, " "), r.code, r.stderr, store)
		}
		if _, err := os.Stat(e.home); !os.IsNotExist(err) {
			t.Fatalf("memos %s created %s", strings.Join(args, " "), e.home)
		}
	}
	if r := e.run("stats", "--json"); !strings.Contains(r.stderr, `"kind":"not_found"`) || !strings.Contains(r.stderr, "MEMOS_HOME") {
		t.Errorf("stats --json on a missing store: %s", r.stderr)
	}

	e.add("Alice prefers tea")
	for _, args := range reads {
		if args[0] == "lesson" && args[1] == "show" {
			continue // memory 1 is no lesson
		}
		e.ok(args...)
	}
}
