// Package testbin builds programs for tests that run them as real
// processes: plugins, the memos binary, helper hosts.
//
// A test compiled with -race builds its programs with -race too. The
// program's packages are then the ones `go test -race` already compiled for
// the test binary, found in the build cache, instead of a second, non-race
// compilation of every dependency: on a fresh clone that second compilation
// was the larger part of the embedders' and plugins' test time.
package testbin

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/core/longtest"
)

// Build compiles the main package pkg (a path or import path, resolved from
// the test's package directory) into t's temporary directory and returns
// the binary's path. It skips the test when no go command is on PATH and
// fails it when the build fails.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin, err := build(t.TempDir(), pkg)
	if errors.Is(err, errNoGo) {
		t.Skip("no go command on PATH to build " + pkg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// BuildIn is Build for a TestMain, which has no testing.TB: the binary goes
// to dir, and the error says what failed.
func BuildIn(dir, pkg string) (string, error) {
	return build(dir, pkg)
}

var errNoGo = errors.New("no go command on PATH")

func build(dir, pkg string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", errNoGo
	}
	name := filepath.Base(pkg)
	if name == "." || name == ".." {
		abs, err := filepath.Abs(pkg)
		if err != nil {
			return "", fmt.Errorf("build %s: %w", pkg, err)
		}
		name = filepath.Base(abs)
	}
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin}
	if longtest.Race {
		args = append(args, longtest.RaceBuildFlags...)
	}
	out, err := exec.Command(gobin, append(args, pkg)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}
