//go:build linux

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memos-go/memos/core"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory, or skips the
// test where mounting is not allowed (fails it under CI=true).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		msg := fmt.Sprintf("cannot mount a %d KiB tmpfs on %s (%v); the full-disk test needs root or CAP_SYS_ADMIN", size>>10, dir, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) }) // before TempDir removes dir
	return dir
}

// fillTo fills the file system of file, with file, until free bytes are left.
func fillTo(t *testing.T, file string, free int64) {
	t.Helper()
	os.Remove(file)
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(file), &st); err != nil {
		t.Fatal(err)
	}
	n := int64(st.Bavail)*st.Bsize - free
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for ; n > 0; n -= int64(len(buf)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), n)]); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}

// TestBinaryFullDisk runs the real memos binary on a 3 MiB tmpfs that is
// filled up step by step. The exit status must tell the truth about every
// write: an add that exits 0 is stored, one that exits non-zero is not
// (a script retries it, and must not store it twice). The read-only commands
// keep working while the disk is full, also when bolt's keyword index has
// to be rebuilt and there is no room for it.
func TestBinaryFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds memos and mounts a tmpfs")
	}
	mnt := mountTmpfs(t, 3<<20)
	bin := buildMemos(t)
	for _, backend := range []string{"sqlite", "bolt"} {
		t.Run(backend, func(t *testing.T) {
			home := filepath.Join(mnt, backend)
			e := newEnv(t)
			e.home = home
			e.environ = []string{"HOME=" + t.TempDir(), "MEMOS_HOME=" + home, "MEMOS_BACKEND=" + backend, "GORACE=atexit_sleep_ms=0"}
			memos := func(args ...string) result {
				cmd := exec.Command(bin, args...)
				cmd.Env = e.environ
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return result{ee.ExitCode(), out.String(), errb.String()}
				} else if err != nil {
					t.Fatalf("run memos: %v", err)
				}
				return result{0, out.String(), errb.String()}
			}
			// Enough memories that the vector snapshot (1 KiB a memory)
			// needs more room than a commit: the disk then fills up
			// between the commit and the snapshot.
			for i := range 150 {
				e.ok("add", fmt.Sprintf("seed note %d about the harbour", i))
			}
			// The read-only commands must keep working. (sqlite cannot
			// open its store with less than 32 KiB free: the -shm file,
			// which the last process to close removes, needs the room.)
			reads := func(when string, free int64) {
				for _, args := range [][]string{{"stats"}, {"search", "harbour"}, {"get", "1"}, {"pack", "harbour"}} {
					r := memos(args...)
					t.Logf("%s: %s: exit %d %s", when, args[0], r.code, strings.TrimSpace(r.stderr))
					if r.code != 0 && (backend == "bolt" || free >= 32<<10) {
						t.Errorf("%s, read-only `memos %s` exited %d: %s", when, strings.Join(args, " "), r.code, r.stderr)
					}
				}
			}
			filler := filepath.Join(mnt, "filler")
			var order []string
			exit := map[string]int{}
			// A commit on sqlite's 32 KiB pages needs a few hundred KiB of WAL.
			for _, free := range []int64{1 << 20, 512 << 10, 256 << 10, 128 << 10, 64 << 10, 32 << 10, 8 << 10, 0} {
				fillTo(t, filler, free)
				for k := range 2 {
					tok := fmt.Sprintf("tok%dk%d", free>>10, k)
					r := memos("add", "full disk note "+tok)
					order, exit[tok] = append(order, tok), r.code
					t.Logf("free %3d KiB: add %s: exit %d %s", free>>10, tok, r.code, strings.TrimSpace(r.stderr))
					if r.code != 0 && r.stderr == "" {
						t.Errorf("add %s failed with exit %d and no message", tok, r.code)
					}
				}
				reads(fmt.Sprintf("with %d KiB free", free>>10), free)
			}
			if backend == "bolt" {
				// An index that must be rebuilt (it fell behind, and a
				// rebuild failed for lack of room) on a full disk.
				if err := os.RemoveAll(filepath.Join(home, "memory.bolt", "keyword.bleve")); err != nil {
					t.Fatal(err)
				}
				fillTo(t, filler, 0)
				reads("with the disk full and the keyword index gone", 0)
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			stored, failed := 0, 0
			for _, tok := range order {
				var res core.SearchResult
				e.json(&res, "search", tok, "--mode", "keyword")
				found := len(res.Hits) == 1 && strings.Contains(res.Hits[0].Memory.Content, tok)
				switch {
				case exit[tok] == 0 && !found:
					t.Errorf("add %s exited 0, but the memory is not in the store", tok)
				case exit[tok] != 0 && found:
					t.Errorf("add %s exited %d, but the memory was stored (a retry would store it twice)", tok, exit[tok])
				case found:
					stored++
				default:
					failed++
				}
			}
			t.Logf("%d adds stored, %d failed", stored, failed)
			if stored == 0 {
				t.Error("no add succeeded on the filling disk; the test checks nothing")
			}
		})
	}
}
