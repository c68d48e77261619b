// Package devbench runs backendtest's natural-language keyword benchmark
// over the shared dev data (LoCoMo and LongMemEval turns, read with
// core/bench/dataset). It is apart from backendtest because the data
// loaders link the engine (package core), which a backend's own packages
// must not (core/driver's TestImplementersDoNotLinkTheEngine); only the
// backends' tests import it.
package devbench

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/bench/benchenv"
	"github.com/memos-go/memos/core/bench/dataset"
	"github.com/memos-go/memos/core/driver"
)

// RunNaturalDev runs backendtest.RunNaturalBenchmarks over 100,000
// memories (or $MEMOS_BENCH_N) built from the dev turns and questions in
// dataDir (dataset.DevTurns), the workload every backend's
// BenchmarkNatural measures; it skips b when the data is absent.
func RunNaturalDev(b *testing.B, h backendtest.Harness, dataDir string) {
	b.Helper()
	n := benchenv.N(b, 100_000)
	turns, qs, err := dataset.DevTurns(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("the shared dev data is absent (%v); set MEMOS_BENCH_DATA or place it in ../shared/data next to the repository", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	w := backendtest.NaturalWorkload{Questions: qs}
	for _, t := range turns {
		w.Turns = append(w.Turns, backendtest.NaturalTurn(t))
	}
	backendtest.RunNaturalBenchmarks(b, h, w, n)
}

// DataDir is the shared data directory as the backends' tests see it:
// $MEMOS_BENCH_DATA, or else ../shared/data beside the repository.
var DataDir = benchenv.DataDir("../../../shared/data")

// Questions returns the dev questions in dataDir, or skips b when the data
// is absent.
func Questions(b testing.TB, dataDir string) []string {
	b.Helper()
	_, qs, err := dataset.DevTurns(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("the shared dev data is absent (%v)", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	return qs
}

// WithDevText puts the dev turns of dataDir, spread over the data sets, in
// the content of ms (keeping their namespaces and types), and returns the
// dev questions; when the data is absent it leaves ms as they are, says so
// in t's log and returns no questions.
func WithDevText(t testing.TB, ms []*driver.Memory, dataDir string) []string {
	t.Helper()
	turns, qs, err := dataset.DevTurns(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		t.Logf("the shared dev data is absent (%v): synthetic text only", err)
		return nil
	case err != nil:
		t.Fatal(err)
	}
	for i, m := range ms {
		m.Content = turns[i*len(turns)/len(ms)].Content
	}
	return qs
}
