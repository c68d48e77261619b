//go:build linux

package multihost

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The cluster's addresses: one /24 on a bridge of its own, so that runs at
// the same time (each with its own bridge) do not meet.
const (
	subnet     = "10.213.0.%d"
	pgOctet    = 2
	hostOctet  = 11 // serve host i (0-based) is .11+i
	clientOcts = 100
	servePort  = 7077
	pgPort     = 5432
	proxyPort  = 5433
)

// Tokens every host accepts: admin may do anything, alice only
// project:alice (and read default).
const (
	adminToken = "admin-token-0123456789abcdef"
	aliceToken = "alice-token-0123456789abcdef"
	aliceNS    = "project:alice"
)

// namePrefix starts every namespace, bridge and veth a run makes; the
// process id follows, so a later run can tell a killed run's leftovers
// (its process is gone) from a run still going on.
const namePrefix = "mh"

var leftoverRE = regexp.MustCompile(`^` + namePrefix + `(\d+)`)

// options shape a cluster.
type options struct {
	hosts int           // serve hosts (default 3)
	proxy bool          // the serve hosts reach PostgreSQL through a proxy that counts and delays
	delay time.Duration // the proxy's one-way delay
	pin   bool          // pin serve host i to CPU i mod NumCPU, with GOMAXPROCS=1
	conns int           // backends.postgres.max_conns (0: the default)
	stats string        // load pg_stat_statements, and log to this file (see logStatements)
	flush string        // search.access_flush ("": the default)
}

// cluster is one PostgreSQL host, the serve hosts and a client host, each in
// a network namespace of its own.
type cluster struct {
	t      testing.TB
	opts   options
	id     string // namePrefix + pid
	dir    string
	bin    string // the memos binary
	pgBin  string
	pgNS   string
	client string // the client host's namespace
	hosts  []*host
	http   *http.Client
	proxy  net.Listener
	trips  atomic.Int64 // chunks the proxy forwarded from a serve host to PostgreSQL
}

// host is one `memos serve` process in its namespace.
type host struct {
	c     *cluster
	i     int
	ns    string
	addr  string // ip:port
	home  string
	cpu   int // -1: not pinned
	mu    sync.Mutex
	cmd   *exec.Cmd
	done  chan struct{}
	err   error
	log   bytes.Buffer
	proxy bool
}

// unavailable skips t with why, or fails it under CI=true (where .ci/run
// runs these tests as root, so a skip would mean they were lost).
func unavailable(t testing.TB, why string) {
	t.Helper()
	msg := "multi-host tests need Linux network namespaces: " + why +
		" (run as root on Linux with iproute2 and PostgreSQL 15's server binaries, e.g. sudo go test ./cmd/memos/internal/multihost/)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI runs them as root (.ci/run), so this must not skip there")
	}
	t.Skip(msg)
}

// run runs a command and returns its combined output, failing with it.
func run(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// newCluster builds the namespaces, starts PostgreSQL and the serve hosts,
// and registers their removal (also when the test fails) with t.Cleanup.
func newCluster(t testing.TB, opts options) *cluster {
	t.Helper()
	if opts.hosts == 0 {
		opts.hosts = 3
	}
	if os.Geteuid() != 0 {
		unavailable(t, "not running as root")
	}
	for _, tool := range []string{"ip", "su"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable(t, "no "+tool+" command")
		}
	}
	pgBin := os.Getenv("MEMOS_TEST_PG_BIN")
	if pgBin == "" {
		pgBin = "/usr/lib/postgresql/15/bin"
	}
	if _, err := os.Stat(filepath.Join(pgBin, "initdb")); err != nil {
		unavailable(t, fmt.Sprintf("no initdb in %s (set MEMOS_TEST_PG_BIN to PostgreSQL's bin directory)", pgBin))
	}
	pgUser, err := user.Lookup("postgres")
	if err != nil {
		unavailable(t, "no postgres user to run PostgreSQL as")
	}
	removeLeftovers(t)

	c := &cluster{t: t, opts: opts, id: namePrefix + strconv.Itoa(os.Getpid()), pgBin: pgBin}
	c.pgNS, c.client = c.id+"-pg", c.id+"-client"
	if c.dir, err = os.MkdirTemp("", "memos-multihost-"+c.id+"-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.remove)
	// The bridge first, so that a failure to make it skips before anything
	// else exists.
	// Bridged frames skip the host's iptables where the kernel lets a
	// bridge say so: a host firewall is no part of the test.
	if _, err := run("ip", "link", "add", c.id+"br", "type", "bridge", "nf_call_iptables", "0"); err != nil {
		if out, err := run("ip", "link", "add", c.id+"br", "type", "bridge"); err != nil {
			unavailable(t, "cannot create a bridge: "+strings.TrimSpace(out))
		}
	}
	if _, err := run("ip", "link", "set", c.id+"br", "up"); err != nil {
		t.Fatal(err)
	}
	c.node(t, c.pgNS, "pg", pgOctet)
	c.node(t, c.client, "cl", clientOcts)
	c.http = &http.Client{Transport: &http.Transport{
		DialContext:         c.dialer(c.client),
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
	}}

	c.bin = buildMemos(t, c.dir)
	c.startPostgres(t, pgUser)
	if opts.proxy {
		c.startProxy(t)
	}
	for i := range opts.hosts {
		h := &host{c: c, i: i, ns: fmt.Sprintf("%s-s%d", c.id, i+1), addr: fmt.Sprintf(subnet+":%d", hostOctet+i, servePort),
			home: filepath.Join(c.dir, fmt.Sprintf("s%d", i+1)), cpu: -1, proxy: opts.proxy}
		if opts.pin {
			h.cpu = i % runtime.NumCPU()
		}
		c.node(t, h.ns, fmt.Sprintf("s%d", i+1), hostOctet+i)
		h.writeConfig(t)
		c.hosts = append(c.hosts, h)
	}
	// All at once: the first open of the schema is itself a race the
	// backend must win once (migrations under an advisory lock).
	var wg sync.WaitGroup
	for _, h := range c.hosts {
		wg.Go(func() { h.start() })
	}
	wg.Wait()
	for _, h := range c.hosts {
		if err := h.waitReady(2 * time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// node makes namespace ns with a veth pair whose outer end is on the
// bridge and whose inner end has 10.213.0.<octet>.
func (c *cluster) node(t testing.TB, ns, short string, octet int) {
	t.Helper()
	outer, inner := c.id+short, c.id+short+"p"
	for _, args := range [][]string{
		{"netns", "add", ns},
		{"link", "add", outer, "type", "veth", "peer", "name", inner},
		{"link", "set", inner, "netns", ns},
		{"link", "set", outer, "master", c.id + "br"},
		{"link", "set", outer, "up"},
		{"-n", ns, "addr", "add", fmt.Sprintf(subnet+"/24", octet), "dev", inner},
		{"-n", ns, "link", "set", inner, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
	} {
		if out, err := run("ip", args...); err != nil {
			if args[0] == "netns" {
				unavailable(t, "cannot create a network namespace: "+strings.TrimSpace(out))
			}
			t.Fatal(err)
		}
	}
}

// remove stops every process the cluster started and deletes its
// namespaces, bridge and files.
func (c *cluster) remove() {
	if c.proxy != nil {
		c.proxy.Close()
	}
	for _, h := range c.hosts {
		h.kill()
	}
	if _, err := os.Stat(filepath.Join(c.dir, "pgdata", "postmaster.pid")); err == nil {
		c.pgctl("stop", "-m", "immediate")
	}
	if c.t.Failed() {
		for _, h := range c.hosts {
			c.t.Logf("host %d (%s) log, last lines:\n%s", h.i+1, h.addr, tail(h.logText(), 30))
		}
		if b, err := os.ReadFile(filepath.Join(c.dir, "pg.log")); err == nil {
			c.t.Logf("postgres log, last lines:\n%s", tail(string(b), 30))
		}
	}
	removeObjects(c.id)
	os.RemoveAll(c.dir)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// removeObjects deletes the namespaces and bridge named after id, ending
// the processes still in those namespaces first.
func removeObjects(id string) {
	out, _ := run("ip", "netns", "list")
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], id+"-") {
			continue
		}
		pids, _ := run("ip", "netns", "pids", f[0])
		for _, p := range strings.Fields(pids) {
			if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		run("ip", "netns", "del", f[0]) // deleting it deletes its veth pair
	}
	// Links a killed run made but had not yet moved into a namespace.
	out, _ = run("ip", "-o", "link", "show")
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if m := leftoverRE.FindStringSubmatch(name); m != nil && namePrefix+m[1] == id {
			run("ip", "link", "del", name)
		}
	}
}

// removeLeftovers removes what an earlier run killed before its cleanup
// left behind: objects and directories whose run's process is gone.
func removeLeftovers(t testing.TB) {
	dead := map[string]bool{}
	check := func(name string) {
		m := leftoverRE.FindStringSubmatch(name)
		if m == nil {
			return
		}
		if err := syscall.Kill(mustAtoi(m[1]), 0); errors.Is(err, syscall.ESRCH) {
			dead[namePrefix+m[1]] = true
		}
	}
	out, _ := run("ip", "netns", "list")
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 0 {
			check(f[0])
		}
	}
	out, _ = run("ip", "-o", "link", "show", "type", "bridge")
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 1 {
			check(strings.TrimSuffix(f[1], ":"))
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "memos-multihost-"+namePrefix+"*"))
	for _, d := range dirs {
		if m := leftoverRE.FindStringSubmatch(strings.TrimPrefix(filepath.Base(d), "memos-multihost-")); m != nil {
			if err := syscall.Kill(mustAtoi(m[1]), 0); errors.Is(err, syscall.ESRCH) {
				os.RemoveAll(d)
			}
		}
	}
	for id := range dead {
		t.Logf("removing the leftovers of an earlier run (%s*)", id)
		removeObjects(id)
	}
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// The main goroutine keeps the main thread, so that inNetns never enters a
// namespace on it: Go parks a locked main thread instead of ending it, and
// the process would then show (in /proc, to ip netns pids) as being in
// that namespace.
func init() { runtime.LockOSThread() }

// inNetns runs fn on an OS thread that has entered namespace ns. The thread
// is never unlocked, so it ends with the goroutine and takes the namespace
// change with it; sockets fn creates stay in ns.
func inNetns(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == os.Getpid() {
			errc <- fmt.Errorf("enter network namespace %s: refusing to move the main thread", ns)
			return
		}
		f, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter network namespace %s: %w", ns, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// dialer dials from namespace ns: the client host's sockets live there.
func (c *cluster) dialer(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var conn net.Conn
		err := inNetns(ns, func() (err error) {
			conn, err = (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
			return err
		})
		return conn, err
	}
}

// buildMemos builds the memos binary with the release build's flags
// (cmd/memos/release), so that CI reuses the packages its release step
// compiled.
func buildMemos(t testing.TB, dir string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		unavailable(t, "no go command on PATH to build the memos binary")
	}
	bin := filepath.Join(dir, "memos")
	cmd := exec.Command(gobin, "build", "-tags", "noplot", "-trimpath", "-buildvcs=false", "-o", bin, "../..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// asPostgres runs a command line in the PostgreSQL host's namespace as the
// postgres user (initdb and the server refuse to run as root).
func (c *cluster) asPostgres(line string) error {
	_, err := run("ip", "netns", "exec", c.pgNS, "su", "postgres", "-s", "/bin/sh", "-c", line)
	return err
}

// startPostgres creates a throwaway cluster in c.dir and starts it in the
// PostgreSQL host's namespace, listening on its address (and on loopback
// there, for the delay proxy).
func (c *cluster) startPostgres(t testing.TB, u *user.User) {
	t.Helper()
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(c.dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	os.Chmod(c.dir, 0o755) // the serve hosts' homes live here too
	data := filepath.Join(c.dir, "pgdata")
	if err := c.asPostgres(fmt.Sprintf("%s -D %s -A trust -U memos --no-sync >/dev/null",
		filepath.Join(c.pgBin, "initdb"), data)); err != nil {
		t.Fatal(err)
	}
	hba, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// From the other hosts, TLS only: the serve hosts verify the server's
	// certificate (sslmode=verify-full) against the test's own CA.
	fmt.Fprintf(hba, "hostssl all memos "+subnet+"/24 trust\n", 0)
	hba.Close()
	if err := writeCerts(c.dir, data, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := c.pgctl("start"); err != nil {
		t.Fatal(err)
	}
	if c.opts.stats != "" {
		if _, err := c.psql("CREATE EXTENSION pg_stat_statements; CREATE EXTENSION pgstattuple"); err != nil {
			t.Fatal(err)
		}
	}
}

// psql runs sql on the cluster's server through its socket and returns
// psql's unaligned output.
func (c *cluster) psql(sql string) (string, error) {
	return run("ip", "netns", "exec", c.pgNS, "su", "postgres", "-s", "/bin/sh", "-c",
		fmt.Sprintf("%s -X -q -A -F ' | ' -h %s -p %d -U memos -d postgres -c %s",
			filepath.Join(c.pgBin, "psql"), c.dir, pgPort, shellQuote(sql)))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeCerts makes a CA (dir/ca.crt) and a server certificate for the
// PostgreSQL host's address signed by it (data/server.crt and server.key,
// owned by the postgres user, as the server requires).
func writeCerts(dir, data string, uid, gid int) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "memos multihost test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	srv := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "postgres"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP(fmt.Sprintf(subnet, pgOctet))}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		path, typ string
		der       []byte
		mode      os.FileMode
	}{
		{filepath.Join(dir, "ca.crt"), "CERTIFICATE", caDER, 0o644},
		{filepath.Join(data, "server.crt"), "CERTIFICATE", srvDER, 0o644},
		{filepath.Join(data, "server.key"), "EC PRIVATE KEY", keyDER, 0o600},
	} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), f.mode); err != nil {
			return err
		}
		if err := os.Chown(f.path, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// pgctl runs pg_ctl on the cluster's server.
func (c *cluster) pgctl(action string, args ...string) error {
	extra := ""
	if c.opts.stats != "" {
		extra = " -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on"
	}
	line := fmt.Sprintf("%s -D %s -w -t 60 -l %s -o \"-c listen_addresses=%s,127.0.0.1 -k %s -p %d -c max_connections=200 -c ssl=on%s\" %s %s",
		filepath.Join(c.pgBin, "pg_ctl"), filepath.Join(c.dir, "pgdata"), filepath.Join(c.dir, "pg.log"),
		fmt.Sprintf(subnet, pgOctet), c.dir, pgPort, extra, action, strings.Join(args, " "))
	return c.asPostgres(line)
}

// restartPostgres stops the server (fast: connections are cut, open
// transactions roll back), leaves it down for down, and starts it again.
func (c *cluster) restartPostgres(down time.Duration) error {
	if err := c.pgctl("stop", "-m", "fast"); err != nil {
		return err
	}
	time.Sleep(down)
	return c.pgctl("start")
}

// startProxy listens on the PostgreSQL host's address, port proxyPort, and
// forwards to the server on its loopback, holding every chunk for
// opts.delay in each direction (the kernel of the machine the tests were
// written on has no netem; a proxy adds the same cost to a round trip) and
// counting the chunks sent to the server: a client's round trips.
func (c *cluster) startProxy(t testing.TB) {
	t.Helper()
	err := inNetns(c.pgNS, func() (err error) {
		c.proxy, err = net.Listen("tcp", fmt.Sprintf(subnet+":%d", pgOctet, proxyPort))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	dial := c.dialer(c.pgNS)
	go func() {
		for {
			in, err := c.proxy.Accept()
			if err != nil {
				return
			}
			go func() {
				out, err := dial(context.Background(), "tcp", fmt.Sprintf("127.0.0.1:%d", pgPort))
				if err != nil {
					in.Close()
					return
				}
				go delayCopy(out, in, c.opts.delay, &c.trips)
				delayCopy(in, out, c.opts.delay, nil)
			}()
		}
	}()
}

// delayCopy copies src to dst, each chunk d after it was read, in order,
// and counts the chunks in n (when not nil).
func delayCopy(dst, src net.Conn, d time.Duration, n *atomic.Int64) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 32<<10)
			k, err := src.Read(b)
			if k > 0 {
				if n != nil {
					n.Add(1)
				}
				q <- chunk{b[:k], time.Now().Add(d)}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range q {
		time.Sleep(time.Until(ch.at))
		if _, err := dst.Write(ch.b); err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

// writeConfig writes the host's config.yaml: the shared database and the
// tokens, the same on every host.
func (h *host) writeConfig(t testing.TB) {
	t.Helper()
	if err := os.MkdirAll(h.home, 0o700); err != nil {
		t.Fatal(err)
	}
	dbAddr := fmt.Sprintf(subnet+":%d", pgOctet, pgPort)
	if h.proxy {
		dbAddr = fmt.Sprintf(subnet+":%d", pgOctet, proxyPort)
	}
	cfg := fmt.Sprintf(`backend: postgres
backends:
  postgres:
    dsn: postgres://memos@%s/postgres?sslmode=verify-full&sslrootcert=%s
    max_conns: %d
server:
  addr: %s
  tokens:
    - name: admin
      token: %s
    - name: alice
      token: %s
      namespaces: [%q]
`, dbAddr, filepath.Join(h.c.dir, "ca.crt"), h.c.opts.conns, h.addr, adminToken, aliceToken, aliceNS)
	if h.c.opts.flush != "" {
		cfg += fmt.Sprintf("search:\n  access_flush: %s\n", h.c.opts.flush)
	}
	if err := os.WriteFile(filepath.Join(h.home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// start starts memos serve in the host's namespace (it does not wait).
func (h *host) start() {
	args := []string{"netns", "exec", h.ns, h.c.bin, "serve"}
	name := "ip"
	if h.cpu >= 0 {
		args = append([]string{"-c", strconv.Itoa(h.cpu), "ip"}, args...)
		name = "taskset"
	}
	cmd := exec.Command(name, args...)
	cmd.Env = []string{"HOME=" + h.home, "MEMOS_HOME=" + h.home, "PATH=" + os.Getenv("PATH")}
	if h.cpu >= 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	done := make(chan struct{})
	h.mu.Lock()
	if h.log.Len() > 0 {
		h.log.WriteString("--- started again ---\n")
	}
	h.cmd, h.done, h.err = cmd, done, nil
	h.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			h.mu.Lock()
			h.log.WriteString(sc.Text() + "\n")
			h.mu.Unlock()
		}
	}()
	if err := cmd.Start(); err != nil {
		h.mu.Lock()
		h.err = err
		h.mu.Unlock()
		close(done)
		return
	}
	go func() {
		err := cmd.Wait()
		pw.Close()
		h.mu.Lock()
		h.err = err
		h.mu.Unlock()
		close(done)
	}()
}

func (h *host) logText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.log.String()
}

// waitReady waits until the host answers /readyz.
func (h *host) waitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		select {
		case <-h.done:
			return fmt.Errorf("host %d: memos serve exited: %v\n%s", h.i+1, h.err, h.logText())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+h.addr+"/readyz", nil)
		resp, err := h.c.http.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("host %d did not become ready within %s (last: %v)\n%s", h.i+1, within, err, h.logText())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill sends SIGKILL and waits for the process to end.
func (h *host) kill() {
	h.mu.Lock()
	cmd, done := h.cmd, h.done
	h.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Kill()
	<-done
}

// pid is the serve process's id (ip netns exec and taskset exec it, so it
// is the started command's).
func (h *host) pid() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cmd.Process.Pid
}

// apiError is a failed call: the HTTP status (0: no answer) and the error
// body's kind and message.
type apiError struct {
	Status  int
	Kind    string
	Message string
	Err     error // transport error when Status is 0
}

func (e *apiError) Error() string {
	if e.Status == 0 {
		return "no answer: " + e.Err.Error()
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Kind, e.Message)
}

// call posts in to operation op on host h with token and decodes the answer
// into out (when not nil). Errors are *apiError.
func (c *cluster) call(ctx context.Context, h *host, token, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", "http://"+h.addr+"/api/mem/"+op, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &apiError{Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return &apiError{Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Kind    string `json:"kind"`
				Message string `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal(b, &e)
		if e.Error.Message == "" {
			e.Error.Message = strings.TrimSpace(string(b))
		}
		return &apiError{Status: resp.StatusCode, Kind: e.Error.Kind, Message: e.Error.Message}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s: decode %q: %w", op, b, err)
		}
	}
	return nil
}

// status is err's HTTP status (200 for nil, 0 for no answer, -1 for
// another error).
func status(err error) int {
	if err == nil {
		return http.StatusOK
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return -1
}

// cpuTicks is the CPU time (user + system, clock ticks) of process pid.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

// nsTicks sums cpuTicks over the processes in namespace ns.
func nsTicks(ns string) int64 {
	out, _ := run("ip", "netns", "pids", ns)
	var n int64
	for _, p := range strings.Fields(out) {
		n += cpuTicks(mustAtoi(p))
	}
	return n
}
