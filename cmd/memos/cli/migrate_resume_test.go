package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// interruptMigrate copies the sqlite store at src into a bolt store at dst
// and stops the copy after its first batch is committed, as a kill would.
func interruptMigrate(t *testing.T, src, dst string) {
	t.Helper()
	ctx := context.Background()
	sb, err := sqlite.Open(ctx, sqlite.Config{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	tb, err := bolt.Open(ctx, bolt.Config{Path: dst})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	cctx, cancel := context.WithCancel(ctx)
	if _, err := core.Migrate(cctx, sb, tb, func(int, int) { cancel() }); err == nil {
		t.Fatal("migrate canceled after its first batch succeeded")
	}
}

// An interrupted `memos migrate --to bolt` leaves a target every command
// refuses, naming the fix; migrate again resumes it, --force starts it over,
// and --force never deletes a finished store.
func TestMigrateInterruptedCLI(t *testing.T) {
	e := newEnv(t)
	e.add("the first note")
	ctx := context.Background()
	src := filepath.Join(e.home, "memory.db")
	b, err := sqlite.Open(ctx, sqlite.Config{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	var ins []core.Input
	for i := range 599 {
		ins = append(ins, core.Input{Content: fmt.Sprintf("note %d about the move to bolt", i)})
	}
	if _, err := eng.RememberBatch(ctx, ins); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	target := filepath.Join(e.home, "copy.bolt")
	interruptMigrate(t, src, target)
	withPath := e.with("MEMOS_BACKENDS__BOLT__PATH=" + target)
	onBolt := withPath.with("MEMOS_BACKEND=bolt")
	for _, args := range [][]string{{"stats"}, {"search", "note"}} {
		r := onBolt.run(args...)
		if r.code != 2 || !strings.Contains(r.stderr, "unfinished copy") || !strings.Contains(r.stderr, "memos migrate") {
			t.Fatalf("memos %s on the partial copy: exit %d, stderr %q; want exit 2 naming the unfinished migrate", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	var rep core.MigrateReport
	withPath.json(&rep, "migrate", "--to", "bolt")
	if !rep.Verified || rep.Memories != 600 || rep.Resumed != 256 {
		t.Fatalf("rerun report = %+v; want 600 memories, 256 resumed, verified", rep)
	}
	var st struct {
		Memories int `json:"memories"`
	}
	onBolt.json(&st, "stats")
	if st.Memories != 600 {
		t.Fatalf("the finished copy holds %d memories, want 600", st.Memories)
	}
	// --force never deletes a finished store.
	if r := withPath.run("migrate", "--to", "bolt", "--force"); r.code != 2 || !strings.Contains(r.stderr, "not empty") {
		t.Fatalf("migrate --force onto a finished copy: exit %d, stderr %q", r.code, r.stderr)
	}
	onBolt.json(&st, "stats")
	if st.Memories != 600 {
		t.Fatalf("after a refused --force the copy holds %d memories, want 600", st.Memories)
	}

	// --force starts an interrupted copy over.
	second := filepath.Join(e.home, "second.bolt")
	interruptMigrate(t, src, second)
	r := e.with("MEMOS_BACKENDS__BOLT__PATH="+second).run("migrate", "--to", "bolt", "--force", "--json")
	if r.code != 0 || !strings.Contains(r.stderr, "removed the unfinished bolt store") || !strings.Contains(r.stdout, `"verified": true`) || strings.Contains(r.stdout, "resumed") {
		t.Fatalf("migrate --force over an interrupted copy: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}
