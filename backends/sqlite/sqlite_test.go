package sqlite

// Tests of behaviour specific to the sqlite backend. The shared semantics of
// every backend are tested by the conformance suite (conformance_test.go).

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

var t0 = time.Date(2025, time.May, 1, 12, 30, 45, 123456789, time.UTC)

func newMem(content string) *driver.Memory {
	return &driver.Memory{
		Version:      1,
		Namespace:    driver.DefaultNamespace,
		Pool:         driver.PoolMemory,
		Type:         driver.TypeFact,
		Content:      content,
		Significance: 5,
		Trust:        driver.Trust{Level: driver.TrustCertain, Score: 1},
		CreatedAt:    t0,
		UpdatedAt:    t0,
		Status:       driver.StatusActive,
	}
}

func openDB(t testing.TB, path string) *DB {
	t.Helper()
	d, err := Open(context.Background(), Config{Path: path})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return d
}

func tempDB(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	d := openDB(t, path)
	t.Cleanup(func() { d.Close() })
	return d, path
}

func update(t testing.TB, d *DB, fn func(tx driver.Tx) error) {
	t.Helper()
	if err := d.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func insert(t testing.TB, d *DB, ms ...*driver.Memory) {
	t.Helper()
	update(t, d, func(tx driver.Tx) error {
		for _, m := range ms {
			if err := tx.Insert(m); err != nil {
				return err
			}
		}
		return nil
	})
}

func mustParse(t testing.TB, s string) query.Node {
	t.Helper()
	n, err := query.Parse(s)
	if err != nil {
		t.Fatalf("query.Parse(%q): %v", s, err)
	}
	return n
}

func TestOpenRefusesWhatIsNotAStore(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()

	textFile := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(textFile, []byte("just some notes, not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE memories (id INTEGER PRIMARY KEY, content TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	newer := filepath.Join(dir, "newer.db")
	d := openDB(t, newer)
	if _, err := d.w.Exec(`UPDATE meta SET value = '999' WHERE key = ?`, keySchemaVersion); err != nil {
		t.Fatal(err)
	}
	d.Close()

	for _, tc := range []struct {
		name, path, want string
	}{
		{"empty path", "", "set path"},
		{"missing directory", filepath.Join(dir, "no", "such", "memory.db"), "does not exist"},
		{"directory", dir, "is a directory"},
		{"text file", textFile, "not an SQLite database"},
		{"foreign SQLite database", foreign, "not a memos store"},
		{"newer schema", newer, "upgrade memos"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open(ctx, Config{Path: tc.path})
			if err == nil {
				d.Close()
				t.Fatalf("Open succeeded, want an error containing %q", tc.want)
			}
			if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open error = %v; want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
	// The text file was not touched.
	if b, _ := os.ReadFile(textFile); !bytes.HasPrefix(b, []byte("just some notes")) {
		t.Errorf("Open modified a file it refused")
	}
}

func TestOpenCreatesFileAndReopens(t *testing.T) {
	// Characters that mean something in a URI must not confuse the driver.
	path := filepath.Join(t.TempDir(), "my store?x=1#%20.db")
	d := openDB(t, path)
	m := newMem("the kettle is in the left cupboard")
	insert(t, d, m)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); !errors.Is(err, driver.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("store file %s: %v", path, err)
	}
	d = openDB(t, path)
	defer d.Close()
	for _, p := range []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"synchronous", "1"}, // NORMAL
		{"foreign_keys", "1"},
		{"secure_delete", "1"},
		{"page_size", fmt.Sprint(pageBytes)},
		{"application_id", fmt.Sprint(applicationID)},
	} {
		var got string
		if err := d.w.QueryRow(`PRAGMA ` + p.pragma).Scan(&got); err != nil || got != p.want {
			t.Errorf("PRAGMA %s = %q, %v; want %s", p.pragma, got, err, p.want)
		}
	}
	var secure string
	if err := d.w.QueryRow(`SELECT v FROM memories_fts_config WHERE k = 'secure-delete'`).Scan(&secure); err != nil || secure != "1" {
		t.Errorf("FTS5 secure-delete = %q, %v; want 1", secure, err)
	}
	var ver string
	if err := d.r.QueryRow(`SELECT value FROM meta WHERE key = ?`, keySchemaVersion).Scan(&ver); err != nil || ver != fmt.Sprint(schemaVersion) {
		t.Errorf("schema version = %q, %v; want %d", ver, err, schemaVersion)
	}
	err := d.View(context.Background(), func(tx driver.ReadTx) error {
		got, err := tx.Get(m.ID, 0)
		if err == nil && got.Content != m.Content {
			err = fmt.Errorf("content %q", got.Content)
		}
		return err
	})
	if err != nil {
		t.Errorf("after reopen: %v", err)
	}
}

func TestRegisteredDriver(t *testing.T) {
	drv, err := driver.LookupBackend(Name)
	if err != nil {
		t.Fatal(err)
	}
	if drv.DefaultPath != "memory.db" {
		t.Errorf("DefaultPath = %q", drv.DefaultPath)
	}
	cfg := drv.NewConfig().(*Config)
	if _, err := drv.Open(context.Background(), cfg); !errors.Is(err, driver.ErrInvalid) {
		t.Errorf("Open with zero config = %v, want ErrInvalid", err)
	}
	cfg.Path = filepath.Join(t.TempDir(), drv.DefaultPath)
	b, err := drv.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}

// TestMemUColumns checks the layout a MemU importer and other SQL readers
// rely on: MemU's column names and encodings, and that a row written with
// plain SQL is indexed for keyword search.
func TestMemUColumns(t *testing.T) {
	d, _ := tempDB(t)
	m := newMem("Alice prefers open-source tools")
	m.Type = driver.TypePreference
	m.Significance = 7
	m.Entities = []string{"Alice", "open source"}
	m.EmotionalContext = "enthusiastic"
	m.Source = "conversation:42#turn-7"
	m.Embedding = driver.Embedding{Model: "hash-v1-4", Vector: []float32{0.5, -1.25, float32(math.Inf(1)), math.SmallestNonzeroFloat32}}
	insert(t, d, m)

	var (
		content, typ, entities, emo, source, created, updated string
		significance                                          int
		blob                                                  []byte
	)
	err := d.r.QueryRow(`SELECT content, type, significance, entities, emotional_context, source,
		created_at, updated_at, embedding FROM memories WHERE id = ?`, m.ID).
		Scan(&content, &typ, &significance, &entities, &emo, &source, &created, &updated, &blob)
	if err != nil {
		t.Fatal(err)
	}
	var ents []string
	if err := json.Unmarshal([]byte(entities), &ents); err != nil || len(ents) != 2 || ents[0] != "Alice" {
		t.Errorf("entities column = %q (%v), want a JSON array", entities, err)
	}
	if content != m.Content || typ != "preference" || significance != 7 || emo != "enthusiastic" || source != m.Source {
		t.Errorf("MemU columns = %q %q %d %q %q", content, typ, significance, emo, source)
	}
	for _, s := range []string{created, updated} {
		if tm, err := time.Parse(time.RFC3339Nano, s); err != nil || !tm.Equal(t0) {
			t.Errorf("time column %q is not RFC 3339 for %v (%v)", s, t0, err)
		}
	}
	if len(blob) != 16 {
		t.Fatalf("embedding blob is %d bytes, want 16", len(blob))
	}
	for i, want := range m.Embedding.Vector {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:])); got != want {
			t.Errorf("embedding[%d] = %v, want %v (little-endian float32)", i, got, want)
		}
	}

	// A row imported with plain SQL (MemU's columns only) gets defaults, an
	// FTS entry (the triggers) and reads back.
	res, err := d.w.Exec(`INSERT INTO memories (content, type, significance, entities, emotional_context, source, created_at, updated_at, embedding)
		VALUES ('Bob keeps bees on the roof', 'fact', 6, '["Bob"]', '', 'memu', '2025-05-01 12:30:45.123456789', ?, ?)`,
		t0.Format(timeLayout), blob)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	hits, err := d.SearchKeyword(context.Background(), mustParse(t, "bees"), driver.Filter{Namespaces: []string{"default"}}, 10)
	if err != nil || len(hits) != 1 || hits[0].ID != id {
		t.Errorf("search for an imported row = %v, %v; want id %d", hits, err, id)
	}
	err = d.View(context.Background(), func(tx driver.ReadTx) error {
		got, err := tx.Get(id, 0)
		if err != nil {
			return err
		}
		if got.Entities[0] != "Bob" || got.Trust.Level != driver.TrustImported || got.Status != driver.StatusActive ||
			got.CreatedAt != t0 || got.Embedding.Dim() != 4 || got.Embedding.Vector[1] != -1.25 {
			return fmt.Errorf("imported row read as %+v", got)
		}
		if h, err := tx.History(id); err != nil || len(h) != 1 || h[0].Content != got.Content {
			return fmt.Errorf("history of an imported row = %v, %v", h, err)
		}
		seen := false
		err = tx.Changes(0, func(c driver.Change) error {
			seen = seen || (c.ID == id && c.Embedding.Dim() == 4)
			return nil
		})
		if err == nil && !seen {
			err = errors.New("Changes(0) does not list the imported row")
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
	checkConsistent(t, d, 2)
}

func TestTimesRoundTripInUTC(t *testing.T) {
	d, _ := tempDB(t)
	paris := time.FixedZone("CEST", 2*60*60)
	m := newMem("times round-trip")
	m.CreatedAt = time.Now() // with a monotonic reading and the local zone
	m.UpdatedAt = time.Date(2024, 2, 29, 23, 59, 59, 999999999, paris)
	m.ValidFrom = time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)
	m.LastAccessedAt = time.Date(9999, 12, 31, 23, 59, 59, 0, paris)
	insert(t, d, m)
	err := d.View(context.Background(), func(tx driver.ReadTx) error {
		got, err := tx.Get(m.ID, 0)
		if err != nil {
			return err
		}
		for _, c := range []struct {
			name      string
			got, want time.Time
		}{
			{"created_at", got.CreatedAt, m.CreatedAt},
			{"updated_at", got.UpdatedAt, m.UpdatedAt},
			{"valid_from", got.ValidFrom, m.ValidFrom},
			{"valid_to", got.ValidTo, m.ValidTo},
			{"last_accessed_at", got.LastAccessedAt, m.LastAccessedAt},
		} {
			if c.got != c.want.UTC().Round(0) && !(c.want.IsZero() && c.got.IsZero()) {
				t.Errorf("%s = %#v, want %v in UTC without monotonic reading", c.name, c.got, c.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	bad := newMem("year ten thousand")
	bad.ValidTo = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	err = d.Update(context.Background(), func(tx driver.Tx) error { return tx.Insert(bad) })
	if !errors.Is(err, driver.ErrInvalid) {
		t.Errorf("Insert with a time in year 10000 = %v, want ErrInvalid", err)
	}
}

// storeFiles returns the content of the database and its WAL and shared
// memory files (those that exist).
func storeFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

func TestForgetLeavesNoBytes(t *testing.T) {
	const word = "zqxjkvuniqueword"
	d, path := tempDB(t)
	// Enough neighbours that the FTS index spans several pages and segments.
	var filler []*driver.Memory
	for i := range 240 {
		filler = append(filler, newMem(fmt.Sprintf("filler note %d about gardening, bees and w%04d", i, i)))
	}
	insert(t, d, filler[:120]...)
	m := newMem("the secret word is " + word + " and nobody may know it")
	m.Entities = []string{word}
	m.Source = "file:" + word + ".md"
	m.Metadata = map[string]any{"note": word}
	m.Embedding = driver.Embedding{Model: "m", Vector: []float32{1, 2, 3}}
	insert(t, d, m)
	insert(t, d, filler[120:]...)
	update(t, d, func(tx driver.Tx) error {
		v2 := *m
		v2.Version = 2
		v2.Content = "updated: " + word + " is still the secret word"
		return tx.Put(&v2)
	})
	update(t, d, func(tx driver.Tx) error {
		return tx.Link(driver.Edge{From: m.ID, To: filler[0].ID, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: t0, Source: word})
	})
	hits, err := d.SearchKeyword(context.Background(), mustParse(t, word), driver.Filter{}, 10)
	if err != nil || len(hits) != 1 {
		t.Fatalf("before delete: search = %v, %v", hits, err)
	}
	update(t, d, func(tx driver.Tx) error { return tx.Delete(m.ID) })

	check := func(when string) {
		for name, b := range storeFiles(t, path) {
			// The prefix catches the porter stem as well as the word.
			if i := bytes.Index(b, []byte(word[:10])); i >= 0 {
				t.Errorf("%s: %s still contains %q at offset %d", when, name, word[:10], i)
			}
		}
	}
	check("after Delete, store open")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	check("after Close")

	d = openDB(t, path)
	defer d.Close()
	if _, err := d.w.Exec(`INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("FTS integrity-check after forget: %v", err)
	}
	hits, err = d.SearchKeyword(context.Background(), mustParse(t, "gardening"), driver.Filter{}, 1000)
	if err != nil || len(hits) != len(filler) {
		t.Errorf("the neighbours are still searchable: %d hits, %v; want %d", len(hits), err, len(filler))
	}
}

// TestWritersWait shows that a writer waits for another connection's write
// transaction instead of failing, and fails with ErrUnavailable only after
// its busy timeout.
func TestWritersWait(t *testing.T) {
	ctx := context.Background()
	_, path := tempDB(t)
	a, b := openDB(t, path), openDB(t, path)
	defer a.Close()
	defer b.Close()
	impatient, err := Open(ctx, Config{Path: path, BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()

	holding, release := make(chan struct{}), make(chan struct{})
	errA := make(chan error, 1)
	go func() {
		errA <- a.Update(ctx, func(tx driver.Tx) error {
			if err := tx.Insert(newMem("written by a")); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	// a holds the write lock until release: the impatient writer gives up.
	err = impatient.Update(ctx, func(tx driver.Tx) error { return tx.Insert(newMem("impatient")) })
	if !errors.Is(err, driver.ErrUnavailable) {
		t.Errorf("writer with a 20ms busy timeout while another writes = %v, want ErrUnavailable", err)
	}
	// Readers are not blocked by the writer.
	if err := b.View(ctx, func(tx driver.ReadTx) error { _, err := tx.Seq(); return err }); err != nil {
		t.Errorf("View during another connection's write: %v", err)
	}
	errB := make(chan error, 1)
	go func() {
		errB <- b.Update(ctx, func(tx driver.Tx) error { return tx.Insert(newMem("written by b")) })
	}()
	close(release)
	if err := <-errA; err != nil {
		t.Errorf("a: %v", err)
	}
	if err := <-errB; err != nil {
		t.Errorf("b waited and then: %v", err)
	}
	n := 0
	err = b.View(ctx, func(tx driver.ReadTx) error {
		return tx.Scan(driver.ScanOptions{}, func(*driver.Memory) error { n++; return nil })
	})
	if err != nil || n != 2 {
		t.Errorf("after both writes: %d memories, %v; want 2", n, err)
	}
}

func TestFTSErrorIsInvalid(t *testing.T) {
	d, _ := tempDB(t)
	ctx := context.Background()
	// The AST never renders bad syntax; feed FTS5 some directly.
	rows, err := d.r.QueryContext(ctx, qSearch, `"unbalanced`, 10)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if err == nil {
		t.Fatal("FTS5 accepted an unbalanced quote")
	}
	err = searchError(ctx, `"unbalanced`, err)
	if !errors.Is(err, driver.ErrInvalid) || !strings.Contains(err.Error(), `"unbalanced`) {
		t.Errorf("searchError = %v; want ErrInvalid naming the query", err)
	}
	if _, err := d.SearchKeyword(ctx, &query.Or{Children: []query.Node{&query.Term{Text: "a"}}}, driver.Filter{}, 5); !errors.Is(err, driver.ErrInvalid) {
		t.Errorf("SearchKeyword with a malformed AST = %v, want ErrInvalid", err)
	}
}

// checkConsistent checks the invariants a crash must not break: SQLite's
// and FTS5's integrity checks pass (the index holds exactly the current
// content of every memory), every memory has a row for each version before
// the current one and none for it or later, no edge
// dangles, and the change log knows every memory. want < 0 skips the count.
func checkConsistent(t *testing.T, d *DB, want int) {
	t.Helper()
	var ok string
	if err := d.w.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check = %q, %v", ok, err)
	}
	if _, err := d.w.Exec(`INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("FTS integrity-check: %v", err)
	}
	for _, c := range []struct {
		what, q string
	}{
		{"version rows at or after the current version", `SELECT count(*) FROM memory_versions AS v
			JOIN memories AS m ON m.id = v.id WHERE v.version >= m.version`},
		{"memories with missing or extra version rows", `SELECT count(*) FROM memories AS m WHERE
			(SELECT count(*) FROM memory_versions AS v WHERE v.id = m.id) != m.version - 1`},
		{"version rows of unknown memories", `SELECT count(*) FROM memory_versions WHERE id NOT IN (SELECT id FROM memories)`},
		{"dangling edges", `SELECT count(*) FROM edges WHERE from_id NOT IN (SELECT id FROM memories) OR to_id NOT IN (SELECT id FROM memories)`},
		{"tombstoned ids still present", `SELECT count(*) FROM tombstones WHERE id IN (SELECT id FROM memories)`},
		{"FTS rows without a memory", `SELECT count(*) FROM memories_fts_docsize WHERE id NOT IN (SELECT id FROM memories)`},
		{"memories without an FTS row", `SELECT count(*) FROM memories WHERE id NOT IN (SELECT id FROM memories_fts_docsize)`},
		{"changes newer than the change counter", `SELECT count(*) FROM memories WHERE seq > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'sqlite.seq')`},
	} {
		var n int
		if err := d.w.QueryRow(c.q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d (%v)", c.what, n, err)
		}
	}
	if want >= 0 {
		var n int
		if err := d.w.QueryRow(`SELECT count(*) FROM memories`).Scan(&n); err != nil || n != want {
			t.Errorf("%d memories (%v), want %d", n, err, want)
		}
	}
}

// TestCheckpointInterval checks the WAL checkpoint interval: a quarter of
// the store, at least SQLite's 1000 pages, at most walCheckpointBytes; and
// that an open store's writer has it.
func TestCheckpointInterval(t *testing.T) {
	for _, c := range []struct{ pages, size, want int64 }{
		{0, 16384, 1000},
		{4000, 16384, 1000},
		{20000, 16384, 5000},
		{40000, 16384, 8192},
		{25000, 16384, 6250}, // a 390 MiB store: 98 MiB of WAL
		{1 << 20, 16384, 8192},
		{1 << 20, 32768, 4096},
		{1 << 20, 0, 1 << 18},
	} {
		if got := walPages(c.pages, c.size); got != c.want {
			t.Errorf("walPages(%d, %d) = %d; want %d", c.pages, c.size, got, c.want)
		}
	}
	d, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var n int64
	if err := d.w.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&n); err != nil || n != 1000 {
		t.Fatalf("a new store's writer checkpoints every %d pages (%v); want 1000", n, err)
	}
}
