package retrieve

import (
	"math"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// weigh applies significance, trust, pool and recency to c's fused score.
// Validity is not a factor: memories not valid at the requested time never
// reach weighting (see Pipeline.load). ref is the time recency counts from
// (now, or the AsOf time).
func weigh(c *candidate, ref time.Time, cfg *SearchConfig) {
	m := c.mem
	c.significance = significanceFactor(m.Significance, cfg.SignificanceBoost)
	c.trust = trustFactor(m.Trust.Score, cfg.TrustWeight)
	c.recency = recencyFactor(ref.Sub(m.UpdatedAt), cfg.RecencyHalfLife, cfg.RecencyWeight)
	c.pool = poolFactor(m.Pool, cfg.DistilledBoost)
	c.length = 1
	if m.Type == driver.TypeTurn {
		c.length = lengthFactor(len(m.Content), cfg.TurnLengthPivot, cfg.TurnLengthWeight)
	}
	c.score = c.fused * c.significance * c.trust * c.recency * c.pool * c.length
}

// lengthFactor is 1/(1 + w·ln(n/pivot)) for content of n bytes over pivot,
// else 1: a text ten times the pivot scores 1/(1 + 2.3·w). w ≤ 0 is off.
func lengthFactor(n, pivot int, w float64) float64 {
	if w <= 0 || pivot <= 0 || n <= pivot {
		return 1
	}
	return 1 / (1 + w*math.Log(float64(n)/float64(pivot)))
}

// significanceFactor is 1 + boost·(s−5)/5: 1 for the default significance 5,
// 1+0.8·boost for a 9.
func significanceFactor(s int, boost float64) float64 {
	return 1 + boost*float64(s-5)/5
}

// trustFactor is 1 − w·(1 − score): 1 for a certain memory.
func trustFactor(score, w float64) float64 { return 1 - w*(1-score) }

// recencyFactor is 1 − w + w·2^(−age/halfLife): 1 for a version written at
// the reference time, falling towards 1 − w. A negative age (a version
// written after the reference time) counts as 0.
func recencyFactor(age, halfLife time.Duration, w float64) float64 {
	if age < 0 {
		age = 0
	}
	if halfLife <= 0 {
		return 1
	}
	return 1 - w + w*math.Exp2(-float64(age)/float64(halfLife))
}

// poolFactor prefers distilled memories (memory and knowledge pools) over
// raw turns of equal relevance.
func poolFactor(p driver.Pool, boost float64) float64 {
	if p == driver.PoolRaw || boost <= 0 {
		return 1
	}
	return 1 + boost
}
