package core_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// A migration interrupted after its first batch leaves a target that Open
// refuses with a message naming the fix; running Migrate again resumes and
// verifies the whole copy, after which the target opens.
func TestMigrateInterruptedResumes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openAt(t, filepath.Join(dir, "memory.db"), core.Options{})
	defer src.Close()
	var ins []core.Input
	for i := range 600 { // more than two batches of 256
		ins = append(ins, core.Input{Content: fmt.Sprintf("note %d about the migration", i)})
	}
	if _, err := src.RememberBatch(ctx, ins); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Link(ctx, core.Edge{From: 1, To: 600, Type: core.EdgeSupports}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Forget(ctx, 2, "test"); err != nil {
		t.Fatal(err)
	}
	dstPath := filepath.Join(dir, "memory.bolt")
	dst, err := bolt.Open(ctx, bolt.Config{Path: dstPath})
	if err != nil {
		t.Fatal(err)
	}
	// The failure is injected at a precise point: the context ends once
	// the first batch is committed, as when the process is killed then.
	cctx, cancel := context.WithCancel(ctx)
	_, err = core.Migrate(cctx, src.Backend(), dst, func(done, total int) { cancel() })
	if err == nil {
		t.Fatal("migrate with a context canceled after the first batch succeeded")
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = core.Open(ctx, core.Options{Backend: dst, Embedder: emb})
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "unfinished copy") || !strings.Contains(err.Error(), "memos migrate") {
		t.Fatalf("open of the partial target: %v; want ErrInvalid naming the unfinished migrate", err)
	}
	if ok, err := core.UnfinishedMigration(ctx, dst); err != nil || !ok {
		t.Fatalf("UnfinishedMigration = %v, %v", ok, err)
	}

	rep, err := core.Migrate(ctx, src.Backend(), dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Verified || rep.Memories != 599 || rep.Resumed != 256 || rep.Edges != 1 || rep.AuditEntries != 3 {
		t.Fatalf("resumed migration report = %+v; want 599 memories, 256 resumed, 1 edge, 3 audit entries (the batch, the link, the forget), verified", rep)
	}
	if ok, err := core.UnfinishedMigration(ctx, dst); err != nil || ok {
		t.Fatalf("after the resumed copy UnfinishedMigration = %v, %v", ok, err)
	}
	e, err := core.Open(ctx, core.Options{Backend: dst, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st, err := e.Stats(ctx)
	if err != nil || st.Memories != 599 {
		t.Fatalf("the finished copy holds %+v, %v; want 599 memories", st, err)
	}
	if rep, err := e.VerifyAudit(ctx); err != nil || rep.Unbound != 0 {
		t.Fatalf("audit chain of the copy: %+v, %v", rep, err)
	}
	// A finished copy is not resumed into: it is a full store.
	if _, err := core.Migrate(ctx, src.Backend(), dst, nil); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("migrate into the finished copy: %v", err)
	}
}

// A copy interrupted after everything was written but before it was
// verified resumes with the verification alone: edges and the audit log are
// not written twice. A source that changed since refuses to resume.
func TestMigrateResumeVerifyOnlyAndChangedSource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openAt(t, filepath.Join(dir, "memory.db"), core.Options{})
	defer src.Close()
	a := remember(t, src, core.Input{Content: "alpha"})
	b := remember(t, src, core.Input{Content: "beta"})
	if _, err := src.Link(ctx, core.Edge{From: a.ID, To: b.ID, Type: core.EdgeSupports}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Forget(ctx, b.ID, "test"); err != nil {
		t.Fatal(err)
	}
	remember(t, src, core.Input{Content: "gamma"})

	dst, err := bolt.Open(ctx, bolt.Config{Path: filepath.Join(dir, "memory.bolt")})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	// A backend whose reads fail once the copy is written: verification
	// cannot run, as when the process dies at that point.
	// (Migrate reads the target twice before it writes: its seq and mark.)
	_, err = core.Migrate(ctx, src.Backend(), &failReads{Backend: dst, after: 2}, nil)
	if err == nil || !strings.Contains(err.Error(), "verify") {
		t.Fatalf("migrate whose verification could not read the target: %v", err)
	}
	if ok, err := core.UnfinishedMigration(ctx, dst); err != nil || !ok {
		t.Fatalf("unverified copy: UnfinishedMigration = %v, %v", ok, err)
	}
	rep, err := core.Migrate(ctx, src.Backend(), dst, nil)
	if err != nil || !rep.Verified || rep.Memories != 2 || rep.AuditEntries != 5 {
		t.Fatalf("resume of the verification: %+v, %v", rep, err)
	}
	var audit int
	if err := dst.View(ctx, func(tx core.ReadTx) error {
		return tx.(core.AuditReader).Audit(func(core.AuditEntry) error { audit++; return nil })
	}); err != nil || audit != 5 {
		t.Fatalf("the target's audit log has %d entries, %v; want the source's 5", audit, err)
	}

	// An interrupted copy of a source that changed since is not resumed.
	dst2, err := bolt.Open(ctx, bolt.Config{Path: filepath.Join(dir, "second.bolt")})
	if err != nil {
		t.Fatal(err)
	}
	defer dst2.Close()
	cctx, cancel := context.WithCancel(ctx)
	if _, err := core.Migrate(cctx, src.Backend(), dst2, func(int, int) { cancel() }); err == nil {
		t.Fatal("migrate canceled after its first batch succeeded")
	}
	if ok, err := core.UnfinishedMigration(ctx, dst2); err != nil || !ok {
		t.Fatalf("interrupted copy: UnfinishedMigration = %v, %v", ok, err)
	}
	remember(t, src, core.Input{Content: "delta, written after the copy began"})
	if _, err := core.Migrate(ctx, src.Backend(), dst2, nil); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("resume after the source changed: %v; want ErrInvalid naming --force", err)
	}
}

// failReads lets the first `after` View calls through, then fails every
// later one; writes always go through.
type failReads struct {
	core.Backend
	after int
	n     int
}

func (f *failReads) View(ctx context.Context, fn func(tx core.ReadTx) error) error {
	f.n++
	if f.n > f.after {
		return errors.New("injected read failure")
	}
	return f.Backend.View(ctx, fn)
}

// A migrate killed before it has copied anything (here: while it lists the
// source, its first long step) leaves a target that Open refuses: the mark
// is the first thing written to it. Running Migrate again finishes the copy.
func TestMigrateKilledBeforeCopyLeavesMarkedTarget(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openAt(t, filepath.Join(dir, "memory.db"), core.Options{})
	defer src.Close()
	remember(t, src, core.Input{Content: "alpha"})
	remember(t, src, core.Input{Content: "beta"})
	dst, err := bolt.Open(ctx, bolt.Config{Path: filepath.Join(dir, "memory.bolt")})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := core.Migrate(ctx, failListing{src.Backend()}, dst, nil); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("migrate whose source listing failed: %v", err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Open(ctx, core.Options{Backend: dst, Embedder: emb}); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "unfinished copy") {
		t.Fatalf("open of a target whose copy was killed before the first memory: %v; want ErrInvalid naming the unfinished copy", err)
	}
	rep, err := core.Migrate(ctx, src.Backend(), dst, nil)
	if err != nil || !rep.Verified || rep.Memories != 2 {
		t.Fatalf("rerun: %+v, %v", rep, err)
	}
}

// failListing is a source whose listing of changes fails, as when the
// process is killed while it runs.
type failListing struct{ core.Backend }

func (f failListing) View(ctx context.Context, fn func(tx core.ReadTx) error) error {
	return f.Backend.View(ctx, func(tx core.ReadTx) error { return fn(failChanges{tx}) })
}

type failChanges struct{ core.ReadTx }

func (failChanges) Changes(uint64, func(core.Change) error) error {
	return errors.New("killed while listing the source")
}

// A target that the engine opened once (it records its settings, no
// memory) is a new store: Migrate copies into it. One that holds a
// forgotten memory, or an audit log, is not.
func TestMigrateIntoTargetOpenedOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openAt(t, filepath.Join(dir, "memory.db"), core.Options{})
	defer src.Close()
	remember(t, src, core.Input{Content: "alpha"})
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	openOnce := func(name string, use func(e *core.Engine)) core.Backend {
		b, err := bolt.Open(ctx, bolt.Config{Path: filepath.Join(dir, name)})
		if err != nil {
			t.Fatal(err)
		}
		e, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		use(e)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if b, err = bolt.Open(ctx, bolt.Config{Path: filepath.Join(dir, name)}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	opened := openOnce("opened.bolt", func(e *core.Engine) {
		if _, err := e.Stats(ctx); err != nil {
			t.Fatal(err)
		}
	})
	rep, err := core.Migrate(ctx, src.Backend(), opened, nil)
	if err != nil || !rep.Verified || rep.Memories != 1 {
		t.Fatalf("migrate into a store opened once: %+v, %v", rep, err)
	}
	used := openOnce("used.bolt", func(e *core.Engine) {
		m := remember(t, e, core.Input{Content: "kept only for a moment"})
		if _, err := e.Forget(ctx, m.ID, "test"); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := core.Migrate(ctx, src.Backend(), used, nil); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("migrate into a store that held a memory: %v; want ErrInvalid, not empty", err)
	}
	if ok, err := core.UnfinishedMigration(ctx, used); err != nil || ok {
		t.Fatalf("a refused target was marked: %v, %v", ok, err)
	}
}
