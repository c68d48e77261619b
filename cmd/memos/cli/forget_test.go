package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
)

// envSnapshotReader makes the test binary a process that holds a read
// snapshot of the sqlite store it names until it reads a line on stdin.
const envSnapshotReader = "MEMOS_CLI_TEST_SNAPSHOT_READER"

func snapshotReader(path string) {
	d, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	in := bufio.NewReader(os.Stdin)
	err = d.View(context.Background(), func(tx core.ReadTx) error {
		if err := tx.Scan(core.ScanOptions{}, func(*core.Memory) error { return nil }); err != nil {
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
	os.Exit(0) // without Close, as a killed process
}

// filesWith lists the files under dir that contain s.
func filesWith(t *testing.T, dir, s string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(s)) {
			out = append(out, filepath.Base(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBinaryForgetWait forgets memories with the real memos binary while
// another process holds a read snapshot that still uses their pages. The
// certificate says the erasure is pending (and the bytes are indeed still
// in the files); `forget --wait` with too short a wait exits 7 with the
// certificate; `forget --wait` exits 0 once the reader ends, and then no
// file of the store holds any of the forgotten words.
func TestBinaryForgetWait(t *testing.T) {
	if path := os.Getenv(envSnapshotReader); path != "" {
		snapshotReader(path)
		return
	}
	if testing.Short() {
		t.Skip("builds memos and starts processes")
	}
	bin := buildMemos(t)
	e := newEnv(t)
	e.environ = append(e.environ, "GORACE=atexit_sleep_ms=0")
	words := []string{"qzvpendingalpha", "qzvtimeoutbravo", "qzvwaitedcharlie"}
	var ids []int64
	for i := range 40 {
		e.add(fmt.Sprintf("filler note %d about the orchard", i))
	}
	for _, w := range words {
		ids = append(ids, e.add("the locker code is "+w).ID)
	}
	e.ok("stats") // a close: the words are in memory.db, the WAL is gone
	if got := filesWith(t, e.home, words[0]); len(got) == 0 {
		t.Fatal("the words are not in the store's files; the test proves nothing")
	}

	rd := exec.Command(os.Args[0], "-test.run=^TestBinaryForgetWait$", "-test.count=1", "-test.v=false")
	rd.Env = append(os.Environ(), envSnapshotReader+"="+filepath.Join(e.home, "memory.db"))
	rd.Stderr = os.Stderr
	rin, err := rd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	rout, err := rd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rin.Close(); rd.Process.Kill(); rd.Wait() })
	rlines := bufio.NewScanner(rout)
	if !rlines.Scan() || rlines.Text() != "reading" {
		t.Fatalf("reader: %q %v", rlines.Text(), rlines.Err())
	}

	memos := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = e.environ
		return cmd
	}
	certOf := func(out []byte) core.DeletionCertificate {
		var c core.DeletionCertificate
		if err := json.Unmarshal(out, &c); err != nil {
			t.Fatalf("certificate does not parse: %v\n%s", err, out)
		}
		return c
	}

	// Without --wait: forgotten, erasure honestly pending.
	out, err := memos("forget", fmt.Sprint(ids[0]), "--json").Output()
	if err != nil {
		t.Fatalf("forget: %v", err)
	}
	if c := certOf(out); c.Erasure != core.ErasurePending || len(c.ErasurePending) == 0 || len(c.ErasureOutOfReach) != 0 {
		t.Errorf("certificate erasure = %q (pending %q, out of reach %q) while another process reads the old pages; want %q, saying what is pending", c.Erasure, c.ErasurePending, c.ErasureOutOfReach, core.ErasurePending)
	}
	if got := filesWith(t, e.home, words[0]); len(got) == 0 {
		t.Error("the forgotten word is gone although the reader holds its pages; the case proves nothing")
	}

	// --wait that runs out: the certificate, and exit 7.
	cmd := memos("forget", fmt.Sprint(ids[1]), "--wait=1s", "--json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("forget --wait=1s with the reader held: %v; want exit 7\n%s", err, stderr.String())
	}
	if c := certOf(out); c.Erasure != core.ErasurePending || c.MemoryID != ids[1] {
		t.Errorf("certificate after the wait ran out = %+v; want memory %d, erasure pending", c, ids[1])
	}
	if !strings.Contains(stderr.String(), "forgotten") || !strings.Contains(stderr.String(), "pending") {
		t.Errorf("stderr does not say the memory is forgotten with erasure pending: %s", stderr.String())
	}

	// --wait: ends the reader once forget waits, and succeeds.
	cmd = memos("forget", fmt.Sprint(ids[2]), "--wait")
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errLines := bufio.NewScanner(errPipe)
	var logged []string
	for errLines.Scan() {
		logged = append(logged, errLines.Text())
		if strings.Contains(errLines.Text(), "waiting for readers") {
			break
		}
	}
	if _, err := io.WriteString(rin, "end\n"); err != nil {
		t.Fatal(err)
	}
	if !rlines.Scan() || rlines.Text() != "ended" {
		t.Fatalf("reader: %q %v", rlines.Text(), rlines.Err())
	}
	go io.Copy(io.Discard, errPipe)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("forget --wait after the reader ended: %v\nstderr: %s", err, strings.Join(logged, "\n"))
	}
	if !strings.Contains(stdout.String(), "erasure") || !strings.Contains(stdout.String(), "complete") ||
		strings.Contains(stdout.String(), "pending") || !strings.Contains(stdout.String(), "checkpointed") {
		t.Errorf("forget --wait output does not say the erasure is complete, and what was done:\n%s", stdout.String())
	}
	for _, w := range words {
		if got := filesWith(t, e.home, w); len(got) > 0 {
			t.Errorf("after forget --wait succeeded, %v still contain %q", got, w)
		}
	}
	rin.Close()
}
