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
	// Again: nothing is added, and the report says so, edges included.
	if out := dst.ok("import", "jsonl", file, "--dry-run"); !strings.Contains(out, "would import 0 memories (0 versions) and 0 edges; 2 memories and 1 edge were already in the store") {
		t.Fatalf("a second import's dry run said: %s", out)
	}
	if out := dst.ok("import", "jsonl", file); !strings.Contains(out, "imported 0 memories (0 versions) and 0 edges; 2 memories and 1 edge were already in the store") {
		t.Fatalf("a second import said: %s", out)
	}
	dst.json(&s, "stats", "-n", "project:lab")
	if s.Memories != 2 || s.Versions != 3 || s.Edges != 1 {
		t.Fatalf("store after a second import: %+v", s)
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

// TestCapture is the README's capture line: a conversation in, facts out,
// citing their turns; the same conversation again stores nothing.
func TestCaptureCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	conv := `{"speaker":"Caroline","text":"I went to the LGBTQ support group yesterday.","time":"2023-05-08"}
{"speaker":"Melanie","text":"I love painting landscapes with my kids.","time":"2023-05-08 13:56:00"}
`
	r := e.runStdin(conv, "capture", "--session", "chat-42")
	if r.code != 0 || !strings.Contains(r.stdout, "captured 2 turns of session chat-42 (2 new) and extracted 2 memories") {
		t.Fatalf("capture: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.runStdin(conv, "capture", "--session", "chat-42"); r.code != 0 || !strings.Contains(r.stdout, "(0 new) and extracted 0 memories") {
		t.Fatalf("second capture: %s%s", r.stdout, r.stderr)
	}
	out := e.ok("search", "what does melanie love", "--pools", "memory")
	if !strings.Contains(out, "Melanie loves painting landscapes") {
		t.Fatalf("search after capture:\n%s", out)
	}
	// Plain text works too; a missing session or a bad line is refused.
	if r := e.runStdin("Bob: I work at Acme as a welder.\n", "capture", "--session", "s2"); r.code != 0 || !strings.Contains(r.stdout, "extracted 1 memory") {
		t.Fatalf("plain text capture: %s%s", r.stdout, r.stderr)
	}
	if r := e.runStdin(conv, "capture"); r.code != 2 || !strings.Contains(r.stderr, "needs a session name") {
		t.Fatalf("capture without a session: exit %d %s", r.code, r.stderr)
	}
	if r := e.runStdin(conv+"{\"speaker\":\"A\"}\n", "capture", "--session", "s3"); r.code != 2 || !strings.Contains(r.stderr, "line 3") {
		t.Fatalf("capture of a bad line: exit %d %s", r.code, r.stderr)
	}
}
