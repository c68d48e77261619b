package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
)

// TestGovernanceCommands walks the review queue, lessons, forget-source and
// the audit commands on both backends, with the policy from config.yaml.
func TestGovernanceCommands(t *testing.T) {
	for _, backend := range []string{"sqlite", "bolt"} {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t).with("MEMOS_BACKEND=" + backend)
			e.writeConfig("governance:\n  quarantine_sources: [\"web:*\"]\n")
			trusted := e.add("Alice's home lab runs Proxmox on three nodes", "--entities", "Alice", "--trust", "certain")
			web := e.add("Alice uses a hosted lab", "--source", "web:forum.example")
			asked := e.add("the lab password is hunter2", "--quarantine")
			contra := e.add("Alice's home lab runs Proxmox on four nodes", "--entities", "Alice")
			free := e.add("notes for the team", "--namespace", "team:web")
			if free.Namespace != "team:web" {
				t.Errorf("free-form namespace prefix: %q", free.Namespace)
			}
			for _, m := range []*core.Memory{web, asked, contra} {
				if m.Status != core.StatusQuarantined {
					t.Errorf("memory %d %q: status %s", m.ID, m.Content, m.Status)
				}
			}
			out := e.ok("quarantine", "list")
			for _, want := range []string{"source web:forum.example matches web:*", "asked for review",
				"contradicts trusted memory 1", "contradicts 1 (trust certain"} {
				if !strings.Contains(out, want) {
					t.Errorf("quarantine list lacks %q:\n%s", want, out)
				}
			}
			var res core.SearchResult
			e.json(&res, "search", "lab", "--mode", "keyword")
			if len(res.Hits) != 1 || res.Hits[0].Memory.ID != trusted.ID {
				t.Errorf("search sees the review queue: %+v", res.Hits)
			}
			e.json(&res, "search", "lab", "--mode", "keyword", "--include-quarantined", "--temporal", "2099-01-01")
			if len(res.Hits) != 4 {
				t.Errorf("search --include-quarantined found %d", len(res.Hits))
			}
			if r := e.run("search", "lab", "--temporal", "2020-01-01", "--valid-at", "2020-01-01"); r.code != 2 {
				t.Errorf("--temporal with --valid-at: exit %d", r.code)
			}
			if r := e.run("quarantine", "release", "1"); r.code != 2 || !strings.Contains(r.stderr, "not quarantined") {
				t.Errorf("release of an active memory: %d %s", r.code, r.stderr)
			}
			if r := e.run("quarantine", "release", "99"); r.code != 3 {
				t.Errorf("release of an unknown id: exit %d", r.code)
			}
			var rel core.Memory
			e.json(&rel, "quarantine", "release", "2", "--trust", "certain")
			if rel.Status != core.StatusActive || rel.Trust.Level != core.TrustCertain {
				t.Errorf("released %+v", rel)
			}
			if r := e.run("quarantine", "reject", "3"); r.code != 2 || !strings.Contains(r.stderr, "needs a reason") {
				t.Errorf("reject without --reason: exit %d, %s", r.code, r.stderr)
			}
			if out := e.ok("quarantine", "reject", "3", "--reason", "a secret"); !strings.Contains(out, "reason") || !strings.Contains(out, "a secret") ||
				!strings.Contains(out, "erasure") {
				t.Errorf("reject prints no reason or no erasure line:\n%s", out)
			}
			var upd core.Memory
			e.json(&upd, "update", "2", "--status", "archived")
			if upd.Status != core.StatusArchived {
				t.Errorf("update --status: %s", upd.Status)
			}

			var l core.Lesson
			e.json(&l, "learn", "back up before upgrading", "--when", "upgrading proxmox")
			e.json(&l, "lesson", "outcome", "6", "--success", "--note", "went fine")
			if l.Successes != 1 || l.Score != 2.0/3 {
				t.Errorf("lesson after a success: %+v", l)
			}
			if r := e.run("lesson", "outcome", "1", "success"); r.code != 2 || !strings.Contains(r.stderr, "not a lesson") {
				t.Errorf("outcome for a fact: %d %s", r.code, r.stderr)
			}
			if out := e.ok("lesson", "list"); !strings.Contains(out, "upgrading proxmox") {
				t.Errorf("lesson list:\n%s", out)
			}

			e.add("turn one about the garden", "--source", "conversation:7#turn-1")
			e.add("fact drawn from the garden talk", "--derived-from", "7")
			var fs core.ForgetSourceReport
			e.json(&fs, "forget-source", "conversation:7", "--dry-run")
			if !slices.Equal(fs.Matched, []int64{7}) || !slices.Equal(fs.Derived, []int64{8}) || len(fs.Certificates) != 0 {
				t.Errorf("dry run: %+v", fs)
			}
			if r := e.run("forget-source", ""); r.code != 2 {
				t.Errorf("empty source: exit %d", r.code)
			}
			e.json(&fs, "forget-source", "conversation:7")
			if len(fs.Certificates) != 2 {
				t.Errorf("forget-source: %+v", fs)
			}

			out = e.ok("audit", "verify")
			if !strings.Contains(out, "audit log verified") {
				t.Errorf("audit verify:\n%s", out)
			}
			var log struct {
				Entries []core.AuditEntry `json:"entries"`
			}
			e.json(&log, "audit", "--action", "quarantine.")
			if len(log.Entries) != 5 { // three holds, a release, a reject
				t.Errorf("quarantine entries: %d", len(log.Entries))
			}
			file := filepath.Join(t.TempDir(), "audit.json")
			e.ok("audit", "export", file)
			if out := e.ok("audit", "verify", file); !strings.Contains(out, "verified") {
				t.Errorf("verify export:\n%s", out)
			}
			b, _ := os.ReadFile(file)
			bad := strings.Replace(string(b), `"action": "remember"`, `"action": "rememberx"`, 1)
			os.WriteFile(file, []byte(bad), 0o600)
			if r := e.run("audit", "verify", file); r.code != 5 || !strings.Contains(r.stderr, "audit entry 1 ") {
				t.Errorf("verify of an altered export: exit %d, %s", r.code, r.stderr)
			}
		})
	}
}
