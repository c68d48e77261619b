package sqlite_test

import (
	"context"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
)

// BenchmarkRanked reads a 100k-memory scope in rank order
// (backendtest.RunRankedBenchmarks).
func BenchmarkRanked(b *testing.B) {
	backendtest.RunRankedBenchmarks(b, backendtest.Harness{
		Name: sqlite.Name,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return sqlite.Open(context.Background(), sqlite.Config{Path: path})
		},
	}, 100_000)
}
