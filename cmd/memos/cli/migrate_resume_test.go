package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
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
	eng := openSQLite(t, src)
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

// TestBinaryMigrateKilled kills a real `memos migrate --to bolt` process
// once it has begun writing the target: the partial target must be refused
// by every command, and running migrate again must finish and verify it.
func TestBinaryMigrateKilled(t *testing.T) {
	t.Parallel()
	bin := buildMemos(t)
	home := filepath.Join(t.TempDir(), "home")
	target := filepath.Join(t.TempDir(), "copy.bolt")
	environ := []string{"HOME=" + t.TempDir(), "MEMOS_HOME=" + home, "MEMOS_BACKENDS__BOLT__PATH=" + target, "GORACE=atexit_sleep_ms=0"}
	memos := func(args ...string) (stdout, stderr string, code int) {
		cmd := exec.Command(bin, args...)
		cmd.Env = environ
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), errb.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("run memos: %v", err)
		}
		return out.String(), errb.String(), 0
	}
	if _, stderr, code := memos("add", "the first note"); code != 0 {
		t.Fatalf("memos add: exit %d: %s", code, stderr)
	}
	const n = 4000
	ctx := context.Background()
	eng := openSQLite(t, filepath.Join(home, "memory.db"))
	var ins []core.Input
	for i := range n - 1 {
		ins = append(ins, core.Input{Content: fmt.Sprintf("note %d of the store that moves to bolt", i)})
	}
	if _, err := eng.RememberBatch(ctx, ins); err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "migrate", "--to", "bolt")
	cmd.Env = environ
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Once the keyword index holds documents, the unfinished mark (written
	// before the first memory) is committed and the copy is under way.
	index := filepath.Join(target, bolt.IndexDir)
	indexBytes := func() int64 {
		var n int64
		filepath.WalkDir(index, func(_ string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
		return n
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if indexBytes() > 256<<10 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("memos migrate ended (%v) before it could be killed mid-way; stderr %s", err, errb.String())
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the target did not grow within 2 minutes")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil {
		t.Fatalf("memos migrate finished before the kill; stderr %s", errb.String())
	}

	_, stderr, code := memos("--backend", "bolt", "stats")
	if code != 2 || !strings.Contains(stderr, "unfinished copy") {
		t.Fatalf("memos stats on the killed copy: exit %d, stderr %q; want exit 2 naming the unfinished copy", code, stderr)
	}
	out, stderr, code := memos("migrate", "--to", "bolt", "--json")
	var rep core.MigrateReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !rep.Verified || rep.Memories != n {
		t.Fatalf("rerun of memos migrate: exit %d, report %s, stderr %s", code, out, stderr)
	}
	t.Logf("the killed run had copied %d of %d memories", rep.Resumed, n)
	out, stderr, code = memos("--backend", "bolt", "stats", "--json")
	var st statsJSON
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Memories != n {
		t.Fatalf("stats on the finished copy: exit %d, %s %s", code, out, stderr)
	}
}
