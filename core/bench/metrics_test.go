package bench

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRecallAt(t *testing.T) {
	ranked := []string{"a", "b", "c", "d"}
	rel := map[string]float64{"a": 1, "d": 1, "z": 1}
	for k, want := range map[int]float64{1: 1.0 / 3, 2: 1.0 / 3, 3: 1.0 / 3, 4: 2.0 / 3, 10: 2.0 / 3} {
		if got := RecallAt(ranked, rel, k); !near(got, want) {
			t.Errorf("recall@%d = %v, want %v", k, got, want)
		}
	}
	if got := RecallAt([]string{"a", "a", "d"}, map[string]float64{"a": 1, "d": 1}, 2); !near(got, 0.5) {
		t.Errorf("a key ranked twice counted twice: %v", got)
	}
	if got := RecallAt(ranked, nil, 10); got != 0 {
		t.Errorf("no labels: %v", got)
	}
	if got := RecallAt(nil, rel, 10); got != 0 {
		t.Errorf("nothing retrieved: %v", got)
	}
}

func TestNDCGAt(t *testing.T) {
	// Binary: hits at ranks 1 and 3 of 2 relevant.
	// DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3).
	want := 1.5 / (1 + 1/math.Log2(3))
	if got := NDCGAt([]string{"a", "x", "b"}, map[string]float64{"a": 1, "b": 1}, 10); !near(got, want) || !near(want, 0.9197207891481876) {
		t.Errorf("binary nDCG = %v, want %v", got, want)
	}
	// Graded, wrong order: DCG = 1 + 2/log2(3); IDCG = 2 + 1/log2(3).
	want = (1 + 2/math.Log2(3)) / (2 + 1/math.Log2(3))
	if got := NDCGAt([]string{"b", "a"}, map[string]float64{"a": 2, "b": 1}, 10); !near(got, want) {
		t.Errorf("graded nDCG = %v, want %v", got, want)
	}
	// The cutoff applies to the ranking and to the ideal ranking.
	if got := NDCGAt([]string{"x", "a"}, map[string]float64{"a": 1, "b": 1}, 1); got != 0 {
		t.Errorf("nDCG@1 with the hit at rank 2 = %v, want 0", got)
	}
	if got := NDCGAt([]string{"a", "b"}, map[string]float64{"a": 1, "b": 1}, 10); !near(got, 1) {
		t.Errorf("perfect ranking nDCG = %v", got)
	}
	if got := NDCGAt([]string{"a"}, nil, 10); got != 0 {
		t.Errorf("no labels: %v", got)
	}
}

func TestPercentile(t *testing.T) {
	var s []time.Duration
	for _, v := range []int{7, 3, 10, 1, 5, 9, 2, 8, 6, 4} {
		s = append(s, time.Duration(v)*time.Millisecond)
	}
	orig := slices.Clone(s)
	for p, want := range map[float64]int{10: 1, 50: 5, 51: 6, 90: 9, 95: 10, 99: 10, 100: 10} {
		if got := Percentile(s, p); got != time.Duration(want)*time.Millisecond {
			t.Errorf("p%v = %v, want %dms", p, got, want)
		}
	}
	if !slices.Equal(s, orig) {
		t.Error("Percentile reordered its input")
	}
	var hundred []time.Duration
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, time.Duration(i))
	}
	l := summarize(hundred)
	if l.P50 != 50 || l.P95 != 95 || l.P99 != 99 || l.Max != 100 || l.Mean != 50 || l.Queries != 100 {
		t.Errorf("summary of 1..100: %+v", l)
	}
	if Percentile(nil, 50) != 0 || Percentile([]time.Duration{3}, 99) != 3 {
		t.Error("edge cases")
	}
}

func TestCompare(t *testing.T) {
	lat := func(p50 core.Duration) map[core.Mode]*Latency {
		return map[core.Mode]*Latency{core.ModeKeyword: {P50: p50}, core.ModeVector: {P50: 2 * p50}, core.ModeHybrid: {P50: 3 * p50}}
	}
	runs := []*Result{
		{Dataset: "synthetic", Docs: 10, Backend: "a", Embedder: "hash", Ingest: Ingest{PerSecond: 100}, DiskAllocated: 1000, Open: Open{Median: 10}, Latency: lat(10)},
		{Dataset: "synthetic", Docs: 10, Backend: "b", Embedder: "hash", Ingest: Ingest{PerSecond: 50}, DiskAllocated: 3000, Open: Open{Median: 5}, Latency: lat(20)},
		{Dataset: "synthetic", Docs: 20, Backend: "a", Embedder: "hash", Ingest: Ingest{PerSecond: 100}, Latency: lat(10)},
	}
	cs := compare(runs)
	if len(cs) != 1 {
		t.Fatalf("%d comparisons, want 1: %+v", len(cs), cs)
	}
	c := cs[0]
	if c.Baseline != "a" || c.Backend != "b" || c.Ingest != 0.5 || c.Disk != 3 || c.Open != 0.5 ||
		c.P50[core.ModeKeyword] != 2 || c.P50[core.ModeHybrid] != 2 {
		t.Errorf("comparison %+v", c)
	}
}
