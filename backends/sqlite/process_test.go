package sqlite

// Tests with several processes: the test binary re-executes itself with an
// environment variable that makes the named test act as a child process.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/longtest"
)

const (
	envCrashChild  = "MEMOS_SQLITE_TEST_CRASH_CHILD"  // path of the store to ingest into
	envWriterChild = "MEMOS_SQLITE_TEST_WRITER_CHILD" // path,name,go-file
)

// child starts the test binary running only test, with env set.
func child(t *testing.T, test string, env ...string) (*exec.Cmd, io.ReadCloser) {
	t.Helper()
	cmd := childCmd(test, env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// childCmd is the command child starts.
func childCmd(test string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestCrashAtomicity kills a process in the middle of ingesting (SIGKILL,
// no chance to clean up) and checks that the store it leaves behind is
// consistent: every memory has its keyword entry and version rows and vice
// versa. It repeats this a few times on the same store.
func TestCrashAtomicity(t *testing.T) {
	if path := os.Getenv(envCrashChild); path != "" {
		crashChild(path)
		return
	}
	longtest.Skip(t, "kills writer processes")
	path := filepath.Join(t.TempDir(), "memory.db")
	openDB(t, path).Close()
	total := 0
	for round := range 2 {
		cmd, out := child(t, "TestCrashAtomicity", envCrashChild+"="+path)
		// Wait until the child has committed a number of transactions, then
		// kill it wherever it is.
		lines := bufio.NewScanner(out)
		commits := 0
		for commits < 10 && lines.Scan() {
			if strings.HasPrefix(lines.Text(), "commit ") {
				commits++
			}
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Success() {
			t.Fatalf("round %d: child was not killed (%v); did it fail early? %d commits seen", round, err, commits)
		}
		if commits < 10 {
			t.Fatalf("round %d: child ended after %d commits", round, commits)
		}
		d := openDB(t, path)
		checkConsistent(t, d, -1)
		// Every transaction the child reported committed survived the kill.
		total += commits
		var n int
		if err := d.r.QueryRow(`SELECT count(*) FROM memories`).Scan(&n); err != nil || n < 9*total {
			t.Errorf("round %d: %d memories (%v) after %d reported commits; want at least %d", round, n, err, total, 9*total)
		}
		// A sample of memories: each one's unique token finds exactly it.
		err = d.View(context.Background(), func(tx driver.ReadTx) error {
			n := 0
			return tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
				if n++; n%37 != 0 {
					return nil
				}
				tok := strings.Fields(m.Content)[0]
				hits, err := d.SearchKeyword(context.Background(), mustParse(t, tok), driver.Filter{}, 5)
				if err != nil {
					return err
				}
				if len(hits) != 1 || hits[0].ID != m.ID {
					return fmt.Errorf("search for %s = %v, want memory %d", tok, hits, m.ID)
				}
				return nil
			})
		})
		if err != nil {
			t.Errorf("round %d: %v", round, err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// crashChild ingests until it is killed: batches of inserts, a new version,
// an edge and a delete per transaction, printing "commit N" after each.
func crashChild(path string) {
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: path})
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	pid := os.Getpid()
	deadline := time.Now().Add(time.Minute) // in case the parent is gone
	for i := 0; time.Now().Before(deadline); i++ {
		err := d.Update(ctx, func(tx driver.Tx) error {
			var ids []int64
			for j := range 10 {
				m := newMem(fmt.Sprintf("p%dt%dm%d is a memory written by process %d in transaction %d %s",
					pid, i, j, pid, i, strings.Repeat("with padding ", j)))
				m.Embedding = driver.Embedding{Model: "crash", Vector: []float32{float32(i), float32(j), 1}}
				if err := tx.Insert(m); err != nil {
					return err
				}
				ids = append(ids, m.ID)
			}
			cur, err := tx.Get(ids[0], 0)
			if err != nil {
				return err
			}
			cur.Version++
			cur.Content = strings.Replace(cur.Content, "memory written", "memory rewritten", 1)
			if err := tx.Put(cur); err != nil {
				return err
			}
			if err := tx.Link(driver.Edge{From: ids[1], To: ids[2], Type: driver.EdgeSupports, Weight: 1, CreatedAt: t0}); err != nil {
				return err
			}
			return tx.Delete(ids[3])
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(2)
		}
		fmt.Println("commit", i)
	}
	os.Exit(3)
}

// TestMultiProcessWriters runs two processes that write to one store at the
// same time: both must succeed (writers wait for each other) and no write
// may be lost.
func TestMultiProcessWriters(t *testing.T) {
	if spec := os.Getenv(envWriterChild); spec != "" {
		writerChild(spec)
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.db")
	goFile := filepath.Join(dir, "go")
	openDB(t, path).Close()
	const txs, per = 60, 5
	var cmds []*exec.Cmd
	for _, name := range []string{"alpha", "beta"} {
		cmd, out := child(t, "TestMultiProcessWriters", fmt.Sprintf("%s=%s,%s,%s", envWriterChild, path, name, goFile))
		go io.Copy(io.Discard, out)
		cmds = append(cmds, cmd)
	}
	// Both children start writing when the go file appears.
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	d := openDB(t, path)
	defer d.Close()
	checkConsistent(t, d, 2*txs*per)
	for _, name := range []string{"alpha", "beta"} {
		var n int
		if err := d.r.QueryRow(`SELECT count(*) FROM memories WHERE source = ?`, name).Scan(&n); err != nil || n != txs*per {
			t.Errorf("writer %s: %d memories (%v), want %d", name, n, err, txs*per)
		}
	}
}

func writerChild(spec string) {
	parts := strings.Split(spec, ",")
	path, name, goFile := parts[0], parts[1], parts[2]
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "writer %s: %v\n", name, err)
		os.Exit(2)
	}
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: path})
	if err != nil {
		fail(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(goFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fail(errors.New("no go signal"))
		}
	}
	for i := range 60 {
		err := d.Update(ctx, func(tx driver.Tx) error {
			for j := range 5 {
				m := newMem(name + " memory " + strconv.Itoa(i) + "." + strconv.Itoa(j))
				m.Source = name
				if err := tx.Insert(m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			fail(err)
		}
	}
	if err := d.Close(); err != nil {
		fail(err)
	}
	os.Exit(0)
}
