package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var testFiles = []File{
	{Name: "memos_v1_linux_amd64/memos", Data: []byte("\x7fELF binary"), Mode: 0o755},
	{Name: "memos_v1_linux_amd64/README.md", Data: []byte("# memos\n"), Mode: 0o644},
	{Name: "memos_v1_linux_amd64/LICENSE", Data: []byte("Apache License\n"), Mode: 0o644},
}

// TestArchives packs the same files twice, a second apart: the bytes are the
// same; the archives hold every file with its mode and the given date, and
// nothing of the machine (owner names).
func TestArchives(t *testing.T) {
	date := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, kind := range []string{"tar.gz", "zip"} {
		pack := func() []byte {
			var b bytes.Buffer
			var err error
			if kind == "zip" {
				err = Zip(&b, testFiles, date)
			} else {
				err = TarGz(&b, testFiles, date)
			}
			if err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}
		a := pack()
		time.Sleep(1100 * time.Millisecond)
		if b := pack(); !bytes.Equal(a, b) {
			t.Errorf("%s: two packs of the same files differ", kind)
		}
		got := map[string]File{}
		if kind == "zip" {
			zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				rc, _ := f.Open()
				data, _ := io.ReadAll(rc)
				rc.Close()
				if !f.Modified.Equal(date) {
					t.Errorf("zip %s dated %v", f.Name, f.Modified)
				}
				got[f.Name] = File{f.Name, data, int64(f.Mode().Perm())}
			}
		} else {
			zr, err := gzip.NewReader(bytes.NewReader(a))
			if err != nil {
				t.Fatal(err)
			}
			if zr.Name != "" || !zr.ModTime.IsZero() {
				t.Errorf("gzip header carries name %q, time %v", zr.Name, zr.ModTime)
			}
			tr := tar.NewReader(zr)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				data, _ := io.ReadAll(tr)
				if !h.ModTime.Equal(date) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
					t.Errorf("tar %s: time %v, owner %d/%d %q/%q", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname)
				}
				got[h.Name] = File{h.Name, data, h.Mode}
			}
		}
		for _, f := range testFiles {
			if g, ok := got[f.Name]; !ok || !bytes.Equal(g.Data, f.Data) || g.Mode != f.Mode {
				t.Errorf("%s: %s is %+v, want %+v", kind, f.Name, g, f)
			}
		}
		if len(got) != len(testFiles) {
			t.Errorf("%s holds %d files, want %d", kind, len(got), len(testFiles))
		}
	}
}

// TestChecksums: SHA256SUMS lists every archive, in name order, in the
// form sha256sum -c reads.
func TestChecksums(t *testing.T) {
	files := map[string][]byte{"b.zip": []byte("bee"), "a.tar.gz": []byte("ay")}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	want := sum("ay") + "  a.tar.gz\n" + sum("bee") + "  b.zip\n"
	if got := string(Checksums(files)); got != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", got, want)
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		dir := t.TempDir()
		for n, b := range files {
			os.WriteFile(filepath.Join(dir, n), b, 0o644)
		}
		os.WriteFile(filepath.Join(dir, "SHA256SUMS"), Checksums(files), 0o644)
		cmd := exec.Command("sha256sum", "-c", "SHA256SUMS")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum -c: %v\n%s", err, out)
		}
	}
}

// TestRelease (MEMOS_TEST_LONG=1; CI sets it) builds every target with the
// release settings, checks the archives against SHA256SUMS and runs the
// host's binary for its stamped version; then builds linux/amd64 again,
// into another directory with an empty build cache, and compares the bytes.
func TestRelease(t *testing.T) {
	if os.Getenv("MEMOS_TEST_LONG") == "" {
		t.Skip("builds every release target (minutes); set MEMOS_TEST_LONG=1")
	}
	ctx := context.Background()
	root, err := repoRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := Stamp{Version: "v0.0.0-test", Commit: "0123456789abcdef0123456789abcdef01234567", Date: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	targets := Targets
	if s := os.Getenv("MEMOS_RELEASE_TARGETS"); s != "" { // e.g. linux/amd64, to try the test quickly
		targets = strings.Split(s, ",")
	}
	out := t.TempDir()
	builds, err := Release(ctx, root, out, targets, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range builds {
		t.Logf("%-14s binary %9d bytes, archive %9d bytes", b.Target, b.BinarySize, b.ArchiveSize)
	}

	// SHA256SUMS covers every archive, and they match.
	f, err := os.Open(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := 0
	for sc := bufio.NewScanner(f); sc.Scan(); listed++ {
		sum, name, _ := strings.Cut(sc.Text(), "  ")
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			t.Errorf("%s does not match SHA256SUMS", name)
		}
	}
	if listed != len(targets) {
		t.Errorf("SHA256SUMS lists %d archives, want %d", listed, len(targets))
	}

	// The host's binary reports what was stamped, and runs without cgo.
	for _, b := range builds {
		if b.Target != runtime.GOOS+"/"+runtime.GOARCH {
			continue
		}
		outb, err := exec.Command(b.Binary, "version", "--json").Output()
		if err != nil {
			t.Fatalf("memos version: %v", err)
		}
		var v struct{ Version, Commit, Date string }
		json.Unmarshal(outb, &v)
		if v.Version != st.Version || v.Commit != st.Commit || v.Date != "2026-12-01T10:00:00Z" {
			t.Errorf("memos version --json: %s", outb)
		}
		// Built without charts: --plot is refused before any run.
		cmd := exec.Command(b.Binary, "bench", "--plot", filepath.Join(t.TempDir(), "x.svg"))
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "MEMOS_HOME="+t.TempDir())
		if outb, err := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(outb), "without charts") {
			t.Errorf("memos bench --plot in a release build: %v\n%s", err, outb)
		}
	}

	// Reproducible: again, elsewhere, from an empty cache.
	if runtime.GOOS != "linux" {
		return
	}
	first, err := os.ReadFile(filepath.Join(out, "memos_v0.0.0-test_linux_amd64", "memos"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "again", "memos")
	if err := Build(ctx, root, bin, "linux", "amd64", st, []string{"GOCACHE=" + t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("two builds of linux/amd64 differ (%d and %d bytes)", len(first), len(second))
	}
}
