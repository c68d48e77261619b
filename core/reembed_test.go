package core_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// openHash opens the sqlite store at path with the hash embedder of dim
// dimensions, returning the error instead of failing.
func openHash(t *testing.T, path string, dim int, allowChange bool) (*core.Engine, error) {
	t.Helper()
	ctx := context.Background()
	b, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	e, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb, AllowModelChange: allowChange, Now: newClock().now})
	if err != nil {
		b.Close()
		return nil, err
	}
	return e, nil
}

// openErr opens like openHash and returns only the error, closing the
// engine if it opened.
func openErr(t *testing.T, path string, dim int) error {
	t.Helper()
	e, err := openHash(t, path, dim, false)
	if e != nil {
		e.Close()
	}
	return err
}

func mustOpenHash(t *testing.T, path string, dim int, allowChange bool) *core.Engine {
	t.Helper()
	e, err := openHash(t, path, dim, allowChange)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// reembedContents are the seed memories; the first is also the search target.
var reembedContents = []string{
	"The kitten slept on the rug by the fire",
	"Stock prices fell sharply on Monday",
	"Alice prefers open-source tools",
	"The quarterly review moved to Thursday",
	"Bob's home lab runs Proxmox on three nodes",
	"Deploys happen every Tuesday afternoon",
	"The office coffee machine is broken again",
}

// seedReembedStore makes a store embedded with hash-v1-256: memories in two
// namespaces, one updated (two versions), one quarantined, one archived and
// one forgotten. It returns the store path and the ids of live memories.
func seedReembedStore(t *testing.T) (string, []int64) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	e, err := openHash(t, path, 256, false)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	proj, err := e.In("project:infra")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, c := range reembedContents {
		h := e
		if i%2 == 1 {
			h = proj
		}
		in := core.Input{Content: c}
		switch i {
		case 3:
			in.Status = core.StatusQuarantined
		case 4:
			in.Status = core.StatusArchived
		}
		ids = append(ids, remember(t, h, in).ID)
	}
	upd := "Alice prefers open-source tools and Linux"
	if _, err := e.Update(ctx, ids[2], core.Patch{Content: &upd}); err != nil {
		t.Fatal(err)
	}
	gone := remember(t, e, core.Input{Content: "a memory that will be forgotten"})
	if _, err := e.Forget(ctx, gone.ID, "test"); err != nil {
		t.Fatal(err)
	}
	return path, ids
}

func TestReembedSwitchesModel(t *testing.T) {
	ctx := context.Background()
	path, ids := seedReembedStore(t)

	// Before: the new embedder is refused, naming both models.
	err := openErr(t, path, 128)
	if !errors.Is(err, core.ErrDimensionMismatch) || !strings.Contains(err.Error(), "hash-v1-256") || !strings.Contains(err.Error(), "hash-v1-128") {
		t.Fatalf("open with the new embedder: %v; want ErrDimensionMismatch naming hash-v1-256 and hash-v1-128", err)
	}

	e := mustOpenHash(t, path, 128, true)
	st, err := e.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Vectors != 0 {
		t.Errorf("before re-embedding the new model's index holds %d vectors, want 0", st.Vectors)
	}
	var calls [][2]int
	rep, err := e.Reembed(ctx, core.ReembedOptions{BatchSize: 3, Progress: func(done, total int) {
		calls = append(calls, [2]int{done, total})
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := core.ReembedReport{Model: "hash-v1-128", Dim: 128, Previous: "hash-v1-256", Total: 7, Reembedded: 7, Batches: 3, Switched: true}
	if *rep != want {
		t.Errorf("report %+v, want %+v", *rep, want)
	}
	if !slices.Equal(calls, [][2]int{{0, 7}, {3, 7}, {6, 7}, {7, 7}}) {
		t.Errorf("progress calls %v", calls)
	}

	// History shows the re-embedding version: same content, new model.
	hs, err := e.History(ctx, ids[2])
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 3 {
		t.Fatalf("memory %d has %d versions, want 3 (add, update, re-embed)", ids[2], len(hs))
	}
	prev, last := hs[1], hs[2]
	if last.Content != prev.Content || last.Embedding.Model != "hash-v1-128" || last.Embedding.Dim() != 128 ||
		prev.Embedding.Model != "hash-v1-256" || last.Status != prev.Status || last.Namespace != prev.Namespace {
		t.Errorf("re-embedding version %+v after %+v", last, prev)
	}
	// Every status and namespace was converted.
	for _, id := range ids {
		var cur *core.Memory
		err := e.Backend().View(ctx, func(tx core.ReadTx) error {
			var err error
			cur, err = tx.Get(id, 0)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if cur.Embedding.Model != "hash-v1-128" {
			t.Errorf("memory %d (%s, %s) is still on %s", id, cur.Namespace, cur.Status, cur.Embedding.Model)
		}
	}
	audit, err := e.Audit(ctx, core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if a := audit[len(audit)-1]; a.Action != "embedder.switch" || !strings.Contains(a.Detail, `"to":"hash-v1-128"`) {
		t.Errorf("last audit entry %+v; want the model switch", a)
	}
	if _, err := e.VerifyAudit(ctx); err != nil {
		t.Error(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// After: the new model opens without AllowModelChange and search works.
	e2 := mustOpenHash(t, path, 128, false)
	res, err := e2.Search(ctx, core.SearchRequest{Query: reembedContents[0], Mode: core.ModeVector, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Memory.ID != ids[0] || res.Hits[0].Memory.Embedding.Model != "hash-v1-128" {
		t.Errorf("vector search after re-embedding: %+v; want memory %d first", res.Hits, ids[0])
	}
	if st, err := e2.Stats(ctx); err != nil || st.Vectors != 5 {
		t.Errorf("stats after re-embedding: %d vectors (err %v); want the 5 active memories", st.Vectors, err)
	}
	// A second run finds nothing to do.
	rep, err = e2.Reembed(ctx, core.ReembedOptions{})
	if err != nil || rep.Reembedded != 0 || rep.Skipped != 7 || rep.Switched {
		t.Errorf("second run: %+v, %v; want nothing re-embedded", rep, err)
	}

	// The old embedder is now refused, naming both models.
	err = openErr(t, path, 256)
	if !errors.Is(err, core.ErrDimensionMismatch) || !strings.Contains(err.Error(), "hash-v1-256") || !strings.Contains(err.Error(), "hash-v1-128") {
		t.Errorf("open with the old embedder after the switch: %v; want ErrDimensionMismatch naming both", err)
	}
}

func TestReembedResumesAfterInterruption(t *testing.T) {
	path, ids := seedReembedStore(t)
	e := mustOpenHash(t, path, 128, true)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := e.Reembed(ctx, core.ReembedOptions{BatchSize: 2, Progress: func(done, _ int) {
		if done > 0 {
			cancel() // interrupt after the first batch
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v; want context.Canceled", err)
	}
	if rep == nil || rep.Reembedded != 2 || rep.Switched {
		t.Fatalf("interrupted run reported %+v; want 2 re-embedded, no switch", rep)
	}

	// Meanwhile the old embedder still opens; its index leaves out the
	// converted memories, keyword search still finds them.
	old := mustOpenHash(t, path, 256, false)
	st, err := old.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Vectors != 3 {
		t.Errorf("old model's index holds %d vectors; want the 3 active memories not yet converted", st.Vectors)
	}
	res, err := old.Search(context.Background(), core.SearchRequest{Query: "kitten", Mode: core.ModeKeyword})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Memory.ID != ids[0] {
		t.Errorf("keyword search with the old model: %+v, %v", res, err)
	}
	old.Close()

	rep, err = e.Reembed(context.Background(), core.ReembedOptions{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Skipped != 2 || rep.Reembedded != 5 || !rep.Switched || rep.Previous != "hash-v1-256" {
		t.Errorf("resumed run reported %+v; want 2 skipped, 5 re-embedded, switched from hash-v1-256", rep)
	}
	hs, err := e.History(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 {
		t.Errorf("memory %d has %d versions after two runs; want one re-embedding version", ids[0], len(hs))
	}
	if err := openErr(t, path, 256); !errors.Is(err, core.ErrDimensionMismatch) {
		t.Errorf("old embedder after the switch: %v; want ErrDimensionMismatch", err)
	}
}

func TestReembedInvalid(t *testing.T) {
	e := openEngine(t)
	if _, err := e.Reembed(context.Background(), core.ReembedOptions{BatchSize: -1}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("batch size -1: %v; want ErrInvalid", err)
	}
	b, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "m.db")})
	if err != nil {
		t.Fatal(err)
	}
	kw, err := core.Open(context.Background(), core.Options{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer kw.Close()
	if _, err := kw.Reembed(context.Background(), core.ReembedOptions{}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("without an embedder: %v; want ErrInvalid", err)
	}
	e.Close()
	if _, err := e.Reembed(context.Background(), core.ReembedOptions{}); !errors.Is(err, core.ErrClosed) {
		t.Errorf("after Close: %v; want ErrClosed", err)
	}
}

// TestReembedCatchesConcurrentOldModelWrites: a process still on the old
// model rewrites a memory that was already converted; Reembed converts it
// again before it switches the store.
func TestReembedCatchesConcurrentOldModelWrites(t *testing.T) {
	ctx := context.Background()
	path, ids := seedReembedStore(t)
	e := mustOpenHash(t, path, 128, true)
	old := mustOpenHash(t, path, 256, false)
	content := "The kitten now sleeps on the sofa"
	wrote := false
	rep, err := e.Reembed(ctx, core.ReembedOptions{BatchSize: 4, Progress: func(done, _ int) {
		if done == 4 && !wrote {
			wrote = true
			if _, err := old.Update(ctx, ids[0], core.Patch{Content: &content}); err != nil {
				t.Error(err)
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Reembedded != 8 || !rep.Switched {
		t.Errorf("report %+v; want 8 re-embedded (memory %d twice) and the switch", rep, ids[0])
	}
	m, err := e.Get(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if m.Content != content || m.Embedding.Model != "hash-v1-128" {
		t.Errorf("memory %d: %q on %s; want the new content on hash-v1-128", ids[0], m.Content, m.Embedding.Model)
	}
}

// TestReembedGivesUpOnPersistentOldModelWriter: a writer that rewrites a
// memory with the old model during every pass makes Reembed fail with
// ErrConflict, and the store keeps its old model.
func TestReembedGivesUpOnPersistentOldModelWriter(t *testing.T) {
	ctx := context.Background()
	path, ids := seedReembedStore(t)
	e := mustOpenHash(t, path, 128, true)
	old := mustOpenHash(t, path, 256, false)
	n := 0
	rep, err := e.Reembed(ctx, core.ReembedOptions{BatchSize: 4, Progress: func(done, _ int) {
		if done == 4 {
			n++
			content := strings.Repeat("again ", n)
			if _, err := old.Update(ctx, ids[0], core.Patch{Content: &content}); err != nil {
				t.Error(err)
			}
		}
	}})
	if !errors.Is(err, core.ErrConflict) || rep == nil || rep.Switched {
		t.Fatalf("Reembed: %+v, %v; want ErrConflict and no switch", rep, err)
	}
	if err := openErr(t, path, 128); !errors.Is(err, core.ErrDimensionMismatch) {
		t.Errorf("the store switched models although Reembed failed: %v", err)
	}
}

// BenchmarkReembed measures re-embedding a sqlite store of 2,000 memories
// from hash-v1-256 to hash-v1-128 (the hash embedder costs ~10 µs a text, so
// this is mostly the store's cost of writing versions).
func BenchmarkReembed(b *testing.B) {
	const n = 2000
	ctx := context.Background()
	ins := make([]core.Input, n)
	for i := range ins {
		ins[i] = core.Input{Content: fmt.Sprintf("memory %d: the deploy of service %d moved to Thursday", i, i%97)}
	}
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "memory.db")
		e := openReembedBench(b, path, 256, false)
		if _, err := e.RememberBatch(ctx, ins); err != nil {
			b.Fatal(err)
		}
		e.Close()
		e = openReembedBench(b, path, 128, true)
		b.StartTimer()
		if _, err := e.Reembed(ctx, core.ReembedOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		e.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "memories/s")
}

func openReembedBench(b *testing.B, path string, dim int, allow bool) *core.Engine {
	ctx := context.Background()
	be, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{Dim: dim})
	if err != nil {
		b.Fatal(err)
	}
	e, err := core.Open(ctx, core.Options{Backend: be, Embedder: emb, AllowModelChange: allow})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// TestReembedSavesVectorSnapshot: once Reembed has switched the store, the
// vector snapshot on disk is of the new model, so that the next open — here
// a second handle while the first is still open, as after a crash before
// Close — loads it instead of warning and rebuilding the index.
func TestReembedSavesVectorSnapshot(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	snap := path + ".vectors"
	open := func(dim int, allowChange bool) *core.Engine {
		emb, err := hash.Open(ctx, hash.Config{Dim: dim})
		if err != nil {
			t.Fatal(err)
		}
		e := openAt(t, path, core.Options{Embedder: emb, AllowModelChange: allowChange, VectorSnapshot: snap})
		t.Cleanup(func() { e.Close() })
		return e
	}
	e := open(256, false)
	for _, c := range reembedContents {
		remember(t, e, core.Input{Content: c})
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = open(128, true)
	if _, err := e.Reembed(ctx, core.ReembedOptions{}); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	defer slog.SetDefault(prev)
	next := open(128, false)
	slog.SetDefault(prev)
	if s := logged.String(); strings.Contains(s, "snapshot") {
		t.Errorf("the open after reembed rebuilt the vector index: %s", s)
	}
	res, err := next.Search(ctx, core.SearchRequest{Query: reembedContents[0], Mode: core.ModeVector, Limit: 1})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Memory.Content != reembedContents[0] {
		t.Errorf("vector search after reembed: %+v, %v", res, err)
	}
}
