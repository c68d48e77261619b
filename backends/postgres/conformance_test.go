package postgres_test

import (
	"context"
	"testing"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
)

func TestConformance(t *testing.T) {
	dsn := testDSN(t)
	backendtest.Run(t, backendtest.Harness{
		Name: postgres.Name,
		// Each case's path names its own schema.
		Open: func(tb testing.TB, path string) (driver.Backend, error) {
			return postgres.Open(context.Background(), postgres.Config{DSN: dsn, Schema: schemaFor(tb, dsn, path)})
		},
	})
}

// BenchmarkBackend runs the benchmarks every backend shares. Build's
// disk-bytes/memory reads files under the store's path, which a database
// backend does not have: see memos bench's disk column (the schema's size).
func BenchmarkBackend(b *testing.B) {
	dsn := testDSN(b)
	backendtest.RunBenchmarks(b, backendtest.Harness{
		Name: postgres.Name,
		// The schemas are dropped when the whole benchmark ends: the shared
		// store is built inside the first sub-benchmark that needs it.
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return postgres.Open(context.Background(), postgres.Config{DSN: dsn, Schema: schemaFor(b, dsn, path)})
		},
	})
}
