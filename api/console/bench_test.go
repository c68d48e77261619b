package console_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
)

// BenchmarkConsolePages renders each console page over the real server on
// a 10k-memory store, SQLite and bolt (the target is under 100 ms a page):
//
//	go test -run '^$' -bench BenchmarkConsolePages ./api/console/
func BenchmarkConsolePages(b *testing.B) {
	for _, backend := range []string{"sqlite", "bolt"} {
		b.Run(backend, func(b *testing.B) {
			benchmarkConsolePages(b, openEngineOn(b, backend, filepath.Join(b.TempDir(), "store")))
		})
	}
}

func benchmarkConsolePages(b *testing.B, eng *core.Engine) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 3000)
	for i := range words {
		words[i] = fmt.Sprintf("%c%c%c%d", 'a'+rune(i%26), 'a'+rune(i/26%26), 'a'+rune(i/676%26), i)
	}
	sentence := func() string {
		w := make([]string, 8+rng.IntN(8))
		for i := range w {
			w[i] = words[int(float64(len(words))*rng.Float64()*rng.Float64()*rng.Float64())]
		}
		return strings.Join(w, " ")
	}
	ctx := context.Background()
	// 9,000 memories in batches (one audit entry each batch) and 1,000 one
	// at a time (an entry each, and one more for each quarantined one), so
	// that the audit log is not trivially short.
	const size, single = 10_000, 1_000
	for i := 0; i < size-single; i += 500 {
		ins := make([]core.Input, 500)
		for j := range ins {
			ins[j] = core.Input{Content: sentence(), Significance: 1 + rng.IntN(10), Quarantine: (i+j)%500 == 0}
		}
		if _, err := eng.RememberBatch(ctx, ins); err != nil {
			b.Fatal(err)
		}
	}
	for i := range single {
		if _, err := eng.Remember(ctx, core.Input{Content: sentence(), Significance: 1 + rng.IntN(10), Quarantine: i%50 == 0}); err != nil {
			b.Fatal(err)
		}
	}
	for v := 0; v < 5; v++ {
		c := sentence()
		if _, err := eng.Update(ctx, 1, core.Patch{Content: &c}); err != nil {
			b.Fatal(err)
		}
	}
	queue, err := eng.ReviewPage(ctx, core.ReviewRequest{Limit: 25})
	if err != nil || queue.Next == 0 {
		b.Fatalf("the review queue has one page (%v): want several", err)
	}
	log, err := eng.Audit(ctx, core.AuditFilter{Last: 1})
	if err != nil || len(log) != 1 {
		b.Fatalf("the last audit entry: %v %v", log, err)
	}
	l := serve(b, eng, nil) // loopback without tokens: no sign-in
	for _, p := range []struct{ name, path string }{
		{"browse", "/console/"},
		{"browse-facets", "/console/?facets=1"},
		{"browse-filtered", "/console/?sort=significance&status=active&status=quarantined&limit=50"},
		{"search", "/console/search?q=" + words[3] + "+" + words[10]},
		{"memory", "/console/memory/1?a=2&b=6"},
		{"memory-single", fmt.Sprintf("/console/memory/%d", size-single/2)},
		{"review", "/console/review"},
		{"review-page-2", fmt.Sprintf("/console/review?after=%d", queue.Next)},
		{"health", "/console/health"}, // with the latest activity
		{"health-older-activity", fmt.Sprintf("/console/health?before=%d", log[0].Seq/2)},
		{"pack", "/console/pack?q=" + words[3]},
	} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				resp, err := http.Get(l.url + p.path)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%s: status %d", p.path, resp.StatusCode)
				}
			}
		})
	}
}
