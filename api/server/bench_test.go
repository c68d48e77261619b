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
	"testing"
	"time"

	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/core"
)

// BenchmarkServe measures the HTTP API under load on a 10k-memory SQLite
// store: concurrent clients (4 per core) on loopback, each iteration one
// request. Besides ns/op it reports requests per second, nearest-rank
// p50/p99 latency and the error count, which must be 0:
//
//	go test -run '^$' -bench BenchmarkServe -benchtime 10s ./api/server/
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
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = 64
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
		b.Run(c.name, func(b *testing.B) {
			var (
				mu     sync.Mutex
				lat    []time.Duration
				errs   int
				seed   uint64
				client = &http.Client{Timeout: time.Minute}
			)
			b.SetParallelism(4)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				mu.Lock()
				seed++
				r := rand.New(rand.NewPCG(seed, 7))
				mu.Unlock()
				var mine []time.Duration
				bad := 0
				for pb.Next() {
					t0 := time.Now()
					res, err := client.Post(l.url+"/api/mem/"+c.name, "application/json", strings.NewReader(c.body(r)))
					if err != nil {
						bad++
						continue
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					mine = append(mine, time.Since(t0))
					if res.StatusCode != 200 {
						bad++
					}
				}
				mu.Lock()
				lat = append(lat, mine...)
				errs += bad
				mu.Unlock()
			})
			elapsed := time.Since(start)
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
			b.ReportMetric(float64(errs), "errors")
			if errs > 0 {
				b.Errorf("%d requests failed", errs)
			}
		})
	}
}
