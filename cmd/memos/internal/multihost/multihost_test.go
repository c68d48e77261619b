//go:build linux

package multihost

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memos-go/memos/core/longtest"
)

// memory is the part of a stored memory the tests read.
type memory struct {
	ID        int64  `json:"id"`
	Version   int    `json:"version"`
	Namespace string `json:"namespace"`
	Content   string `json:"content"`
	Source    string `json:"source"`
}

type searchOut struct {
	Hits []struct {
		Memory memory `json:"memory"`
	} `json:"hits"`
}

type auditReport struct {
	Entries  int    `json:"entries"`
	Head     string `json:"head"`
	Memories int    `json:"memories"`
	Versions int    `json:"versions"`
	Broken   int    `json:"broken"`
	Problems []any  `json:"problems"`
}

// TestMultiHost runs three memos serve hosts on one PostgreSQL server, each
// host in a network namespace of its own, and checks in turn: cross-host
// staleness, tokens, concurrent writers, a host killed under load, the
// database restarted under load, and, after all of it, the audit chain.
// The subtests share the cluster and run in order; each leaves it with
// three hosts serving. MEMOS_MULTIHOST_DELAY and MEMOS_MULTIHOST_PIN shape
// the cluster as for BenchmarkScaling.
func TestMultiHost(t *testing.T) {
	longtest.Skip(t, "builds a cluster of network namespaces and a release build of memos")
	c := newCluster(t, envOptions(t))
	for _, st := range []struct {
		name string
		fn   func(*testing.T, *cluster)
	}{
		{"Staleness", testStaleness},
		{"Tokens", testTokens},
		{"ConcurrentWriters", testConcurrentWriters},
		{"KillHost", testKillHost},
		{"RestartPostgres", testRestartPostgres},
		{"AuditChain", testAuditChain},
	} {
		t.Run(st.name, func(t *testing.T) { st.fn(t, c) })
	}
}

// percentile returns the p-th percentile (0–100) of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(float64(len(ds)-1) * p / 100)
	return ds[i]
}

// testStaleness writes on one host and searches on another right after the
// acknowledgement: keyword search for a word only that memory has, and
// vector search for its exact content (so the other host's in-memory
// vector index must hold it). Each search syncs the index from the change
// log first, so the first search after the acknowledgement must find it;
// the test measures how long from acknowledgement to answer.
func testStaleness(t *testing.T, c *cluster) {
	ctx := context.Background()
	const n = 30
	var kw, vec []time.Duration
	for i := range n {
		a, b, v := c.hosts[i%3], c.hosts[(i+1)%3], c.hosts[(i+2)%3]
		word := fmt.Sprintf("stalenessprobe%dx%d", i, time.Now().UnixNano()%1e6)
		content := fmt.Sprintf("The %s report was filed by host %d in round %d", word, a.i+1, i)
		var m memory
		if err := c.call(ctx, a, adminToken, "remember", map[string]any{"content": content, "source": "staleness"}, &m); err != nil {
			t.Fatalf("remember on host %d: %v", a.i+1, err)
		}
		acked := time.Now()
		find := func(h *host, in map[string]any) time.Duration {
			var out searchOut
			if err := c.call(ctx, h, adminToken, "search", in, &out); err != nil {
				t.Fatalf("search on host %d: %v", h.i+1, err)
			}
			d := time.Since(acked)
			for _, hit := range out.Hits {
				if hit.Memory.ID == m.ID {
					return d
				}
			}
			t.Errorf("memory %d, acknowledged by host %d, is not in host %d's first %s search after the acknowledgement",
				m.ID, a.i+1, h.i+1, in["mode"])
			return d
		}
		kw = append(kw, find(b, map[string]any{"query": word, "mode": "keyword"}))
		acked = time.Now()
		vec = append(vec, find(v, map[string]any{"query": content, "mode": "vector", "limit": 3}))
	}
	t.Logf("staleness (acknowledged on one host → found by the first search on another), %d writes: keyword p50 %v p99 %v; vector p50 %v p99 %v",
		n, percentile(kw, 50), percentile(kw, 99), percentile(vec, 50), percentile(vec, 99))
}

// testTokens checks that the scoped token means the same on every host.
func testTokens(t *testing.T, c *cluster) {
	ctx := context.Background()
	var bob memory
	if err := c.call(ctx, c.hosts[0], adminToken, "remember", map[string]any{
		"namespace": "project:bob", "content": "The bob vault combination is kept in the tokenprobe drawer"}, &bob); err != nil {
		t.Fatal(err)
	}
	var alice []int64
	for _, h := range c.hosts {
		var m memory
		// A token with one namespace writes there by default.
		if err := c.call(ctx, h, aliceToken, "remember", map[string]any{
			"content": fmt.Sprintf("Alice's tokenprobe note written through host %d", h.i+1)}, &m); err != nil {
			t.Fatalf("host %d: alice remembers: %v", h.i+1, err)
		}
		if m.Namespace != aliceNS {
			t.Errorf("host %d: alice's memory went to %q, want %q", h.i+1, m.Namespace, aliceNS)
		}
		alice = append(alice, m.ID)
	}
	for _, h := range c.hosts {
		for _, tc := range []struct {
			what, token, op string
			in              map[string]any
			want            int
		}{
			{"no token", "", "search", map[string]any{"query": "tokenprobe"}, http.StatusUnauthorized},
			{"a wrong token", "wrong-token-0123456789abcdef", "search", map[string]any{"query": "tokenprobe"}, http.StatusUnauthorized},
			{"alice writing to project:bob", aliceToken, "remember", map[string]any{"namespace": "project:bob", "content": "x"}, http.StatusForbidden},
			{"alice searching project:bob", aliceToken, "search", map[string]any{"namespace": "project:bob", "query": "vault"}, http.StatusForbidden},
			{"alice verifying the whole store's audit log", aliceToken, "audit-verify", map[string]any{}, http.StatusForbidden},
			{"alice getting bob's memory", aliceToken, "get", map[string]any{"id": bob.ID}, http.StatusNotFound},
			{"alice forgetting bob's memory", aliceToken, "forget", map[string]any{"id": bob.ID}, http.StatusNotFound},
		} {
			if got := status(c.call(ctx, h, tc.token, tc.op, tc.in, nil)); got != tc.want {
				t.Errorf("host %d, %s: status %d, want %d", h.i+1, tc.what, got, tc.want)
			}
		}
		var out searchOut
		if err := c.call(ctx, h, aliceToken, "search", map[string]any{"query": "tokenprobe", "mode": "keyword", "limit": 50}, &out); err != nil {
			t.Fatalf("host %d: alice searches: %v", h.i+1, err)
		}
		var got []int64
		for _, hit := range out.Hits {
			if hit.Memory.ID == bob.ID {
				t.Errorf("host %d: alice's search found bob's memory", h.i+1)
			}
			got = append(got, hit.Memory.ID)
		}
		for _, id := range alice {
			if !slices.Contains(got, id) {
				t.Errorf("host %d: alice's search misses her memory %d (found %v)", h.i+1, id, got)
			}
		}
	}
	// bob's memory is still there for a token that may see it.
	if err := c.call(ctx, c.hosts[2], adminToken, "get", map[string]any{"namespace": "project:bob", "id": bob.ID}, nil); err != nil {
		t.Errorf("admin gets bob's memory on host 3: %v", err)
	}
}

// testConcurrentWriters has writers on every host remember, update, link
// and forget at the same time; the audit log must remain one chain that
// verifies, and every host must report the same head.
func testConcurrentWriters(t *testing.T, c *cluster) {
	ctx := context.Background()
	const workers, rounds = 3, 8
	var wg sync.WaitGroup
	var writes atomic.Int64
	for _, h := range c.hosts {
		for w := range workers {
			wg.Go(func() {
				var prev int64
				for r := range rounds {
					var m memory
					src := fmt.Sprintf("writers:h%d-w%d-r%d", h.i+1, w, r)
					if err := c.call(ctx, h, adminToken, "remember", map[string]any{
						"content": fmt.Sprintf("Concurrent writer %d on host %d says round %d", w, h.i+1, r), "source": src}, &m); err != nil {
						t.Errorf("host %d: remember: %v", h.i+1, err)
						return
					}
					writes.Add(1)
					if err := c.call(ctx, h, adminToken, "update", map[string]any{"id": m.ID,
						"content": fmt.Sprintf("Concurrent writer %d on host %d revised round %d", w, h.i+1, r)}, nil); err != nil {
						t.Errorf("host %d: update: %v", h.i+1, err)
						return
					}
					writes.Add(1)
					if prev != 0 {
						if err := c.call(ctx, h, adminToken, "link", map[string]any{"from": m.ID, "to": prev}, nil); err != nil {
							t.Errorf("host %d: link: %v", h.i+1, err)
							return
						}
						writes.Add(1)
					}
					if r == rounds-1 && w == 0 {
						if err := c.call(ctx, h, adminToken, "forget", map[string]any{"id": m.ID, "reason": "test"}, nil); err != nil {
							t.Errorf("host %d: forget: %v", h.i+1, err)
							return
						}
						writes.Add(1)
					}
					prev = m.ID
				}
			})
		}
	}
	wg.Wait()
	reports := verifyAudit(t, c)
	if len(reports) > 0 && reports[0].Entries < int(writes.Load()) {
		t.Errorf("the audit log has %d entries after %d audited writes", reports[0].Entries, writes.Load())
	}
}

// verifyAudit verifies the audit log on every host: no problems, and the
// same entries and head everywhere.
func verifyAudit(t *testing.T, c *cluster) []auditReport {
	t.Helper()
	var reps []auditReport
	for _, h := range c.hosts {
		var rep auditReport
		if err := c.call(context.Background(), h, adminToken, "audit-verify", map[string]any{}, &rep); err != nil {
			t.Errorf("host %d: audit-verify: %v", h.i+1, err)
			continue
		}
		if rep.Broken != 0 {
			t.Errorf("host %d: the audit log has %d problems: %v", h.i+1, rep.Broken, rep.Problems)
		}
		if len(reps) > 0 && (rep.Head != reps[0].Head || rep.Entries != reps[0].Entries) {
			t.Errorf("host %d: audit head %s (%d entries), host 1: %s (%d entries)", h.i+1, rep.Head, rep.Entries, reps[0].Head, reps[0].Entries)
		}
		reps = append(reps, rep)
	}
	if len(reps) > 0 {
		t.Logf("audit log: %d entries, %d memories and %d versions bound, head %s, verified on every host",
			reps[0].Entries, reps[0].Memories, reps[0].Versions, reps[0].Head)
	}
	return reps
}

// ledger records what a load's writers were told.
type ledger struct {
	mu       sync.Mutex
	acked    map[string]int64 // source → id, for every acknowledged write
	tried    map[string]bool  // every source a writer sent
	failures map[string]int   // "host N: status kind" → count
	perHost  []int            // acknowledged writes per host
	errs     []string         // failures the test did not expect (first few)
	landed   []string         // the 503s of writes a lookup then found stored
}

func newLedger(hosts int) *ledger {
	return &ledger{acked: map[string]int64{}, tried: map[string]bool{}, failures: map[string]int{}, perHost: make([]int, hosts)}
}

func (l *ledger) fail(h *host, err error, expected bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := fmt.Sprintf("host %d: %d", h.i+1, status(err))
	if ae, ok := err.(*apiError); ok && ae.Status != 0 {
		key += " " + ae.Kind
	}
	l.failures[key]++
	if !expected && len(l.errs) < 10 {
		l.errs = append(l.errs, fmt.Sprintf("host %d: %v", h.i+1, err))
	}
}

// checkStored lists every memory whose source starts with prefix and checks
// that each acknowledged write is stored exactly once and nothing is stored
// twice.
func checkStored(t *testing.T, c *cluster, h *host, prefix string, l *ledger) {
	t.Helper()
	count := map[string]int{}
	cursor := ""
	for {
		var out struct {
			Memories   []memory `json:"memories"`
			NextCursor string   `json:"next_cursor"`
		}
		if err := c.call(context.Background(), h, adminToken, "list", map[string]any{"source_prefix": prefix, "limit": 1000, "cursor": cursor}, &out); err != nil {
			t.Fatalf("list on host %d: %v", h.i+1, err)
		}
		for _, m := range out.Memories {
			count[m.Source]++
		}
		if cursor = out.NextCursor; cursor == "" {
			break
		}
	}
	lost := 0
	for src := range l.acked {
		if count[src] == 0 {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged write %s (memory %d) is not stored", src, l.acked[src])
			}
		}
	}
	for src, n := range count {
		if n > 1 {
			t.Errorf("%s is stored %d times", src, n)
		}
		if !l.tried[src] {
			t.Errorf("%s is stored but no writer sent it", src)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged writes are lost", lost, len(l.acked))
	}
	t.Logf("%d writes acknowledged (per host %v), %d stored (listed on host %d); failures %v",
		len(l.acked), l.perHost, len(count), h.i+1, l.failures)
}

// testKillHost kills host 3 with SIGKILL while writers on every host
// remember: writes to hosts 1 and 2 must all succeed, and every
// acknowledged write, host 3's included, must be stored once. Host 3 then
// starts again and serves the same store.
func testKillHost(t *testing.T, c *cluster) {
	ctx := context.Background()
	l := newLedger(len(c.hosts))
	victim := c.hosts[2]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, h := range c.hosts {
		for w := range 3 {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					src := fmt.Sprintf("kill:h%d-w%d-%d", h.i+1, w, n)
					l.mu.Lock()
					l.tried[src] = true
					l.mu.Unlock()
					var m memory
					err := c.call(ctx, h, adminToken, "remember", map[string]any{
						"content": fmt.Sprintf("Load before and after the kill, host %d writer %d number %d", h.i+1, w, n), "source": src}, &m)
					if err != nil {
						l.fail(h, err, h == victim)
						if h == victim {
							time.Sleep(50 * time.Millisecond)
						}
						continue
					}
					l.mu.Lock()
					l.acked[src] = m.ID
					l.perHost[h.i]++
					l.mu.Unlock()
				}
			})
		}
	}
	time.Sleep(1500 * time.Millisecond)
	victim.kill()
	killed := time.Now()
	// The others keep serving, searches included.
	for _, h := range c.hosts[:2] {
		if err := c.call(ctx, h, adminToken, "search", map[string]any{"query": "load after the kill"}, nil); err != nil {
			t.Errorf("search on host %d after host 3 was killed: %v", h.i+1, err)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	l.mu.Lock()
	survivors := l.perHost[0] + l.perHost[1]
	l.mu.Unlock()
	for _, e := range l.errs {
		t.Errorf("unexpected failure: %s", e)
	}
	checkStored(t, c, c.hosts[0], "kill:", l)
	t.Logf("hosts 1 and 2 acknowledged %d writes, without a failure, around host 3's kill at %s", survivors, killed.Format(time.TimeOnly))

	victim.start()
	if err := victim.waitReady(time.Minute); err != nil {
		t.Fatal(err)
	}
	var out searchOut
	if err := c.call(ctx, victim, adminToken, "search", map[string]any{"query": "load before and after the kill", "mode": "vector"}, &out); err != nil || len(out.Hits) == 0 {
		t.Errorf("host 3 after its restart: %d hits, %v", len(out.Hits), err)
	}
}

// testRestartPostgres restarts the database while writers on every host
// remember and a reader on every host searches. While it is down every failure must be a 503 of kind
// unavailable (not a hang, not a 500); afterwards every host serves again
// without being restarted. Writers retry a write that failed only after
// a lookup by its unique source shows it was not stored (a COMMIT cut off
// by the restart may have committed): nothing acknowledged may be lost and
// nothing may be stored twice.
func testRestartPostgres(t *testing.T, c *cluster) {
	ctx := context.Background()
	l := newLedger(len(c.hosts))
	var restarted atomic.Int64 // unix nanos when the server was up again
	recovered := make([]atomic.Int64, len(c.hosts))
	var slowest atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	stored := func(h *host, src string) (int64, bool) {
		for {
			var out struct {
				Memories []memory `json:"memories"`
			}
			err := c.call(ctx, h, adminToken, "list", map[string]any{"source_prefix": src, "limit": 2}, &out)
			if err == nil {
				for _, m := range out.Memories {
					if m.Source == src {
						return m.ID, true
					}
				}
				return 0, false
			}
			l.fail(h, err, status(err) == http.StatusServiceUnavailable)
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, h := range c.hosts {
		for w := range 3 {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					src := fmt.Sprintf("restart:h%d-w%d-%d.", h.i+1, w, n) // the dot ends the prefix
					l.mu.Lock()
					l.tried[src] = true
					l.mu.Unlock()
					for {
						var m memory
						start := time.Now()
						err := c.call(ctx, h, adminToken, "remember", map[string]any{
							"content": fmt.Sprintf("Load across the database restart, host %d writer %d number %d", h.i+1, w, n), "source": src}, &m)
						if d := int64(time.Since(start)); d > slowest.Load() {
							slowest.Store(d)
						}
						if err == nil {
							l.mu.Lock()
							l.acked[src] = m.ID
							l.perHost[h.i]++
							l.mu.Unlock()
							if r := restarted.Load(); r != 0 && recovered[h.i].Load() == 0 {
								recovered[h.i].Store(time.Now().UnixNano())
							}
							break
						}
						ok := status(err) == http.StatusServiceUnavailable && err.(*apiError).Kind == "unavailable" &&
							strings.Contains(err.(*apiError).Message, "retry")
						l.fail(h, err, ok)
						time.Sleep(100 * time.Millisecond)
						if id, ok := stored(h, src); ok {
							l.mu.Lock()
							l.acked[src] = id
							l.landed = append(l.landed, err.Error())
							l.mu.Unlock()
							break
						}
					}
				}
			})
		}
	}
	// A reader per host: searches fail the same way and recover too.
	var searched atomic.Int64
	for _, h := range c.hosts {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := c.call(ctx, h, adminToken, "search", map[string]any{"query": "load across the database restart"}, nil)
				if err == nil {
					searched.Add(1)
					continue
				}
				l.fail(h, err, status(err) == http.StatusServiceUnavailable && err.(*apiError).Kind == "unavailable")
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	time.Sleep(time.Second)
	down := time.Now()
	if err := c.restartPostgres(2 * time.Second); err != nil {
		close(stop)
		wg.Wait()
		t.Fatal(err)
	}
	up := time.Now()
	restarted.Store(up.UnixNano())
	deadline := up.Add(30 * time.Second)
	for {
		all := true
		for i := range recovered {
			all = all && recovered[i].Load() != 0
		}
		if all || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	for i := range recovered {
		if r := recovered[i].Load(); r == 0 {
			t.Errorf("host %d did not serve a write within 30s of the database's restart", i+1)
		} else {
			t.Logf("host %d: first write acknowledged %v after the database was up again", i+1, time.Duration(r-up.UnixNano()).Round(time.Millisecond))
		}
	}
	for _, e := range l.errs {
		t.Errorf("a failure that is not a clear 503: %s", e)
	}
	n503 := 0
	for k, n := range l.failures {
		if strings.HasSuffix(k, " 503 unavailable") {
			n503 += n
		}
	}
	if n503 == 0 {
		t.Errorf("no request failed with 503 while the database was down (%v down); failures %v", up.Sub(down), l.failures)
	}
	t.Logf("database down for %v: %d answers 503 unavailable, slowest write %v, %d searches answered, %d writes answered 503 were found stored: %q",
		up.Sub(down).Round(time.Millisecond), n503, time.Duration(slowest.Load()).Round(time.Millisecond), searched.Load(), len(l.landed), l.landed)
	checkStored(t, c, c.hosts[1], "restart:", l)
}

// testAuditChain verifies the audit log on every host after everything
// before it: concurrent writers, a killed host, a database restart.
func testAuditChain(t *testing.T, c *cluster) {
	verifyAudit(t, c)
}
