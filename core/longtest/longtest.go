// Package longtest is the switch between memos' quick tests and its long
// ones.
//
// `go test ./...` runs the quick set: every behaviour is checked, on inputs
// small enough that the whole suite finishes in minutes on two busy cores.
// With MEMOS_TEST_LONG=1 in the environment (.ci/run sets it) the tests that
// need size or time to mean something run in full as well: randomized
// differential suites at full size, 20k-vector recall, crash campaigns that
// kill writer processes, and stores of 100k memories.
//
// A test asks Enabled (or Pick) to choose its size, or Skip when it has no
// quick form. A long test whose full size costs minutes under the race
// detector and runs no goroutines of its own (a differential check of SQL
// against FTS5, say: the detector has nothing to find in it, and slows
// SQLite some 30 times) asks PickFull instead: .ci/run runs the long set
// with -race, where such a test takes its quick size, and then runs it
// again without -race, at full size, in a step of its own. In CI (CI=true) a long test that is skipped fails the run
// instead, so that the switch cannot be lost silently.
package longtest

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// Env is the environment variable that turns the long tests on.
const Env = "MEMOS_TEST_LONG"

// Enabled reports whether the long tests run (MEMOS_TEST_LONG is set to a
// value other than "", "0" or "false").
func Enabled() bool {
	switch os.Getenv(Env) {
	case "", "0", "false":
		return false
	}
	return true
}

// Pick returns long when the long tests run and quick otherwise.
func Pick[T any](quick, long T) T {
	if Enabled() {
		return long
	}
	return quick
}

// Full reports whether the long tests run at full size: the long set, built
// without the race detector.
func Full() bool {
	return Enabled() && !Race
}

// PickFull returns full when the long tests run without the race detector
// (Full) and quick otherwise. A test that uses it must run in .ci/run's
// step without -race, or its full size is never checked.
func PickFull[T any](quick, full T) T {
	if Full() {
		return full
	}
	return quick
}

// Skip skips t unless the long tests run, saying why t is long and how to
// run it. Under CI=true it fails t instead: CI sets the switch, so a skip
// there means .ci/run lost it.
func Skip(t testing.TB, why string) {
	t.Helper()
	if Enabled() {
		return
	}
	msg := "long test (" + why + "): set " + Env + "=1 to run it"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI must set it (.ci/run)")
	}
	t.Skip(msg)
}

// QuickRapidChecks lowers the number of cases pgregory.net/rapid checks per
// property to n, except in the long set without the race detector (Full),
// which .ci/run runs the properties in. A package whose properties are
// costly (each case opens a store) calls it from TestMain after flag.Parse.
// An explicit -rapid.checks flag or RAPID_CHECKS variable keeps rapid's
// own count.
func QuickRapidChecks(n int) {
	if Full() || os.Getenv("RAPID_CHECKS") != "" {
		return
	}
	f := flag.Lookup("rapid.checks")
	if f == nil {
		return
	}
	given := false
	flag.Visit(func(v *flag.Flag) { given = given || v == f })
	if !given {
		_ = f.Value.Set(strconv.Itoa(n))
	}
}

// RaceBuildFlags are the go build flags of a binary a race-built test
// starts (core/testbin), as .ci/run builds the tests themselves: the race
// detector on, except in modernc.org/sqlite/lib. That package is SQLite's
// C code translated to Go; instrumented, every memory access of its
// B-trees is checked, which made a store some 30 to 50 times slower. A cgo
// driver's C code is not instrumented either; memos' own code and every
// other dependency stay checked. (Leaving out modernc.org/libc as well
// saved a little more but made the detector report races in
// encoding/json's type cache in memos serve: keep the C library checked.)
var RaceBuildFlags = []string{"-race", "-gcflags=modernc.org/sqlite/lib=-race=false"}
