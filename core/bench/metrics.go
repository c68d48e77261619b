package bench

import (
	"math"
	"slices"
	"time"

	"github.com/memos-go/memos/core"
)

// RecallAt is recall@k: the share of the relevant keys found among the
// first k ranked keys, |relevant ∩ ranked[:k]| / |relevant|. It is 0 when
// relevant is empty; a key ranked twice counts once.
func RecallAt(ranked []string, relevant map[string]float64, k int) float64 {
	if len(relevant) == 0 || k <= 0 {
		return 0
	}
	found := 0
	seen := map[string]bool{}
	for _, key := range ranked[:min(k, len(ranked))] {
		if relevant[key] > 0 && !seen[key] {
			seen[key] = true
			found++
		}
	}
	return float64(found) / float64(len(relevant))
}

// NDCGAt is nDCG@k with linear gains, as trec_eval and BEIR compute it:
// DCG = Σ_{i<k} gain(ranked[i]) / log2(i+2), divided by the DCG of the
// ideal ranking of the relevant keys. Graded relevance values are the gains.
// It is 0 when relevant is empty.
func NDCGAt(ranked []string, relevant map[string]float64, k int) float64 {
	if len(relevant) == 0 || k <= 0 {
		return 0
	}
	dcg := 0.0
	seen := map[string]bool{}
	for i, key := range ranked[:min(k, len(ranked))] {
		if g := relevant[key]; g > 0 && !seen[key] {
			seen[key] = true
			dcg += g / math.Log2(float64(i+2))
		}
	}
	gains := make([]float64, 0, len(relevant))
	for _, g := range relevant {
		if g > 0 {
			gains = append(gains, g)
		}
	}
	slices.Sort(gains)
	slices.Reverse(gains)
	idcg := 0.0
	for i, g := range gains[:min(k, len(gains))] {
		idcg += g / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of samples:
// the smallest sample that at least p% of the samples do not exceed. It
// does not modify samples and returns 0 for none.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return percentileSorted(s, p)
}

func percentileSorted(s []time.Duration, p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// summarize fills a Latency from its raw samples.
func summarize(samples []time.Duration) *Latency {
	l := &Latency{Queries: len(samples), Samples: core.Durations(samples)}
	if len(samples) == 0 {
		return l
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	l.P50, l.P95, l.P99 = core.Duration(percentileSorted(s, 50)), core.Duration(percentileSorted(s, 95)), core.Duration(percentileSorted(s, 99))
	l.Mean = core.Duration(sum / time.Duration(len(s)))
	l.Max = core.Duration(s[len(s)-1])
	return l
}

// median returns the middle value (the lower of the two middle ones).
func median(ds []time.Duration) time.Duration { return Percentile(ds, 50) }
