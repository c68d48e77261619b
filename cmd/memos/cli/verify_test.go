package cli

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditVerifyListsEveryProblem: a trust score of -0 given on the command
// line verifies; then, with one memory's row deleted and another's content
// changed with SQL, audit verify exits 5 and names both, in text and JSON.
func TestAuditVerifyListsEveryProblem(t *testing.T) {
	e := newEnv(t)
	a := e.add("the boiler was serviced in May", "--trust-score=-0")
	b := e.add("the alarm code is written in the hall")
	c := e.add("the shed is painted green")
	if out := e.ok("audit", "verify"); !strings.Contains(out, "audit log verified") {
		t.Fatalf("audit verify:\n%s", out)
	}
	db, err := sql.Open("sqlite", filepath.Join(e.home, "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		fmt.Sprintf(`DELETE FROM memories WHERE id = %d`, b.ID),
		fmt.Sprintf(`UPDATE memories SET content = 'the shed is painted red' WHERE id = %d`, c.ID),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	r := e.run("audit", "verify")
	missing := fmt.Sprintf("memory %d (namespace default) is recorded by audit entry", b.ID)
	altered := fmt.Sprintf("binds memory %d version 1", c.ID)
	if r.code != 5 || !strings.Contains(r.stderr, missing) || !strings.Contains(r.stderr, altered) ||
		strings.Contains(r.stderr, fmt.Sprintf("memory %d ", a.ID)) {
		t.Errorf("audit verify: exit %d\n%s", r.code, r.stderr)
	}
	r = e.run("audit", "verify", "--json")
	var out struct {
		Error struct{ Kind, Message string }
	}
	if err := json.Unmarshal([]byte(r.stderr), &out); err != nil || r.code != 5 || out.Error.Kind != "conflict" ||
		!strings.Contains(out.Error.Message, missing) || !strings.Contains(out.Error.Message, altered) {
		t.Errorf("audit verify --json: exit %d, %v\n%s", r.code, err, r.stderr)
	}
}
