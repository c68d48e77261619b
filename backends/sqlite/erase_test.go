package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// envReaderChild names the store a reader child process opens: it begins a
// read transaction, reads every memory, prints "reading", and ends the
// transaction when it reads a line on stdin; it then prints "ended" and
// exits, without closing the store, when stdin closes.
const envReaderChild = "MEMOS_SQLITE_TEST_READER_CHILD"

func readerChild(path string) {
	d, err := Open(context.Background(), Config{Path: path})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	in := bufio.NewReader(os.Stdin)
	err = d.View(context.Background(), func(tx driver.ReadTx) error {
		if err := tx.Scan(driver.ScanOptions{}, func(*driver.Memory) error { return nil }); err != nil {
			return err
		}
		fmt.Println("reading")
		_, err := in.ReadString('\n')
		return err
	})
	if err != nil {
		fmt.Println("view:", err)
		os.Exit(1)
	}
	fmt.Println("ended")
	io.Copy(io.Discard, in)
	os.Exit(0) // as a process that is killed or exits without Close
}

// reader is a reader child process holding a snapshot of a store.
type reader struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines *bufio.Scanner
}

// newReader starts a reader child on path and waits until it holds its
// snapshot.
func newReader(t *testing.T, path string) *reader {
	t.Helper()
	cmd := childCmd("TestEraseWithReaderInAnotherProcess", envReaderChild+"="+path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &reader{cmd: cmd, in: in, lines: bufio.NewScanner(out)}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	r.expect(t, "reading")
	return r
}

func (r *reader) expect(t *testing.T, line string) {
	t.Helper()
	if !r.lines.Scan() || r.lines.Text() != line {
		t.Fatalf("reader process: got %q (%v), want %q", r.lines.Text(), r.lines.Err(), line)
	}
}

// end ends the reader's snapshot.
func (r *reader) end(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(r.in, "end\n"); err != nil {
		t.Fatal(err)
	}
	r.expect(t, "ended")
}

// exit ends the reader process, which does not close the store.
func (r *reader) exit(t *testing.T) {
	t.Helper()
	r.in.Close()
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("reader process: %v", err)
	}
}

// containing lists the files of the store at path that contain s.
func containing(t *testing.T, path, s string) []string {
	t.Helper()
	var out []string
	for name, b := range storeFiles(t, path) {
		if bytes.Contains(b, []byte(s)) {
			out = append(out, name)
		}
	}
	return out
}

// TestEraseWithReaderInAnotherProcess forgets a memory while another
// process holds a read snapshot that still needs its pages: the erasure is
// pending (Erase says so) and the bytes are still in the files; it
// completes by Erase with a wait once the reader ends (forget --wait), and,
// when the forgetting process has closed before that, by the next Open.
func TestEraseWithReaderInAnotherProcess(t *testing.T) {
	if path := os.Getenv(envReaderChild); path != "" {
		readerChild(path)
		return
	}
	for _, finish := range []string{"EraseWait", "NextOpen"} {
		t.Run(finish, func(t *testing.T) {
			const word = "zqxjkvpendingword"
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "memory.db")
			d := openDB(t, path)
			var filler []*driver.Memory
			for i := range 100 {
				filler = append(filler, newMem(fmt.Sprintf("filler note %d about tides", i)))
			}
			insert(t, d, filler...)
			m := newMem("the secret word is " + word)
			insert(t, d, m)
			if err := d.Close(); err != nil { // checkpoints: the secret is in memory.db
				t.Fatal(err)
			}
			d = openDB(t, path)
			defer func() { d.Close() }()

			r := newReader(t, path)
			update(t, d, func(tx driver.Tx) error { return tx.Delete(m.ID) })
			if done, err := d.Erase(ctx, 0); err != nil || done {
				t.Fatalf("Erase while another process reads the old pages = %v, %v; want pending", done, err)
			}
			if got := containing(t, path, word); len(got) == 0 {
				t.Fatal("the deleted word is not in the files while the reader holds them; the test proves nothing")
			}
			switch finish {
			case "EraseWait":
				r.end(t)
				ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				if done, err := d.Erase(ctx, 10*time.Second); err != nil || !done {
					t.Fatalf("Erase after the reader ended = %v, %v; want done", done, err)
				}
				if got := containing(t, path, word); len(got) > 0 {
					t.Errorf("Erase reported done, but %v still contain the deleted word", got)
				}
				r.exit(t)
			case "NextOpen":
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
				r.end(t)
				r.exit(t) // without closing: no checkpoint of its own
				if got := containing(t, path, word); len(got) == 0 {
					t.Fatal("the word is gone before the next open; the case proves nothing")
				}
				d = openDB(t, path)
				if got := containing(t, path, word); len(got) > 0 {
					t.Errorf("after the next Open, %v still contain the deleted word", got)
				}
				hits, err := d.SearchKeyword(ctx, mustParse(t, "tides"), driver.Filter{}, 1000)
				if err != nil || len(hits) != len(filler) {
					t.Errorf("the other memories after the erasure: %d hits, %v; want %d", len(hits), err, len(filler))
				}
			}
		})
	}
}
