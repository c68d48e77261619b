package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/internal/sqlrow"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/upgradetest"
)

// A store written by memos with schema version 1 (two copies of the
// current version) opens, is upgraded in place, and answers every read,
// history, as-of search and revert as it did before; afterwards it holds
// each version once and passes the consistency checks.
func TestUpgradeFromV1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	upgradetest.Gunzip(t, "sqlite-v1.db.gz", path)
	upgradetest.Check(t, "sqlite-v1", func() (driver.Backend, error) {
		return Open(ctx, Config{Path: path})
	})
	d, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	checkConsistent(t, d, -1)
	var version string
	var rows, noContent, noVector int
	if err := d.w.QueryRow(`SELECT value FROM meta WHERE key = ?`, keySchemaVersion).Scan(&version); err != nil || version != "3" {
		t.Errorf("schema version %q (%v), want 3", version, err)
	}
	checkUpgradedIndex(t, d)
	err = d.w.QueryRow(`SELECT count(*), count(*) FILTER (WHERE content IS NULL),
		count(*) FILTER (WHERE embedding IS NULL AND embedding_dim > 0) FROM memory_versions`).Scan(&rows, &noContent, &noVector)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's edits that kept the content (metadata, significance,
	// status, validity, entities) store neither content nor vector again.
	if noContent == 0 || noVector == 0 || noContent == rows {
		t.Errorf("%d version rows, %d without content, %d without vector: want some of each kind", rows, noContent, noVector)
	}
}

// A store written by memos with schema version 2 (before the keyword
// bounds) opens, gains the frontiers of its terms built from its index, and
// answers as it did before.
func TestUpgradeFromV2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	upgradetest.Gunzip(t, "sqlite-v2.db.gz", path)
	upgradetest.Check(t, "sqlite-v2", func() (driver.Backend, error) {
		return Open(ctx, Config{Path: path})
	})
	d, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	checkConsistent(t, d, -1)
	checkUpgradedIndex(t, d)
}

// checkUpgradedIndex checks what an upgraded store's keyword search reads
// beside FTS5's index: the fts5vocab tables (which Open adds to a store
// that lacks them) and a frontier for every term, none pending.
func checkUpgradedIndex(t *testing.T, d *DB) {
	t.Helper()
	for _, table := range []string{"memories_fts_vocab", "memories_fts_instance"} {
		var n int
		if err := d.w.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, table).Scan(&n); err != nil || n != 1 {
			t.Errorf("the upgraded store has %d tables %s (%v)", n, table, err)
		}
	}
	var terms int
	if err := d.w.QueryRow(`SELECT count(*) FROM memories_fts_bound`).Scan(&terms); err != nil || terms == 0 {
		t.Errorf("the upgraded store has %d frontiers (%v)", terms, err)
	}
	checkStoredBounds(t, d)
}

// An upgrade that frees much of the file compacts it. The version 1 store
// is built from the released version 1 schema, and filled the way a MemU
// importer does (plain SQL: version 1's trigger then copies every row into
// memory_versions).
func TestUpgradeCompacts(t *testing.T) {
	t.Run("alone", func(t *testing.T) { testUpgradeCompacts(t, false) })
	// Another connection keeps the store in WAL mode: the file keeps its
	// page size, and is compacted all the same.
	t.Run("shared", func(t *testing.T) { testUpgradeCompacts(t, true) })
}

func testUpgradeCompacts(t *testing.T, shared bool) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	raw, err := sql.Open("sqlite", strings.Replace(dsn(path, time.Second, true), fmt.Sprintf("page_size%%28%d%%29", pageBytes), "page_size%288192%29", 1))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrations[0](ctx, tx); err != nil {
		t.Fatal(err)
	}
	// The indexes Open adds are on both sides of the comparison: what is
	// measured is the versions' compaction.
	if err := execAll(openIndexes...)(ctx, tx); err != nil {
		t.Fatal(err)
	}
	const n = 2000 // enough rows that the pages every table and index takes at least do not decide the ratio
	vec := sqlrow.EncodeVector(make([]float32, 256))
	for i := range n {
		if _, err := tx.Exec(`INSERT INTO memories (content, embedding) VALUES (?, ?)`,
			fmt.Sprintf("imported memory number %d about %s", i, strings.Repeat("words ", i%50)), vec); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		fmt.Sprintf(`PRAGMA application_id = %d`, applicationID),
		`INSERT INTO meta (key, value) VALUES ('` + keySchemaVersion + `', '1')`,
	} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var copies int
	if err := raw.QueryRow(`SELECT count(*) FROM memory_versions`).Scan(&copies); err != nil || copies != n {
		t.Fatalf("the version 1 store has %d version rows (%v), want %d", copies, err, n)
	}
	if !shared {
		if err := raw.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		defer raw.Close()
		if _, err := raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			t.Fatal(err)
		}
	}
	before := fileSize(t, path)

	d, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, d, n)
	if err := d.View(ctx, func(tx driver.ReadTx) error {
		for id := int64(1); id <= n; id++ {
			h, err := tx.History(id)
			if err != nil {
				return err
			}
			if len(h) != 1 || h[0].Version != 1 || len(h[0].Embedding.Vector) != 256 || !strings.HasPrefix(h[0].Content, "imported memory number") {
				return fmt.Errorf("history of %d after the upgrade: %+v", id, h)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	after := fileSize(t, path) + fileSize(t, path+"-wal")
	if after > before*2/3 {
		t.Errorf("the upgraded store takes %d bytes, the version 1 store took %d: want it compacted to at most two thirds", after, before)
	}
	// When no other connection had it open, it moved to the current page
	// size; it is in WAL mode again.
	d = openDB(t, path)
	defer d.Close()
	size := fmt.Sprint(pageBytes)
	if shared {
		size = "8192"
	}
	for _, p := range []struct{ pragma, want string }{{"page_size", size}, {"journal_mode", "wal"}} {
		var got string
		if err := d.w.QueryRow(`PRAGMA ` + p.pragma).Scan(&got); err != nil || got != p.want {
			t.Errorf("after the upgrade, PRAGMA %s = %q (%v), want %s", p.pragma, got, err, p.want)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A version row leaves out the content and the embedding that the next
// version has too, and reads resolve them: an edit of the metadata stores
// neither again, an edit of the content stores the old content only.
func TestVersionRowsShareWithNext(t *testing.T) {
	d, _ := tempDB(t)
	ctx := context.Background()
	m := newMem("the first content")
	m.Embedding = driver.Embedding{Model: "m", Vector: []float32{1, 2, 3, 4}}
	insert(t, d, m)
	next := func(change func(*driver.Memory)) *driver.Memory {
		n := m.Clone()
		n.Version++
		change(n)
		update(t, d, func(tx driver.Tx) error { return tx.Put(n) })
		m = n
		return n
	}
	next(func(n *driver.Memory) { n.Significance = 7 })                         // v2: same content and vector
	next(func(n *driver.Memory) { n.Content = "the second content" })           // v3: same vector
	next(func(n *driver.Memory) { n.Embedding.Vector = []float32{4, 3, 2, 1} }) // v4: same content
	next(func(n *driver.Memory) { n.Embedding = driver.Embedding{} })           // v5: no vector
	next(func(n *driver.Memory) { n.Metadata = map[string]any{"k": "v"} })      // v6: current

	type row struct {
		content, vec bool
		dim          int
	}
	want := []row{{false, false, 4}, {true, false, 4}, {false, true, 4}, {false, true, 4}, {false, false, 0}}
	rows, err := d.w.Query(`SELECT content IS NOT NULL, embedding IS NOT NULL, embedding_dim FROM memory_versions WHERE id = ? ORDER BY version`, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.content, &r.vec, &r.dim); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	rows.Close()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("version rows (content stored, vector stored, dim) = %v, want %v", got, want)
	}
	wantContent := []string{"the first content", "the first content", "the second content", "the second content", "the second content", "the second content"}
	wantVec := [][]float32{{1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}, {4, 3, 2, 1}, nil, nil}
	err = d.View(ctx, func(tx driver.ReadTx) error {
		hist, err := tx.History(m.ID)
		if err != nil {
			return err
		}
		if len(hist) != 6 {
			return fmt.Errorf("%d versions, want 6", len(hist))
		}
		for i, h := range hist {
			g, err := tx.Get(m.ID, i+1)
			if err != nil {
				return err
			}
			for _, v := range []*driver.Memory{h, g} {
				if v.Version != i+1 || v.Content != wantContent[i] || fmt.Sprint(v.Embedding.Vector) != fmt.Sprint(wantVec[i]) {
					t.Errorf("version %d reads as version %d, %q, %v; want %q, %v", i+1, v.Version, v.Content, v.Embedding.Vector, wantContent[i], wantVec[i])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
