package postgres_test

import (
	"context"
	"testing"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
)

// BenchmarkRanked reads a 100k-memory scope in rank order
// (backendtest.RunRankedBenchmarks).
func BenchmarkRanked(b *testing.B) {
	dsn := testDSN(b)
	backendtest.RunRankedBenchmarks(b, backendtest.Harness{
		Name: postgres.Name,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return postgres.Open(context.Background(), postgres.Config{DSN: dsn, Schema: schemaFor(b, dsn, path)})
		},
	}, 100_000)
}
