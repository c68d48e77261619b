package server_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench/benchenv"
)

// BenchmarkServe measures the HTTP API under load on a 10k-memory SQLite
// store, with a fixed number of concurrent loopback clients (clients=1 and
// clients=8, whatever the number of cores), each iteration one request.
// Besides ns/op it reports requests per second, nearest-rank p50/p99
// latency, the error count (which must be 0) and cpu-ms/req: the CPU time
// of the process (getrusage, user + system) during the run divided by the
// requests. The server runs in the benchmark's process, so cpu-ms/req
// counts both ends: the server's work and the client's (building,
// sending and reading the request: about 2 % of a search's CPU profile).
//
//	go test -run '^$' -bench 'BenchmarkServe/search' -benchtime 2000x ./api/server/
func BenchmarkServe(b *testing.B) {
	path := filepath.Join(b.TempDir(), "memory.db")
	eng := openEngine(b, path)
	// A Zipf vocabulary of 5,000 pseudo-words, sentences of 8-15 words (as
	// core/bench's synthetic workload): queries match tens of memories, not
	// half the store.
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 5000)
	for i := range words {
		words[i] = fmt.Sprintf("%c%c%c%d", 'a'+rune(i%26), 'a'+rune(i/26%26), 'a'+rune(i/676%26), i)
	}
	zipf := func(r *rand.Rand) string { return words[int(float64(len(words))*r.Float64()*r.Float64()*r.Float64())] }
	sentence := func() string {
		w := make([]string, 8+rng.IntN(8))
		for i := range w {
			w[i] = zipf(rng)
		}
		return strings.Join(w, " ")
	}
	const size = 10_000
	for i := 0; i < size; i += 500 {
		ins := make([]core.Input, 500)
		for j := range ins {
			ins[j] = core.Input{Content: sentence(), Significance: 1 + rng.IntN(10)}
		}
		if _, err := eng.RememberBatch(context.Background(), ins); err != nil {
			b.Fatal(err)
		}
	}
	l := startOn(b, eng, path, server.Options{})
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for _, c := range []struct {
		name string
		body func(r *rand.Rand) string
	}{
		{"search", func(r *rand.Rand) string {
			return fmt.Sprintf(`{"query":"%s %s %s"}`, zipf(r), zipf(r), zipf(r))
		}},
		{"context-pack", func(r *rand.Rand) string {
			return fmt.Sprintf(`{"query":"what about %s and %s","budget":400}`, zipf(r), zipf(r))
		}},
		{"remember", func(r *rand.Rand) string {
			return fmt.Sprintf(`{"content":"load test note %d about %s"}`, r.Int64(), zipf(r))
		}},
	} {
		for _, clients := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/clients=%d", c.name, clients), func(b *testing.B) {
				serveLoad(b, client, l.url+"/api/mem/"+c.name, clients, c.body)
			})
		}
	}
}

// serveLoad posts b.N requests to url from clients goroutines, each with
// its own query stream (body), and reports the figures of BenchmarkServe.
func serveLoad(b *testing.B, client *http.Client, url string, clients int, body func(r *rand.Rand) string) {
	var (
		mu   sync.Mutex
		lat  = make([]time.Duration, 0, b.N)
		errs int
		left atomic.Int64
		wg   sync.WaitGroup
	)
	left.Store(int64(b.N))
	b.ResetTimer()
	cpu0, start := benchenv.CPUTime(), time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i)+1, 7))
			var mine []time.Duration
			bad := 0
			for left.Add(-1) >= 0 {
				t0 := time.Now()
				res, err := client.Post(url, "application/json", strings.NewReader(body(r)))
				if err != nil {
					bad++
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mine = append(mine, time.Since(t0))
				if res.StatusCode != http.StatusOK {
					bad++
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), benchenv.CPUTime()-cpu0
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		i := int(p*float64(len(lat))+0.999999) - 1
		return float64(lat[max(i, 0)].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/req")
	b.ReportMetric(float64(errs), "errors")
	if errs > 0 {
		b.Errorf("%d requests failed", errs)
	}
}
