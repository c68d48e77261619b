package postgres_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// privateCluster is a PostgreSQL cluster of its own in a temporary
// directory, listening on a Unix socket only, so that a test can stop and
// start it without disturbing the shared test database.
type privateCluster struct {
	t   *testing.T
	bin string
	dir string
}

// newPrivateCluster creates and starts a cluster, or skips the test when
// this machine cannot (it needs PostgreSQL's server binaries and, as root,
// the postgres user to run them).
func newPrivateCluster(t *testing.T) *privateCluster {
	t.Helper()
	testDSN(t) // the same requirement as every other postgres test
	bin := os.Getenv("MEMOS_TEST_PG_BIN")
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		t.Skipf("no initdb in %s (set MEMOS_TEST_PG_BIN to PostgreSQL's bin directory): %v", bin, err)
	}
	dir, err := os.MkdirTemp("", "memos-pg-restart-")
	if err != nil {
		t.Fatal(err)
	}
	c := &privateCluster{t: t, bin: bin, dir: dir}
	t.Cleanup(func() {
		c.pgctl("stop", "-m", "immediate")
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 { // initdb refuses to run as root
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root and there is no postgres user to run initdb: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	c.run(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-A", "trust", "-U", "memos", "--no-sync")
	c.pgctl("start")
	return c
}

func (c *privateCluster) run(name string, args ...string) {
	c.t.Helper()
	cmd := exec.Command(name, args...)
	if os.Geteuid() == 0 {
		q := name
		for _, a := range args {
			q += " '" + a + "'"
		}
		cmd = exec.Command("su", "postgres", "-s", "/bin/sh", "-c", q)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out)
	}
}

func (c *privateCluster) pgctl(action string, args ...string) {
	c.t.Helper()
	all := append([]string{"-D", filepath.Join(c.dir, "data"), "-w", "-l", filepath.Join(c.dir, "log"),
		"-o", "-c listen_addresses= -k " + c.dir + " -p 5433", action}, args...)
	c.run(filepath.Join(c.bin, "pg_ctl"), all...)
}

func (c *privateCluster) dsn() string {
	return fmt.Sprintf("host=%s port=5433 user=memos dbname=postgres", c.dir)
}

// TestRestartRecovers stops the database under an open engine: operations
// fail with "unavailable" (not a hang, not another error), and once the
// server is back they succeed again without reopening anything; every
// acknowledged write is still there.
func TestRestartRecovers(t *testing.T) {
	c := newPrivateCluster(t)
	ctx := context.Background()
	db, err := postgres.Open(ctx, postgres.Config{DSN: c.dsn()})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := core.Open(ctx, core.Options{Backend: db, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var acked []int64
	remember := func(s string) error {
		m, err := e.Remember(ctx, core.Input{Content: s})
		if err == nil {
			acked = append(acked, m.ID)
		}
		return err
	}
	for i := range 20 {
		if err := remember(fmt.Sprintf("written before the restart, number %d", i)); err != nil {
			t.Fatal(err)
		}
	}

	c.pgctl("stop", "-m", "fast")
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for name, op := range map[string]func() error{
		"remember": func() error { return remember("written while the server is down") },
		"search": func() error {
			_, err := e.Search(octx, core.SearchRequest{Query: "restart"})
			return err
		},
		"get": func() error {
			_, err := e.Get(octx, acked[0])
			return err
		},
	} {
		err := op()
		if k := core.KindOf(err).Name; k != "unavailable" {
			t.Errorf("%s while the server is down: %v (kind %q), want kind unavailable", name, err, k)
		}
	}

	c.pgctl("start")
	// The pool reconnects on its own; the first operations may still meet a
	// connection the server closed, which is unavailable too.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := remember("written after the restart")
		if err == nil {
			break
		}
		if k := core.KindOf(err).Name; k != "unavailable" {
			t.Fatalf("remember after the restart: %v (kind %q)", err, k)
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing 30s after the restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, id := range acked {
		if _, err := e.Get(ctx, id); err != nil {
			t.Errorf("acknowledged memory %d: %v", id, err)
		}
	}
	res, err := e.Search(ctx, core.SearchRequest{Query: "written after the restart", Mode: core.ModeKeyword})
	if err != nil || len(res.Hits) == 0 {
		t.Errorf("search after the restart: %v, %v", res, err)
	}
}
