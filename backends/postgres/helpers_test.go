package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/backends/postgres"
)

// EnvTestDSN names the database the tests use. Each test works in its own
// schema and drops it at the end.
const EnvTestDSN = "MEMOS_TEST_PG_DSN"

// testDSN returns the test database, or skips the test with how to run it;
// under CI=true a missing database fails the test instead.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvTestDSN)
	if dsn == "" {
		msg := EnvTestDSN + " is not set: the postgres backend's tests need a PostgreSQL server. " +
			"Start one and point the variable at a database the tests may create schemas in, e.g. " +
			"pg_ctlcluster 15 main start && createdb memos_test && " +
			EnvTestDSN + "='postgres:///memos_test?host=/var/run/postgresql' go test ./backends/postgres/"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dsn
}

var dropped sync.Map // schema → registered for dropping

// schemaFor names a throwaway schema after key (a path, a test name) and
// drops it when t ends.
func schemaFor(t testing.TB, dsn, key string) string {
	h := sha256.Sum256([]byte(key))
	schema := "t_" + hex.EncodeToString(h[:10])
	if _, loaded := dropped.LoadOrStore(schema, true); !loaded {
		t.Cleanup(func() { dropSchema(t, dsn, schema) })
	}
	return schema
}

func dropSchema(t testing.TB, dsn, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
	}
}

// openTest opens a store in a fresh schema named after key.
func openTest(t testing.TB, key string) *postgres.DB {
	t.Helper()
	dsn := testDSN(t)
	db, err := postgres.Open(context.Background(), postgres.Config{DSN: dsn, Schema: schemaFor(t, dsn, t.Name()+"/"+key)})
	if err != nil {
		t.Fatal(err)
	}
	return db
}
