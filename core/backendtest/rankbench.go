package backendtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// RunRankedBenchmarks measures driver.RankReader on a store of n memories
// that the backend h opens, built once (a thousand memories to a
// transaction) before the benchmarks:
//
//	Ranked/n=<n>       a read of the whole scope in rank order (one
//	                   namespace, active memories, four types: the shape of
//	                   the review queue's read and of a pack's lessons),
//	                   ns/memory and memories/s
//	RankedFirst100/n=<n> the first 100 of the scope, as a bootstrap pack
//	                   reads them (µs/op)
//
// The memories have short contents and no vectors; significance, access
// count and last access are drawn with many ties, and 60% were never
// accessed. It skips a backend without RankReader.
func RunRankedBenchmarks(b *testing.B, h Harness, n int) {
	b.Helper()
	types := []driver.Type{driver.TypeFact, driver.TypeEvent, driver.TypeTurn, driver.TypeLesson}
	r := rand.New(rand.NewPCG(benchSeed, 0x72616e6b))
	ms := make([]*driver.Memory, n)
	for i := range ms {
		m := newMemory(fmt.Sprintf("ranked benchmark memory %d", i), withType(types[i%len(types)]))
		m.Pool = m.Type.DefaultPool()
		m.Significance = 1 + r.IntN(10)
		if r.IntN(10) >= 6 {
			m.AccessCount = 1 + int64(r.IntN(5))
			m.LastAccessedAt = at(r.IntN(1000))
		}
		ms[i] = m
	}
	bk := benchOpen(b, h, filepath.Join(b.TempDir(), "store"))
	defer bk.Close()
	InsertAll(b, bk, ms)
	ok := false
	if err := bk.View(context.Background(), func(tx driver.ReadTx) error {
		_, ok = tx.(driver.RankReader)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if !ok {
		b.Skipf("%s does not implement RankReader", h.Name)
	}
	flt := driver.Filter{Namespaces: []string{driver.DefaultNamespace}, Statuses: []driver.Status{driver.StatusActive}, Types: types}
	read := func(b *testing.B, limit int) {
		seen := 0
		stop := errors.New("enough")
		err := bk.View(context.Background(), func(tx driver.ReadTx) error {
			return tx.(driver.RankReader).Ranked(flt, func(*driver.Memory) error {
				if seen++; seen == limit {
					return stop
				}
				return nil
			})
		})
		if errors.Is(err, stop) {
			err = nil
		}
		if err != nil || seen != min(limit, n) {
			b.Fatalf("Ranked: %d memories, error %v; want %d", seen, err, min(limit, n))
		}
	}
	b.Run(fmt.Sprintf("Ranked/n=%d", n), func(b *testing.B) {
		for b.Loop() {
			read(b, n)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/memory")
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "memories/s")
	})
	b.Run(fmt.Sprintf("RankedFirst100/n=%d", n), func(b *testing.B) {
		for b.Loop() {
			read(b, 100)
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
	})
}
