package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestExportImport is the README's backup story: export a store, restore it
// into an empty home, and check a broken file restores nothing.
func TestExportImport(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	a := src.add("Alice prefers open-source tools", "--type", "preference", "--entities", "Alice")
	b := src.add("Alice's home lab runs Proxmox on three nodes", "--namespace", "project:lab")
	src.ok("update", strconv.FormatInt(b.ID, 10), "Alice's home lab runs Proxmox on four nodes", "--namespace", "project:lab")
	src.ok("link", strconv.FormatInt(a.ID, 10), strconv.FormatInt(b.ID, 10), "--namespace", "project:lab")
	file := filepath.Join(t.TempDir(), "backup.jsonl")
	src.ok("export", "-o", file)

	dst := newEnv(t)
	out := dst.ok("import", "jsonl", file)
	if !strings.Contains(out, "imported 2 memories (3 versions) and 1 edge") {
		t.Fatalf("import said: %s", out)
	}
	var s statsJSON
	dst.json(&s, "stats", "-n", "project:lab")
	if s.Memories != 2 || s.Versions != 3 || s.Edges != 1 {
		t.Fatalf("restored store: %+v", s)
	}
	if out := dst.ok("import", "jsonl", file); !strings.Contains(out, "imported 0 memories") {
		t.Fatalf("a second import said: %s", out)
	}
	// Standard output holds the export itself, nothing else.
	exported := dst.ok("export", "-n", "project:lab")
	if n := strings.Count(exported, "\n"); n != 4 { // header, 2 memories, 1 edge
		t.Fatalf("export to stdout has %d lines:\n%s", n, exported)
	}

	// A truncated file is refused with the reason, and stores nothing.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	trunc := filepath.Join(t.TempDir(), "truncated.jsonl")
	if err := os.WriteFile(trunc, []byte(strings.Join(lines[:2], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := newEnv(t)
	r := empty.run("import", "jsonl", trunc)
	if r.code != 2 || !strings.Contains(r.stderr, "truncated") {
		t.Fatalf("truncated import: exit %d, %s", r.code, r.stderr)
	}
	if s := empty.stats(); s.Memories != 0 {
		t.Fatalf("a refused import stored %d memories", s.Memories)
	}
	if r := empty.run("import", "csv", file); r.code != 2 || !strings.Contains(r.stderr, `unknown format "csv"`) {
		t.Fatalf("unknown format: exit %d, %s", r.code, r.stderr)
	}
	if r := empty.run("import", "memu", file, "--keep-embeddings"); r.code != 2 || !strings.Contains(r.stderr, "--model") {
		t.Fatalf("--keep-embeddings without --model: exit %d, %s", r.code, r.stderr)
	}
}
