package postgres_test

// Tests with several processes on one database: the test binary re-executes
// itself with an environment variable that makes the named test act as a
// child process.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

const (
	envEngineChild = "MEMOS_PG_TEST_ENGINE_CHILD" // dsn \x1f schema
	envWriterChild = "MEMOS_PG_TEST_WRITER_CHILD" // dsn \x1f schema \x1f name
)

// proc is a child process driven line by line: a command on its stdin,
// one JSON line back on its stdout.
type proc struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startChild(t *testing.T, test string, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
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
	p := &proc{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	p.out.Buffer(make([]byte, 1<<20), 16<<20)
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("child %s: %v", test, err)
			}
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			t.Errorf("child %s did not exit", test)
		}
	})
	return p
}

// do sends a command and decodes the answer into v.
func (p *proc) do(v any, cmd string, args ...any) {
	p.t.Helper()
	b, _ := json.Marshal(append([]any{cmd}, args...))
	if _, err := fmt.Fprintf(p.in, "%s\n", b); err != nil {
		p.t.Fatalf("%s: %v", cmd, err)
	}
	if !p.out.Scan() {
		p.t.Fatalf("%s: the child ended (%v)", cmd, p.out.Err())
	}
	var reply struct {
		Err string          `json:"err"`
		Val json.RawMessage `json:"val"`
	}
	if err := json.Unmarshal(p.out.Bytes(), &reply); err != nil {
		p.t.Fatalf("%s: reply %q: %v", cmd, p.out.Text(), err)
	}
	if reply.Err != "" {
		p.t.Fatalf("%s %v: %s", cmd, args, reply.Err)
	}
	if v != nil {
		if err := json.Unmarshal(reply.Val, v); err != nil {
			p.t.Fatalf("%s: %v", cmd, err)
		}
	}
}

var fixedNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// engineChild serves commands over an engine on the postgres store.
func engineChild(spec string) {
	parts := strings.Split(spec, "\x1f")
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "engine child:", err)
		os.Exit(2)
	}
	db, err := postgres.Open(ctx, postgres.Config{DSN: parts[0], Schema: parts[1]})
	if err != nil {
		fail(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		fail(err)
	}
	e, err := core.Open(ctx, core.Options{Backend: db, Embedder: emb, Now: func() time.Time { return fixedNow }})
	if err != nil {
		fail(err)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	for in.Scan() {
		var args []json.RawMessage
		if err := json.Unmarshal(in.Bytes(), &args); err != nil {
			fail(err)
		}
		var cmd, s string
		var id int64
		json.Unmarshal(args[0], &cmd)
		var val any
		switch cmd {
		case "add":
			json.Unmarshal(args[1], &s)
			var m *core.Memory
			if m, err = e.Remember(ctx, core.Input{Content: s, Source: "test"}); err == nil {
				val = m.ID
			}
		case "update":
			json.Unmarshal(args[1], &id)
			json.Unmarshal(args[2], &s)
			var m *core.Memory
			if m, err = e.Update(ctx, id, core.Patch{Content: &s}); err == nil {
				val = m.Version
			}
		case "forget":
			json.Unmarshal(args[1], &id)
			_, err = e.Forget(ctx, id, "test")
		case "vector", "keyword":
			json.Unmarshal(args[1], &s)
			var res *core.SearchResult
			if res, err = e.Search(ctx, core.SearchRequest{Query: s, Mode: core.Mode(cmd), Limit: 5, NoExpand: true}); err == nil {
				ids := []int64{}
				for _, h := range res.Hits {
					ids = append(ids, h.Memory.ID)
				}
				val = ids
			}
		case "pack":
			json.Unmarshal(args[1], &s)
			var pk *core.Pack
			if pk, err = e.ContextPack(ctx, core.PackRequest{Query: s, Budget: 400}); err == nil {
				var j []byte
				j, err = pk.JSON()
				val = string(j) + pk.Markdown()
			}
		default:
			err = fmt.Errorf("unknown command %q", cmd)
		}
		reply := map[string]any{"val": val}
		if err != nil {
			reply = map[string]any{"err": err.Error()}
		}
		b, _ := json.Marshal(reply)
		fmt.Printf("%s\n", b)
	}
	if err := e.Close(); err != nil {
		fail(err)
	}
	os.Exit(0)
}

// TestTwoEnginesInTwoProcesses runs an engine in each of two processes on
// one database: writes, updates and forgets through either are seen by the
// other at its next search, by keyword and by vector (the change log keeps
// each process's in-memory vector index current), and both build the same
// pack byte for byte.
func TestTwoEnginesInTwoProcesses(t *testing.T) {
	if spec := os.Getenv(envEngineChild); spec != "" {
		engineChild(spec)
		return
	}
	dsn := testDSN(t)
	schema := schemaFor(t, dsn, t.Name())
	env := envEngineChild + "=" + dsn + "\x1f" + schema
	a := startChild(t, "TestTwoEnginesInTwoProcesses", env)
	b := startChild(t, "TestTwoEnginesInTwoProcesses", env)

	var ids []int64
	texts := []string{
		"the staging cluster runs on three Proxmox nodes",
		"Alice prefers open-source tools for backups",
		"the backup target is a Synology NAS in the basement",
		"Bob drinks his coffee black every morning",
	}
	for i, s := range texts {
		w, r := a, b
		if i%2 == 1 {
			w, r = b, a
		}
		var id int64
		w.do(&id, "add", s)
		ids = append(ids, id)
		// The other process finds it at once, by vector and by keyword.
		var got []int64
		r.do(&got, "vector", s)
		if len(got) == 0 || got[0] != id {
			t.Errorf("vector search in the other process for memory %d (%q) = %v", id, s, got)
		}
		r.do(&got, "keyword", strings.Fields(s)[1])
		if !contains(got, id) {
			t.Errorf("keyword search in the other process for memory %d = %v", id, got)
		}
	}
	// An update through b replaces the vector a searches.
	newText := "the staging cluster moved to Kubernetes on bare metal"
	var v int
	b.do(&v, "update", ids[0], newText)
	var got []int64
	a.do(&got, "vector", newText)
	if len(got) == 0 || got[0] != ids[0] {
		t.Errorf("after b updated memory %d, a's vector search = %v", ids[0], got)
	}
	a.do(&got, "keyword", "proxmox")
	if contains(got, ids[0]) {
		t.Errorf("after b updated memory %d, a's keyword search still finds its old words: %v", ids[0], got)
	}
	// A forget through a removes it from b's vector index.
	a.do(nil, "forget", ids[3])
	b.do(&got, "vector", texts[3])
	if contains(got, ids[3]) {
		t.Errorf("after a forgot memory %d, b's vector search = %v", ids[3], got)
	}
	// Packs are the same from both processes.
	for _, q := range []string{"what backs up the cluster", "alice tools"} {
		var pa, pb string
		a.do(&pa, "pack", q)
		b.do(&pb, "pack", q)
		if pa != pb {
			t.Errorf("pack %q differs between the processes:\n--- a\n%s\n--- b\n%s", q, pa, pb)
		}
	}
}

func contains(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TestConcurrentWritersInFourProcesses has four processes write 1,000
// memories each, at the same time, through engines on one database: every
// write succeeds (serialization failures and deadlocks are retried inside
// the backend) and none is lost.
func TestConcurrentWritersInFourProcesses(t *testing.T) {
	if spec := os.Getenv(envWriterChild); spec != "" {
		writerChild(spec)
		return
	}
	dsn := testDSN(t)
	schema := schemaFor(t, dsn, t.Name())
	// Create the schema once, so that the children race on writes only.
	db, err := postgres.Open(context.Background(), postgres.Config{DSN: dsn, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const procs, per = 4, 1000
	var wg sync.WaitGroup
	for i := range procs {
		name := "w" + strconv.Itoa(i)
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentWritersInFourProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), envWriterChild+"="+dsn+"\x1f"+schema+"\x1f"+name+"\x1f"+strconv.Itoa(per))
		wg.Go(func() {
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("writer %s: %v\n%s", name, err, out)
			}
		})
	}
	wg.Wait()
	emb, err := hash.Open(context.Background(), hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := core.Open(context.Background(), core.Options{Backend: db, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close() // before db.Close (deferred above), which then reports ErrClosed
	st, err := e.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories != procs*per {
		t.Errorf("%d memories after %d processes wrote %d each; want %d", st.Memories, procs, per, procs*per)
	}
	for i := range procs {
		res, err := e.Search(context.Background(), core.SearchRequest{Query: fmt.Sprintf("w%d", i), Mode: core.ModeKeyword, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != per {
			t.Errorf("writer w%d: %d memories found, want %d", i, len(res.Hits), per)
		}
	}
}

// writerChild writes its memories concurrently from several goroutines.
func writerChild(spec string) {
	parts := strings.Split(spec, "\x1f")
	name := parts[2]
	n, _ := strconv.Atoi(parts[3])
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "writer %s: %v\n", name, err)
		os.Exit(2)
	}
	db, err := postgres.Open(ctx, postgres.Config{DSN: parts[0], Schema: parts[1]})
	if err != nil {
		fail(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		fail(err)
	}
	e, err := core.Open(ctx, core.Options{Backend: db, Embedder: emb})
	if err != nil {
		fail(err)
	}
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if _, err := e.Remember(ctx, core.Input{Content: fmt.Sprintf("%s wrote memory number %d", name, i), Source: name}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		fail(err)
	}
	if err := e.Close(); err != nil {
		fail(err)
	}
	os.Exit(0)
}
