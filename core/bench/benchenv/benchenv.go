// Package benchenv is what memos' Go benchmarks share: the process's CPU
// time, which they report beside wall time because a shared machine makes
// wall time depend on its neighbours, and the store size and data
// directory they take from the environment.
package benchenv

import (
	"os"
	"strconv"
	"testing"
)

// N returns the number of memories in $MEMOS_BENCH_N, or def when it is
// unset. A value that is not a positive number fails tb.
func N(tb testing.TB, def int) int {
	tb.Helper()
	s := os.Getenv("MEMOS_BENCH_N")
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		tb.Fatalf("MEMOS_BENCH_N is %q; want a positive number of memories", s)
	}
	return v
}

// DataDir returns the shared dev data's directory: $MEMOS_BENCH_DATA, or
// def (the benchmark's path to ../shared/data next to the repository)
// when it is unset.
func DataDir(def string) string {
	if d := os.Getenv("MEMOS_BENCH_DATA"); d != "" {
		return d
	}
	return def
}
