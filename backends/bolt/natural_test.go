package bolt

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/driver"
)

// BenchmarkNatural measures natural-language keyword search over 100,000
// real dev turns (backendtest.RunNaturalBenchmarks), as sqlite's
// BenchmarkNatural does; it skips without the shared data (../shared/data
// next to the repository).
func BenchmarkNatural(b *testing.B) {
	h := backendtest.Harness{
		Name: Name,
		Open: func(_ testing.TB, path string) (driver.Backend, error) {
			return Open(context.Background(), Config{Path: path})
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
