package cli

import (
	"strconv"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
)

// `memos -n project:b edges <default id>` must not list the project:a memory
// linked to it.
func TestEdgesNamespaceIsolation(t *testing.T) {
	e := newEnv(t)
	shared := e.add("the deploy runbook lives in the wiki")
	secret := e.add("project a deploys with the kestrel pipeline", "-n", "project:a")
	e.ok("-n", "project:a", "link", strconv.FormatInt(secret.ID, 10), strconv.FormatInt(shared.ID, 10), "--type", "supports")

	var out struct {
		ID    int64       `json:"id"`
		Edges []core.Edge `json:"edges"`
	}
	e.json(&out, "-n", "project:b", "edges", strconv.FormatInt(shared.ID, 10))
	if len(out.Edges) != 0 {
		t.Fatalf("project:b sees edges of memory %d: %+v", shared.ID, out.Edges)
	}
	if r := e.run("-n", "project:b", "edges", strconv.FormatInt(shared.ID, 10)); r.code != 0 || strings.Contains(r.stdout, strconv.FormatInt(secret.ID, 10)) {
		t.Fatalf("memos -n project:b edges %d: exit %d, output %q names project:a memory %d", shared.ID, r.code, r.stdout, secret.ID)
	}
	e.json(&out, "-n", "project:a", "edges", strconv.FormatInt(shared.ID, 10))
	if len(out.Edges) != 1 || out.Edges[0].From != secret.ID {
		t.Fatalf("project:a edges of memory %d = %+v; want the edge from %d", shared.ID, out.Edges, secret.ID)
	}
}
