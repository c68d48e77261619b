package postgres_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/upgradetest"
)

// fixtureTables are the tables of a store, in the order a restore fills
// them.
var fixtureTables = []string{"store", "meta", "memories", "memory_versions", "tombstones", "edges", "audit", "blobs"}

// dumpTable is one table of a fixture: its rows as COPY's text format.
type dumpTable struct {
	Name string `json:"name"`
	Copy string `json:"copy"`
}

// TestWriteUpgradeFixture writes the upgrade fixture of this build's
// schema into $MEMOS_PG_FIXTURE_OUT (core/upgradetest/testdata), named
// after $MEMOS_PG_FIXTURE_TAG (e.g. v2, the schema version): the rows of
// every table of a store upgradetest.Build wrote (postgres-TAG.json.gz),
// and what this build answers about it (postgres-TAG-answers.json.gz,
// postgres-TAG-revert.json.gz). Run it in a checkout of the release whose
// schema the fixture should pin:
//
//	MEMOS_TEST_PG_DSN=... MEMOS_PG_FIXTURE_OUT=$PWD/core/upgradetest/testdata MEMOS_PG_FIXTURE_TAG=v2 \
//	  go test -run TestWriteUpgradeFixture ./backends/postgres/
func TestWriteUpgradeFixture(t *testing.T) {
	out, tag := os.Getenv("MEMOS_PG_FIXTURE_OUT"), os.Getenv("MEMOS_PG_FIXTURE_TAG")
	if out == "" || tag == "" {
		t.Skip("writes upgrade fixtures only when MEMOS_PG_FIXTURE_OUT and MEMOS_PG_FIXTURE_TAG are set")
	}
	ctx := context.Background()
	dsn := testDSN(t)
	schema := schemaFor(t, dsn, t.Name())
	open := func() (driver.Backend, error) { return postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema}) }
	b, err := open()
	if err != nil {
		t.Fatal(err)
	}
	e, err := upgradetest.Open(ctx, b, upgradetest.NewClock(upgradetest.Start), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := upgradetest.Build(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var dump []dumpTable
	for _, name := range fixtureTables {
		var buf bytes.Buffer
		q := `COPY (SELECT * FROM ` + pgx.Identifier{schema, name}.Sanitize() + ` ORDER BY 1, 2) TO STDOUT`
		if name == "store" {
			q = `COPY ` + pgx.Identifier{schema, name}.Sanitize() + ` TO STDOUT`
		}
		if _, err := conn.PgConn().CopyTo(ctx, &buf, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		dump = append(dump, dumpTable{name, buf.String()})
	}
	js, err := json.MarshalIndent(dump, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	writeGzip(t, filepath.Join(out, "postgres-"+tag+".json.gz"), js)

	b, err = open()
	if err != nil {
		t.Fatal(err)
	}
	e, err = upgradetest.Open(ctx, b, upgradetest.NewClock(upgradetest.Start), false)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ans, err := upgradetest.Answers(ctx, b, e, upgradetest.MaxID)
	if err != nil {
		t.Fatal(err)
	}
	writeGzip(t, filepath.Join(out, "postgres-"+tag+"-answers.json.gz"), ans)
	rev, err := upgradetest.Revert(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	writeGzip(t, filepath.Join(out, "postgres-"+tag+"-revert.json.gz"), rev)
}

func writeGzip(t *testing.T, path string, b []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// restoreFixture creates schema as the release that wrote the fixture
// postgres-vN.json.gz had (the tables of schema version N), and fills its
// tables with the fixture's rows.
func restoreFixture(t *testing.T, dsn, schema, tag string) {
	t.Helper()
	ctx := context.Background()
	f, err := os.Open(filepath.Join(upgradetest.Dir(), "postgres-"+tag+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var dump []dumpTable
	if err := json.NewDecoder(zr).Decode(&dump); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	version, err := strconv.Atoi(strings.TrimPrefix(tag, "v"))
	if err != nil || version < 1 || version > postgres.SchemaVersion {
		t.Fatalf("fixture tag %q does not name a schema version", tag)
	}
	s := pgx.Identifier{schema}.Sanitize()
	stmts := append([]string{`CREATE SCHEMA ` + s, `SET search_path = ` + s}, postgres.SchemaSQL(version)...)
	stmts = append(stmts, `DELETE FROM store`)
	for _, q := range stmts {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, tb := range dump {
		q := `COPY ` + pgx.Identifier{schema, tb.Name}.Sanitize() + ` FROM STDIN`
		if _, err := conn.PgConn().CopyFrom(ctx, strings.NewReader(tb.Copy), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// upgraded connects to the database and checks that schema records the
// latest schema version; it returns the connection and the schema's
// quoted name.
func upgraded(t *testing.T, dsn, schema string) (*pgx.Conn, string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s := pgx.Identifier{schema}.Sanitize()
	var version string
	if err := conn.QueryRow(ctx, `SELECT value FROM `+s+`.meta WHERE key = 'postgres.schema_version'`).Scan(&version); err != nil || version != strconv.Itoa(postgres.SchemaVersion) {
		t.Errorf("schema version %q (%v), want %d", version, err, postgres.SchemaVersion)
	}
	return conn, s
}

// A store written by memos with schema version 2 (every version stored in
// full in memory_versions, the current one too) opens, is migrated in
// place, and answers every read, history, as-of search and revert as that
// release did; afterwards memory_versions holds only the versions before
// the current one, without the content and vectors they share with the
// next.
func TestUpgradeFromV2(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	schema := schemaFor(t, dsn, t.Name())
	restoreFixture(t, dsn, schema, "v2")
	open := func() (driver.Backend, error) { return postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema}) }
	upgradetest.Check(t, "postgres-v2", open)

	conn, s := upgraded(t, dsn, schema)
	defer conn.Close(ctx)
	var rows, noContent, noVector, current, missing int
	err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE content IS NULL),
		count(*) FILTER (WHERE embedding IS NULL AND embedding_dim > 0),
		count(*) FILTER (WHERE version >= (SELECT m.version FROM `+s+`.memories AS m WHERE m.id = v.id)),
		(SELECT sum(version - 1) FROM `+s+`.memories) - count(*)
		FROM `+s+`.memory_versions AS v`).Scan(&rows, &noContent, &noVector, &current, &missing)
	if err != nil {
		t.Fatal(err)
	}
	if current != 0 || missing != 0 {
		t.Errorf("memory_versions has %d rows at or after the current version and lacks %d earlier versions; want 0 and 0", current, missing)
	}
	// The fixture's edits that kept the content (metadata, significance,
	// status, validity) store neither content nor vector again.
	if noContent == 0 || noVector == 0 || noContent == rows {
		t.Errorf("%d version rows, %d without content, %d without vector: want some of each kind", rows, noContent, noVector)
	}
}

// A store written by memos with schema version 3 (today's main before
// blobs) opens, gains the blobs table, answers as that release did, and
// keeps its engine's vector snapshot in the store from then on.
func TestUpgradeFromV3(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	schema := schemaFor(t, dsn, t.Name())
	restoreFixture(t, dsn, schema, "v3")
	open := func() (driver.Backend, error) { return postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema}) }
	upgradetest.Check(t, "postgres-v3", open)

	conn, s := upgraded(t, dsn, schema)
	defer conn.Close(ctx)
	// Check's engine closed: it saved its vector snapshot in the store.
	var chunks int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+s+`.blobs WHERE name = 'vectors'`).Scan(&chunks); err != nil || chunks == 0 {
		t.Errorf("the upgraded store holds %d chunks of a vector snapshot (%v); want some", chunks, err)
	}
}
