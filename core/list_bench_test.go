package core_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
)

// BenchmarkList1M pages through a store of MEMOS_BENCH_N memories (set it
// to 1000000 for the figure the README quotes; the benchmark is skipped
// without it, since building a million memories takes minutes) with
// Engine.List, a hundred memories to a page, and reports the mean time of
// a page among the first, the middle and the last tenth of the pages: a
// keyset-paged listing costs the same at any depth. The store (the
// backend of MEMOS_BENCH_BACKEND, default sqlite) holds short memories
// without vectors, 90% in the default namespace and 10% in another, 95%
// active, with significance and type drawn at random and created a
// millisecond apart (a tenth of them sharing their time with the one
// before); MEMOS_BENCH_DIR keeps it for later runs. Sub-benchmarks:
//
//	recency        the default namespace's active memories, newest first
//	significance   the same, most significant first
//	type=event     recency, only events (a tenth): a filter no index serves,
//	               checked on each memory, each page bounded by core.ListScan
func BenchmarkList1M(b *testing.B) {
	s := os.Getenv("MEMOS_BENCH_N")
	if s == "" {
		b.Skip("set MEMOS_BENCH_N to the number of memories (1000000 for the README's figure); building the store takes minutes at 1M")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("MEMOS_BENCH_N is %q; want a positive number of memories", s)
	}
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "list."+benchBackend())
	if dir := os.Getenv("MEMOS_BENCH_DIR"); dir != "" {
		path = filepath.Join(dir, fmt.Sprintf("list-%d.%s", n, benchBackend()))
	}
	_, statErr := os.Stat(path)
	var bk core.Backend
	if benchBackend() == "bolt" {
		bk, err = bolt.Open(ctx, bolt.Config{Path: path})
	} else {
		bk, err = sqlite.Open(ctx, sqlite.Config{Path: path})
	}
	if err != nil {
		b.Fatal(err)
	}
	defer bk.Close()
	if statErr != nil {
		buildListStore(b, bk, n)
	}
	e, err := core.Open(ctx, core.Options{Backend: bk})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for _, c := range []struct {
		name string
		req  core.ListRequest
	}{
		{"recency", core.ListRequest{}},
		{"significance", core.ListRequest{Sort: core.SortSignificance}},
		{"type=event", core.ListRequest{Types: []core.Type{core.TypeEvent}}},
	} {
		b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
			var start, middle, end time.Duration
			var pages, listed, runs int
			for b.Loop() {
				var took []time.Duration
				req := c.req
				req.Limit = 100
				for {
					t0 := time.Now()
					res, err := e.List(ctx, req)
					if err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(t0))
					listed += len(res.Memories)
					if res.NextCursor == "" {
						break
					}
					req.Cursor = res.NextCursor
				}
				tenth := max(len(took)/10, 1)
				sum := func(ds []time.Duration) (s time.Duration) {
					for _, d := range ds {
						s += d
					}
					return s / time.Duration(len(ds))
				}
				mid := len(took)/2 - tenth/2
				start += sum(took[:tenth])
				middle += sum(took[mid : mid+tenth])
				end += sum(took[len(took)-tenth:])
				pages += len(took)
				runs++
			}
			us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(runs) }
			b.ReportMetric(us(start), "start-µs/page")
			b.ReportMetric(us(middle), "middle-µs/page")
			b.ReportMetric(us(end), "end-µs/page")
			b.ReportMetric(float64(pages)/float64(runs), "pages")
			b.ReportMetric(float64(listed)/float64(runs), "memories")
		})
	}
}

// buildListStore writes BenchmarkList1M's n memories to bk, a thousand to
// a transaction.
func buildListStore(b *testing.B, bk core.Backend, n int) {
	b.Helper()
	r := rand.New(rand.NewPCG(7, 29))
	types := []core.Type{core.TypeFact, core.TypeEvent, core.TypePreference, core.TypeTurn, core.TypeNote,
		core.TypeFact, core.TypeFact, core.TypeTurn, core.TypeTurn, core.TypeRelationship}
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for done := 0; done < n; {
		err := bk.Update(context.Background(), func(tx core.Tx) error {
			for i := done; i < min(done+1000, n); i++ {
				if r.IntN(10) != 0 {
					at = at.Add(time.Millisecond)
				}
				m := &core.Memory{Version: 1, Namespace: core.DefaultNamespace, Type: types[r.IntN(len(types))],
					Content: fmt.Sprintf("listed memory %d", i), Significance: 1 + r.IntN(10),
					Trust: core.Trust{Level: core.TrustInferred, Score: 0.8}, CreatedAt: at, UpdatedAt: at, Status: core.StatusActive}
				m.Pool = m.Type.DefaultPool()
				switch x := r.IntN(100); {
				case x < 10:
					m.Namespace = "project:other"
				case x < 13:
					m.Status = core.StatusArchived
				case x < 15:
					m.Status = core.StatusQuarantined
				}
				if err := tx.Insert(m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done = min(done+1000, n)
	}
}
