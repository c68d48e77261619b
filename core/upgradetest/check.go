package upgradetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// Dir is the directory of the fixtures.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

// Gunzip writes the decompressed fixture file name to dst.
func Gunzip(t testing.TB, name, dst string) {
	t.Helper()
	b := readGzip(t, name)
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readGzip(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Check opens the fixture store with open (after the caller restored it)
// and compares its answers and reverts with what the release that wrote it
// answered (the fixture files <prefix>-answers.json.gz and
// <prefix>-revert.json.gz).
func Check(t *testing.T, prefix string, open func() (driver.Backend, error)) {
	t.Helper()
	ctx := context.Background()
	b, err := open()
	if err != nil {
		t.Fatalf("open the %s fixture: %v", prefix, err)
	}
	e, err := Open(ctx, b, NewClock(Start), false)
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	defer e.Close()
	got, err := Answers(ctx, b, e, MaxID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, prefix+"-answers.json", got, readGzip(t, prefix+"-answers.json.gz"))
	got, err = Revert(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	same(t, prefix+"-revert.json", got, readGzip(t, prefix+"-revert.json.gz"))
}

// same reports the first line where got differs from want.
func same(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			lo := max(0, i-8)
			t.Errorf("%s differs from the old release's answer at line %d:\n got: %s\nwant: %s\ncontext (want):\n%s",
				what, i+1, g, w, strings.Join(wl[lo:min(len(wl), i+1)], "\n"))
			return
		}
	}
}
