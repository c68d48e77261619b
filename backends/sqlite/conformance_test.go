package sqlite_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/bench/dataset"
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
	h := backendtest.Harness{
		Name: sqlite.Name,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return sqlite.Open(context.Background(), sqlite.Config{Path: path})
		},
	}
	turns, qs, err := dataset.DevTurns("../../../shared/data")
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("the shared dev data is absent (%v); place it in ../shared/data next to the repository", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	w := backendtest.NaturalWorkload{Questions: qs}
	for _, t := range turns {
		w.Turns = append(w.Turns, backendtest.NaturalTurn(t))
	}
	backendtest.RunNaturalBenchmarks(b, h, w, 100_000)
}
