package sqlite_test

import (
	"context"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/backendtest/devbench"
	"github.com/memos-go/memos/core/driver"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		Name: sqlite.Name,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return sqlite.Open(context.Background(), sqlite.Config{Path: path})
		},
	})
}

func BenchmarkBackend(b *testing.B) {
	backendtest.RunBenchmarks(b, backendtest.Harness{
		Name: sqlite.Name,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return sqlite.Open(context.Background(), sqlite.Config{Path: path})
		},
	})
}

// BenchmarkNatural measures natural-language keyword search over 100,000
// real dev turns (backendtest.RunNaturalBenchmarks); it skips without the
// shared data (../shared/data next to the repository).
func BenchmarkNatural(b *testing.B) {
	devbench.RunNaturalDev(b, backendtest.Harness{
		Name: sqlite.Name,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return sqlite.Open(context.Background(), sqlite.Config{Path: path})
		},
	}, "../../../shared/data")
}
