package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/embedders/hash"
)

// logCapture collects what slog logs while a test runs.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *logCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// captureLog sends slog's records to the returned capture until t ends.
func captureLog(t *testing.T) *logCapture {
	c := &logCapture{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(c, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return c
}

func engineStats(t *testing.T, e *core.Engine) *core.Stats {
	t.Helper()
	st, err := e.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// snapStore is a store of the snapshot tests: its schema, and engines over
// it with the vector snapshot in the store (file "") or in a file.
type snapStore struct {
	t      *testing.T
	dsn    string
	schema string
	emb    core.Embedder
}

func newSnapStore(t *testing.T, key string) *snapStore {
	dsn := testDSN(t)
	emb, err := hash.New(hash.Config{Dim: 64})
	if err != nil {
		t.Fatal(err)
	}
	return &snapStore{t: t, dsn: dsn, schema: schemaFor(t, dsn, t.Name()+"/"+key), emb: emb}
}

func (s *snapStore) open(file string) *core.Engine {
	s.t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, postgres.Config{DSN: s.dsn, Schema: s.schema})
	if err != nil {
		s.t.Fatal(err)
	}
	e, err := core.Open(ctx, core.Options{Backend: db, Embedder: s.emb, VectorSnapshot: file,
		Govern: core.GovernConfig{Contradictions: core.ContradictOff}, Search: core.SearchConfig{DisableAccessTracking: true}})
	if err != nil {
		db.Close()
		s.t.Fatal(err)
	}
	return e
}

// sql runs q in the store's schema and returns the first column of its
// first row, if any.
func (s *snapStore) sql(q string, args ...any) any {
	s.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET search_path = "+pgx.Identifier{s.schema}.Sanitize()); err != nil {
		s.t.Fatal(err)
	}
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var v any
	if rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			s.t.Fatal(err)
		}
		if len(vals) > 0 {
			v = vals[0]
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
	return v
}

// blobBytes is the size of the snapshot kept in the store (0: none).
func (s *snapStore) blobBytes() int64 {
	s.t.Helper()
	return s.sql(`SELECT coalesce(sum(length(data)), 0)::bigint FROM blobs WHERE name = 'vectors'`).(int64)
}

// fill remembers n memories of snapText through an engine over the store
// and closes it, which saves the snapshot in the store.
func (s *snapStore) fill(n int) []*core.Memory {
	s.t.Helper()
	e := s.open("")
	var ins []core.Input
	for i := range n {
		ins = append(ins, core.Input{Content: snapText(i)})
	}
	ms, err := e.RememberBatch(context.Background(), ins)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		s.t.Fatal(err)
	}
	return ms
}

var snapWords = []string{"harbour", "lantern", "copper", "meadow", "signal", "orchard", "granite", "violet", "thunder", "willow"}

func snapText(i int) string {
	return fmt.Sprintf("%s %s %s note %d", snapWords[i%10], snapWords[(i/10)%10], snapWords[(i/3)%10], i)
}

// vectorIDs is what a vector search for q finds through e.
func vectorIDs(t *testing.T, e *core.Engine, q string, limit int) []int64 {
	t.Helper()
	return searchIDs(t, e, core.SearchRequest{Query: q, Mode: core.ModeVector, Limit: limit})
}

// searchIDs is what req finds through e.
func searchIDs(t *testing.T, e *core.Engine, req core.SearchRequest) []int64 {
	t.Helper()
	res, err := e.Search(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, h := range res.Hits {
		out = append(out, h.Memory.ID)
	}
	return out
}

// sameAsRebuilt checks that e answers vector searches as an engine that
// builds its index from the store (a snapshot file of its own, none yet).
func sameAsRebuilt(t *testing.T, s *snapStore, e *core.Engine) {
	t.Helper()
	fresh := s.open(filepath.Join(t.TempDir(), "fresh.vectors"))
	defer fresh.Close()
	for i, w := range snapWords {
		q := w + " " + snapWords[(i+3)%10]
		if got, want := vectorIDs(t, e, q, 20), vectorIDs(t, fresh, q, 20); !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("vector search %q: %v; an index read from the store finds %v", q, got, want)
		}
	}
	// The searches synced both with the change log.
	if a, b := engineStats(t, e), engineStats(t, fresh); a.Vectors != b.Vectors {
		t.Errorf("the engine holds %d vectors, one that read them all from the store %d", a.Vectors, b.Vectors)
	}
}

// An engine over postgres keeps its vector snapshot in the store: Close
// writes it, the next open on any host reads it and replays the change log
// from its seq, so writes made after it was saved (by a process that keeps
// no snapshot there, and a forget whose process died before it deleted the
// snapshot) are found, and the forgotten memory is not. Forget through an
// engine deletes it.
func TestVectorSnapshotInStore(t *testing.T) {
	ctx := context.Background()
	s := newSnapStore(t, "store")
	ms := s.fill(300)
	saved := s.blobBytes()
	if saved == 0 {
		t.Fatal("Close wrote no vector snapshot into the store")
	}
	seqAtSave := s.sql(`SELECT seq FROM store`).(int64)

	// Writes after the snapshot: through an engine that keeps its snapshot
	// in a file (so it does not replace the one in the store), and a forget
	// straight through the backend, as a process that died before it
	// deleted the snapshot would leave it.
	w := s.open(filepath.Join(t.TempDir(), "w.vectors"))
	added, err := w.Remember(ctx, core.Input{Content: "zebra quartz xylophone"})
	if err != nil {
		t.Fatal(err)
	}
	changed := "vermilion zeppelin quokka"
	if _, err := w.Update(ctx, ms[5].ID, core.Patch{Content: &changed}); err != nil {
		t.Fatal(err)
	}
	forgotten := ms[7]
	if err := w.Backend().Update(ctx, func(tx driver.Tx) error { return tx.Delete(forgotten.ID) }); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := s.blobBytes(); got != saved {
		t.Fatalf("the snapshot in the store changed (%d → %d bytes) without an engine that keeps it there", saved, got)
	}
	if cur := s.sql(`SELECT seq FROM store`).(int64); cur <= seqAtSave {
		t.Fatalf("store seq %d after the writes, %d at the save", cur, seqAtSave)
	}

	logs := captureLog(t)
	c := s.open("")
	defer c.Close()
	if strings.Contains(logs.String(), "snapshot") {
		t.Errorf("the open did not use the snapshot: %s", logs)
	}
	if st := engineStats(t, c); st.VectorSnapshotBytes != saved {
		t.Errorf("Stats: snapshot of %d bytes, the store holds %d", st.VectorSnapshotBytes, saved)
	}
	if got := vectorIDs(t, c, "zebra quartz xylophone", 1); !slices.Equal(got, []int64{added.ID}) {
		t.Errorf("the memory written after the snapshot: vector search finds %v, want [%d]", got, added.ID)
	}
	if got := vectorIDs(t, c, changed, 1); !slices.Equal(got, []int64{ms[5].ID}) {
		t.Errorf("the memory changed after the snapshot: vector search finds %v, want [%d]", got, ms[5].ID)
	}
	if got := vectorIDs(t, c, forgotten.Content, 300); slices.Contains(got, forgotten.ID) {
		t.Errorf("memory %d, forgotten after the snapshot, is still found", forgotten.ID)
	}
	sameAsRebuilt(t, s, c)

	if _, err := c.Forget(ctx, ms[9].ID, "test"); err != nil {
		t.Fatal(err)
	}
	if got := s.blobBytes(); got != 0 {
		t.Errorf("after a forget the store still holds a vector snapshot of %d bytes", got)
	}
}

// A snapshot in the store that does not belong to it is ignored, with a
// warning, and the index is read from the store: one copied from another
// store, and one that disagrees with the store's vectors.
func TestVectorSnapshotInStoreRejected(t *testing.T) {
	ctx := context.Background()
	other := newSnapStore(t, "other")
	e := other.open("")
	if _, err := e.Remember(ctx, core.Input{Content: "a memory of another store"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	s := newSnapStore(t, "store")
	s.fill(200)
	if s.blobBytes() == 0 {
		t.Fatal("Close wrote no vector snapshot into the store")
	}

	// Foreign: the other store's snapshot, copied over this one's.
	s.sql(`DELETE FROM blobs`)
	s.sql(`INSERT INTO blobs SELECT * FROM ` + pgx.Identifier{other.schema, "blobs"}.Sanitize())
	logs := captureLog(t)
	c := s.open("")
	if l := logs.String(); !strings.Contains(l, "ignoring the vector snapshot") || !strings.Contains(l, "is of store") {
		t.Errorf("a snapshot of another store was not reported: %q", l)
	}
	sameAsRebuilt(t, s, c)
	if err := c.Close(); err != nil { // saves this store's own snapshot
		t.Fatal(err)
	}

	// Stale: the vectors of the first memories changed under the snapshot
	// without a change-log entry (as a snapshot saved from another state of
	// the store would differ).
	s.sql(`UPDATE memories SET embedding = (SELECT embedding FROM memories ORDER BY id DESC LIMIT 1)
		WHERE id IN (SELECT id FROM memories ORDER BY id LIMIT 8)`)
	logs = captureLog(t)
	c = s.open("")
	defer c.Close()
	if l := logs.String(); !strings.Contains(l, "ignoring the vector snapshot") || !strings.Contains(l, "does not hold the store's vector") {
		t.Errorf("a snapshot that disagrees with the store was not reported: %q", l)
	}
	sameAsRebuilt(t, s, c)
}

// An engine that opens from the snapshot while another host writes misses
// none of the writes: those before and after the snapshot's seq, and those
// committed while it opens.
func TestVectorSnapshotInStoreConcurrentWriter(t *testing.T) {
	ctx := context.Background()
	s := newSnapStore(t, "store")
	ms := s.fill(400)
	w := s.open(filepath.Join(t.TempDir(), "w.vectors"))
	defer w.Close()
	done := make(chan error, 1)
	go func() {
		for i := range 60 {
			var err error
			// No forgets: a forget deletes the snapshot (see
			// TestVectorSnapshotInStore for one it missed).
			if i%2 == 0 {
				_, err = w.Remember(ctx, core.Input{Content: snapText(1000 + i)})
			} else {
				c := snapText(2000 + i)
				_, err = w.Update(ctx, ms[i].ID, core.Patch{Content: &c})
			}
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var opened []*core.Engine
	for range 3 {
		opened = append(opened, s.open(""))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, c := range opened {
		sameAsRebuilt(t, s, c)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
