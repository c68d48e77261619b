package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// hideIndexes is a backend whose read transactions offer the audit log and
// nothing else optional: no counts, no list index, no audit index.
type hideIndexes struct{ core.Backend }

func (h hideIndexes) View(ctx context.Context, fn func(core.ReadTx) error) error {
	return h.Backend.View(ctx, func(tx core.ReadTx) error {
		return fn(struct {
			core.ReadTx
			core.AuditReader
		}{tx, tx.(core.AuditReader)})
	})
}

// TestIndexedCountsMatchScans checks, on every registered backend
// (postgres with MEMOS_TEST_PG_DSN), that what the engine reads through
// the backend's counts and audit index (driver.Counter,
// driver.AuditMemoryReader, driver.ListReader) is what it reads by scanning
// the store and the log: Stats of a whole-store handle and of one limited
// to a namespace, the review queue, and each memory's audit entries (also
// of memories written in a batch, which one entry binds) — on a store with
// two namespaces, several pools, types and statuses, edges across the
// namespaces, new versions, a forget, quarantined memories with their
// reasons, a release and a reject.
func TestIndexedCountsMatchScans(t *testing.T) {
	for _, name := range core.BackendNames() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			b := openBackend(t, name, t.TempDir())
			t.Cleanup(func() { b.Close() })
			indexed, scanned := openHashEngine(t, b), openHashEngine(t, hideIndexes{b})
			writer, err := indexed.In("project:a")
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			types := []core.Type{core.TypeFact, core.TypeEvent, core.TypePreference}
			pools := []core.Pool{core.PoolMemory, core.PoolRaw, core.PoolKnowledge}
			for i := range 30 {
				e := indexed
				if i%3 == 0 {
					e = writer
				}
				in := core.Input{Content: fmt.Sprintf("note %d on the garden and the violin", i), Type: types[i%3], Pool: pools[i%4%3],
					Quarantine: i%7 == 0}
				if i%6 == 3 { // in project:a, as ids[0] is
					in.Contradicts = []int64{ids[0]}
				}
				m, err := e.Remember(ctx, in)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, m.ID)
			}
			batch := make([]core.Input, 12)
			for i := range batch {
				batch[i] = core.Input{Content: fmt.Sprintf("batched note %d", i), Quarantine: i == 4}
			}
			ms, err := writer.RememberBatch(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				ids = append(ids, m.ID)
			}
			for i := 1; i+5 < len(ids); i += 4 {
				if _, err := writer.Link(ctx, core.Edge{From: ids[i], To: ids[i+5], Type: core.EdgeRelatesTo, Weight: 1}); err != nil {
					t.Fatal(err)
				}
			}
			archived := core.StatusArchived
			for j := 3; j < len(ids); j += 6 {
				content := "revised"
				if _, err := writer.Update(ctx, ids[j], core.Patch{Content: &content, Status: &archived}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := writer.Forget(ctx, ids[9], ""); err != nil {
				t.Fatal(err)
			}
			if _, err := writer.Release(ctx, ids[7], core.ReleaseOptions{Note: "checked"}); err != nil {
				t.Fatal(err)
			}
			if _, err := writer.Reject(ctx, ids[14], "wrong"); err != nil {
				t.Fatal(err)
			}

			same := func(what string, a, b any) {
				t.Helper()
				ja, _ := json.Marshal(a)
				jb, _ := json.Marshal(b)
				if string(ja) != string(jb) {
					t.Errorf("%s: indexed\n%s\nscanned\n%s", what, ja, jb)
				}
			}
			limit := func(e *core.Engine) *core.Engine {
				l, err := e.Limit("project:a")
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			scannedA := must(scanned.In("project:a"))
			for _, pair := range [][2]*core.Engine{{indexed, scanned}, {writer, scannedA}, {limit(writer), limit(scannedA)}} {
				sa, err := pair[0].Stats(ctx)
				if err != nil {
					t.Fatal(err)
				}
				sb, err := pair[1].Stats(ctx)
				if err != nil {
					t.Fatal(err)
				}
				// Each engine has a vector index of its own; the wrapper hides
				// the backend's figures.
				sa.VectorIndexBytes, sb.VectorIndexBytes, sa.Backend = 0, 0, nil
				same("stats of "+pair[0].Namespace(), sa, sb)
				if pair[0] != indexed && (sa.Edges == 0 || sa.ByStatus["quarantined"] == 0 || sa.ByStatus["archived"] == 0) {
					t.Errorf("stats of %s count too little to compare: %+v", pair[0].Namespace(), sa)
				}
				ra, err := pair[0].Review(ctx)
				if err != nil {
					t.Fatal(err)
				}
				rb, err := pair[1].Review(ctx)
				if err != nil {
					t.Fatal(err)
				}
				same("review queue of "+pair[0].Namespace(), ra, rb)
				if pair[0] != indexed && len(ra) < 2 {
					t.Errorf("review queue of %s holds %d memories, too few to compare", pair[0].Namespace(), len(ra))
				}
			}
			bound := 0
			for _, id := range ids {
				aa, err := writer.Audit(ctx, core.AuditFilter{MemoryID: id})
				if err != nil {
					t.Fatal(err)
				}
				ab, err := scanned.Audit(ctx, core.AuditFilter{MemoryID: id})
				if err != nil {
					t.Fatal(err)
				}
				same(fmt.Sprintf("audit entries of memory %d", id), aa, ab)
				for _, a := range aa {
					if a.MemoryID == 0 {
						bound++ // a batch's entry
					}
				}
			}
			if bound != len(ms) {
				t.Errorf("%d batched memories found their batch's entry, want %d", bound, len(ms))
			}
		})
	}
}

// openHashEngine opens an engine over b with the hash embedder, closed at
// the end of the test.
func openHashEngine(t *testing.T, b core.Backend) *core.Engine {
	t.Helper()
	ctx := context.Background()
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// countAudit is a backend whose read transactions count the audit entries
// they hand out.
type countAudit struct {
	core.Backend
	reads *atomic.Int64
}

func (c countAudit) View(ctx context.Context, fn func(core.ReadTx) error) error {
	return c.Backend.View(ctx, func(tx core.ReadTx) error { return fn(countingTx{tx, c.reads}) })
}

type countingTx struct {
	core.ReadTx
	reads *atomic.Int64
}

func (c countingTx) count(fn func(core.AuditEntry) error) func(core.AuditEntry) error {
	return func(a core.AuditEntry) error { c.reads.Add(1); return fn(a) }
}

func (c countingTx) Audit(fn func(core.AuditEntry) error) error {
	return c.ReadTx.(core.AuditReader).Audit(c.count(fn))
}

func (c countingTx) AuditOf(id int64, fn func(core.AuditEntry) error) error {
	return c.ReadTx.(core.AuditMemoryReader).AuditOf(id, c.count(fn))
}

func (c countingTx) AuditBound(id int64, fn func(core.AuditEntry) error) error {
	return c.ReadTx.(core.AuditBindingReader).AuditBound(id, c.count(fn))
}

// TestMemoryAuditReadsItsEntries checks, on every registered backend that
// indexes batch entries by the memories they bind
// (driver.AuditBindingReader), that the audit entries of one memory (the
// console's memory page) cost what its own entries cost: after many
// batches of remembers, reading a batched memory's entries reads the
// entries it returns and no other.
func TestMemoryAuditReadsItsEntries(t *testing.T) {
	for _, name := range core.BackendNames() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			b := openBackend(t, name, t.TempDir())
			t.Cleanup(func() { b.Close() })
			var bound bool
			if err := b.View(ctx, func(tx core.ReadTx) error { _, bound = tx.(core.AuditBindingReader); return nil }); err != nil {
				t.Fatal(err)
			}
			if !bound {
				t.Skipf("%s does not index batch entries by memory: a memory's entries are read with every batch entry", name)
			}
			reads := &atomic.Int64{}
			e := openHashEngine(t, countAudit{b, reads})
			var mine *core.Memory
			for i := range 8 {
				batch := make([]core.Input, 5)
				for j := range batch {
					batch[j] = core.Input{Content: fmt.Sprintf("batch %d note %d", i, j)}
				}
				ms, err := e.RememberBatch(ctx, batch)
				if err != nil {
					t.Fatal(err)
				}
				if i == 3 {
					mine = ms[2]
				}
				if _, err := e.Remember(ctx, core.Input{Content: fmt.Sprintf("single note %d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			content := "batched, then changed"
			if _, err := e.Update(ctx, mine.ID, core.Patch{Content: &content}); err != nil {
				t.Fatal(err)
			}
			reads.Store(0)
			got, err := e.Audit(ctx, core.AuditFilter{MemoryID: mine.ID})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].MemoryID != 0 || got[1].MemoryID != mine.ID {
				t.Fatalf("memory %d's audit entries: %+v; want its batch's and its update's", mine.ID, got)
			}
			if n := reads.Load(); n != int64(len(got)) {
				t.Errorf("reading memory %d's %d audit entries read %d entries of the log", mine.ID, len(got), n)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
