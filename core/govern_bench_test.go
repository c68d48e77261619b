package core_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memos-go/memos/core"
)

// BenchmarkRememberBatch measures ingest through the engine (sqlite, hash
// embedder): batches of 500 memories with an entity each, so that every
// memory is bound by an audit entry and, with the detector on, compared
// with its nearest neighbours.
func BenchmarkRememberBatch(b *testing.B) {
	for _, policy := range []string{core.ContradictOff, core.ContradictQuarantine} {
		b.Run("contradictions="+policy, func(b *testing.B) {
			e := openOn(b, "sqlite", b.TempDir(), core.Options{Govern: core.GovernConfig{Contradictions: policy}}, 0)
			defer e.Close()
			ctx := context.Background()
			n := 0
			b.ResetTimer()
			for b.Loop() {
				ins := make([]core.Input, 500)
				for i := range ins {
					n++
					ins[i] = core.Input{Content: fmt.Sprintf("memory %d about the staging cluster and node %d", n, n%97),
						Entities: []string{fmt.Sprintf("host%d", n%50)}}
				}
				if _, err := e.RememberBatch(ctx, ins); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*500)/b.Elapsed().Seconds(), "memories/s")
		})
	}
}
