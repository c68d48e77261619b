//go:build linux

package multihost

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Words the load's memories and queries are made of, so that queries find
// something.
var (
	people  = []string{"Alice", "Bob", "Carol", "Dmitri", "Esther", "Farid", "Grace", "Hiro", "Ines", "Jonas"}
	things  = []string{"postgres", "kubernetes", "rust", "typescript", "sqlite", "terraform", "grafana", "kafka", "redis", "nginx", "python", "golang"}
	verbs   = []string{"prefers", "migrated to", "is debugging", "wrote a guide about", "dislikes", "benchmarked", "deployed", "reviewed"}
	reasons = []string{"for the billing service", "on the staging cluster", "after the outage in May", "because of latency", "for the mobile team", "during the hackathon"}
)

func sentence(r *rand.Rand) string {
	return fmt.Sprintf("%s %s %s %s", people[r.IntN(len(people))], verbs[r.IntN(len(verbs))], things[r.IntN(len(things))], reasons[r.IntN(len(reasons))])
}

func question(r *rand.Rand) string {
	return fmt.Sprintf("what does %s think of %s", people[r.IntN(len(people))], things[r.IntN(len(things))])
}

// BenchmarkScaling measures search, pack and remember through one, two and
// three serve hosts on one PostgreSQL host, from the client host: a fixed
// number of concurrent clients (MEMOS_MULTIHOST_CLIENTS, default 12), each
// bound to one of the hosts in use, send b.N requests in all. It reports
// req/s, p50 and p99 latency, and the CPU the serve hosts, PostgreSQL and the
// client used per second of wall time (%), which shows what ran out.
//
// Not part of the tests: go test -run '^$' -bench Scaling -benchtime 300x
// ./cmd/memos/internal/multihost/ (as root). MEMOS_MULTIHOST_PIN=1 pins
// serve host i to CPU i mod NumCPU with GOMAXPROCS=1;
// MEMOS_MULTIHOST_DELAY=1ms puts a proxy between the serve hosts and
// PostgreSQL that adds that one-way delay and counts round trips per
// request (db-trips/op; 0s counts without delay); MEMOS_MULTIHOST_MEMORIES
// (default 2000) sizes the store; MEMOS_MULTIHOST_MAX_CONNS sets each
// host's backends.postgres.max_conns; MEMOS_MULTIHOST_STATEMENTS=FILE loads
// pg_stat_statements into PostgreSQL and appends to FILE, for each
// configuration, the statements that took its time per request and what
// happened to the memories table; MEMOS_MULTIHOST_PERF=DIR records a CPU
// profile of the serve hosts in use and of PostgreSQL with perf, one file
// per configuration in DIR (perf report -i FILE --sort comm,dso,sym);
// MEMOS_MULTIHOST_ACCESS_FLUSH sets search.access_flush on every host;
// MEMOS_MULTIHOST_VACUUM=0 skips the VACUUM before each configuration.
func BenchmarkScaling(b *testing.B) {
	opts := envOptions(b)
	clients := envInt(b, "MEMOS_MULTIHOST_CLIENTS", 12)
	memories := envInt(b, "MEMOS_MULTIHOST_MEMORIES", 2000)
	load, _ := os.ReadFile("/proc/loadavg")
	b.Logf("load average before the cluster starts: %s; %d clients, %d memories, delay %v, pinned %v",
		strings.Join(strings.Fields(string(load))[:3], " "), clients, memories, opts.delay, opts.pin)
	c := newCluster(b, opts)
	preload(b, c, memories)
	// One operation with one, two and three hosts, then the next: searches
	// and packs add no memories, so each operation's configurations see
	// the same store.
	for _, op := range []string{"search", "context-pack", "remember"} {
		for n := 1; n <= len(c.hosts); n++ {
			b.Run(fmt.Sprintf("hosts=%d/op=%s", n, op), func(b *testing.B) {
				runLoad(b, c, c.hosts[:n], op, clients)
			})
		}
	}
	load, _ = os.ReadFile("/proc/loadavg")
	b.Logf("load average after: %s", strings.Join(strings.Fields(string(load))[:3], " "))
}

// envOptions reads MEMOS_MULTIHOST_PIN, MEMOS_MULTIHOST_DELAY and
// MEMOS_MULTIHOST_MAX_CONNS.
func envOptions(t testing.TB) options {
	opts := options{hosts: 3, pin: os.Getenv("MEMOS_MULTIHOST_PIN") == "1", stats: os.Getenv("MEMOS_MULTIHOST_STATEMENTS"),
		flush: os.Getenv("MEMOS_MULTIHOST_ACCESS_FLUSH")}
	if v := os.Getenv("MEMOS_MULTIHOST_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("MEMOS_MULTIHOST_MAX_CONNS=%q: want a positive number", v)
		}
		opts.conns = n
	}
	if d := os.Getenv("MEMOS_MULTIHOST_DELAY"); d != "" {
		opts.proxy = true
		var err error
		if opts.delay, err = time.ParseDuration(d); err != nil {
			t.Fatalf("MEMOS_MULTIHOST_DELAY: %v", err)
		}
	}
	return opts
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// preload stores n memories through the first host, 250 a request.
func preload(b *testing.B, c *cluster, n int) {
	r := rand.New(rand.NewPCG(1, 2))
	for done := 0; done < n; {
		var batch []map[string]any
		for ; done < n && len(batch) < 250; done++ {
			batch = append(batch, map[string]any{"content": sentence(r), "source": fmt.Sprintf("preload:%d", done)})
		}
		if err := c.call(context.Background(), c.hosts[0], adminToken, "remember-batch", map[string]any{"memories": batch}, nil); err != nil {
			b.Fatalf("preload: %v", err)
		}
	}
}

// runLoad sends b.N requests of op through hosts from clients concurrent
// clients and reports throughput, latency and CPU.
func runLoad(b *testing.B, c *cluster, hosts []*host, op string, clients int) {
	ctx := context.Background()
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	var failed atomic.Int64
	var firstErr atomic.Value
	ticks := func() (serve, pg, self int64) {
		for _, h := range hosts {
			serve += cpuTicks(h.pid())
		}
		return serve, nsTicks(c.pgNS), cpuTicks(os.Getpid())
	}
	if os.Getenv("MEMOS_MULTIHOST_VACUUM") != "0" {
		// Each configuration from a vacuumed store: without it, a
		// configuration pays for the dead row versions the ones before
		// it left (every access-statistics write rewrites the memories it
		// touches; see docs/deployment.md).
		if _, err := c.psql("VACUUM ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
	if c.opts.stats != "" {
		if _, err := c.psql("SELECT pg_stat_statements_reset(), pg_stat_reset()"); err != nil {
			b.Fatal(err)
		}
	}
	stopPerf := startPerf(b, c, hosts)
	s0, p0, c0 := ticks()
	t0 := c.trips.Load()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range clients {
		h := hosts[w%len(hosts)]
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), uint64(b.N)))
			for next.Add(1) <= int64(b.N) {
				var in map[string]any
				switch op {
				case "search":
					in = map[string]any{"query": question(r)}
				case "context-pack":
					in = map[string]any{"query": question(r), "budget": 400}
				case "remember":
					in = map[string]any{"content": sentence(r), "source": "bench"}
				}
				t0 := time.Now()
				if err := c.call(ctx, h, adminToken, op, in, nil); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("host %d: %v", h.i+1, err))
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	b.StopTimer()
	stopPerf()
	s1, p1, c1 := ticks()
	trips := c.trips.Load() - t0
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d requests failed, the first: %v", n, b.N, firstErr.Load())
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	const hz = 100 // USER_HZ on Linux
	pct := func(t int64) float64 { return float64(t) / hz / wall.Seconds() * 100 }
	b.ReportMetric(float64(b.N)/wall.Seconds(), "req/s")
	b.ReportMetric(float64(percentile(all, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(all, 99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(pct(s1-s0), "serve-cpu%")
	b.ReportMetric(pct(p1-p0), "pg-cpu%")
	b.ReportMetric(pct(c1-c0), "client-cpu%")
	if c.opts.proxy {
		b.ReportMetric(float64(trips)/float64(b.N), "db-trips/op")
	}
	if c.opts.stats != "" {
		logStatements(b, c, b.N)
	}
	b.ReportMetric(0, "ns/op") // wall time per request says nothing with concurrent clients
}

// logStatements appends to the file MEMOS_MULTIHOST_STATEMENTS names what
// pg_stat_statements and pg_stat_user_tables gathered since their reset:
// the statements by the time they took, per request of the n, and the
// memories table's updates, HOT updates and dead rows, and the keyword
// index's pending list (which every keyword search reads whole).
func logStatements(b *testing.B, c *cluster, n int) {
	var out strings.Builder
	fmt.Fprintf(&out, "=== %s (%d requests)\n", b.Name(), n)
	for _, q := range []string{
		fmt.Sprintf(`SELECT round(sum(calls)::numeric/%[1]d, 2) AS "calls/op",
			round(sum(total_exec_time + total_plan_time)::numeric/%[1]d, 3) AS "ms/op",
			round(sum(rows)::numeric/%[1]d, 1) AS "rows/op", sum(shared_blks_hit + shared_blks_read) / %[1]d AS "blocks/op"
			FROM pg_stat_statements`, n),
		fmt.Sprintf(`SELECT round(calls::numeric/%[1]d, 2) AS "calls/op",
			round((total_exec_time + total_plan_time)::numeric/%[1]d, 3) AS "ms/op",
			round(rows::numeric/%[1]d, 1) AS "rows/op", (shared_blks_hit + shared_blks_read) / %[1]d AS "blocks/op",
			left(regexp_replace(query, '\s+', ' ', 'g'), 140) AS query
			FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT 15`, n),
		`SELECT relname, n_live_tup, n_dead_tup, n_tup_ins, n_tup_upd, n_tup_hot_upd, autovacuum_count,
			pg_size_pretty(pg_total_relation_size(relid)) AS size FROM pg_stat_user_tables WHERE relname IN ('memories', 'store')`,
		`SELECT pending_pages, pending_tuples FROM pgstatginindex('memos.memories_terms')`,
		`SELECT indexrelname, idx_scan, idx_tup_read, pg_size_pretty(pg_relation_size(indexrelid)) AS size
			FROM pg_stat_user_indexes WHERE relname = 'memories' ORDER BY idx_tup_read DESC`,
	} {
		res, err := c.psql(q)
		if err != nil {
			b.Fatal(err)
		}
		out.WriteString(res + "\n")
	}
	f, err := os.OpenFile(c.opts.stats, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(out.String()); err != nil {
		b.Fatal(err)
	}
}

// startPerf starts perf record on the serve hosts in use and PostgreSQL's
// processes when MEMOS_MULTIHOST_PERF names a directory, and returns what
// stops it (a no-op otherwise).
func startPerf(b *testing.B, c *cluster, hosts []*host) (stop func()) {
	dir := os.Getenv("MEMOS_MULTIHOST_PERF")
	if dir == "" || b.N == 1 {
		return func() {}
	}
	var pids []string
	for _, h := range hosts {
		pids = append(pids, strconv.Itoa(h.pid()))
	}
	out, _ := run("ip", "netns", "pids", c.pgNS)
	pids = append(pids, strings.Fields(out)...)
	file := filepath.Join(dir, strings.NewReplacer("/", "_", "=", "").Replace(b.Name())+".data")
	cmd := exec.Command("perf", "record", "-q", "-F", "499", "-g", "-o", file, "-p", strings.Join(pids, ","))
	if err := cmd.Start(); err != nil {
		b.Fatalf("perf: %v", err)
	}
	time.Sleep(500 * time.Millisecond) // perf attaches
	return func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
}
