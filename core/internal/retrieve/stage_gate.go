package retrieve

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// gate drops weak candidates instead of letting them pad the result: a
// candidate passes when at least one retriever found it with a strong
// match. A vector match is strong when similar enough in absolute terms
// (MinSimilarity) and, in a hybrid search, relative to the best similarity;
// a keyword match is strong unless, in a hybrid search, it scores below a
// share of the best keyword score — which drops memories that matched only
// a common word of the query. The relative thresholds apply to hybrid searches only: they
// drop what one retriever found and the other did not corroborate, and in a
// single-retriever search nothing can be corroborated (on LoCoMo they cut
// keyword-only recall@10 from 0.606 to 0.575). Every threshold is raised by
// 1 + TrustGate·(1 − trust score), so a low-trust memory needs a stronger
// match. Old versions matched in memory (AsOf searches) have no keyword
// score and pass. Candidates not loaded are left alone.
//
// In a hybrid search the relative keyword threshold spares the memories a
// keyword search of the same question would return (KeepKeyword × limit
// places, see keywordResult): the gate may drop what only fusion brought
// in, never what keyword search alone would have shown.
func gate(cands []*candidate, cfg *SearchConfig, hybrid bool, limit int) {
	var best gateBest
	for _, c := range cands {
		if c.mem != nil {
			best.add(c)
		}
	}
	var keep map[*candidate]bool
	if hybrid {
		keep = keywordResult(cands, cfg, limit)
	}
	for _, c := range cands {
		if c.mem == nil {
			continue
		}
		c.dropped, c.spared = gateVerdict(c, best, cfg, hybrid, keep[c]), ""
		if keep[c] && c.dropped == "" {
			c.spared = gateVerdict(c, best, cfg, hybrid, false) // for explain
		}
	}
	rankKept(cands, cfg.KeepKeywordRank)
}

// Values of SearchConfig.KeepKeywordRank.
const (
	// KeepRankScore ranks the memories kept only as keyword search's own
	// result by their own score.
	KeepRankScore = "score"
	// KeepRankAfter ranks them below every memory that passed the gate on
	// its own.
	KeepRankAfter = "after"
	// KeepRankLast ranks them after every other memory of the result.
	KeepRankLast = "last"
)

// keepRankDefault is KeepKeywordRank's default.
const keepRankDefault = KeepRankLast

// rankKept places the memories the gate kept only because keyword search
// alone returns them (spared) as how says: KeepRankAfter scales their
// scores by one factor so that the best of them ranks just below the
// lowest memory that passed on its own (their order among themselves
// stays; no factor when they already rank below it); KeepRankLast marks
// them to sort after every other memory (see sortCandidates). They match
// only a common word of the question: evidence weaker than anything the
// gate passed, shown where the result would otherwise have nothing.
func rankKept(cands []*candidate, how string) {
	if how != KeepRankAfter && how != KeepRankLast {
		return
	}
	floor, top := math.Inf(1), math.Inf(-1)
	var kept []*candidate
	for _, c := range cands {
		switch {
		case c.mem == nil || c.dropped != "":
		case c.spared != "":
			kept, top = append(kept, c), max(top, c.score)
		case c.score > 0: // a zero score (a vector list that agrees with nothing) ranks nothing
			floor = min(floor, c.score)
		}
	}
	if how == KeepRankLast {
		for _, c := range kept {
			c.after = true
		}
		return
	}
	if len(kept) == 0 || math.IsInf(floor, 1) || top < floor {
		return
	}
	f := floor / top * (1 - 1e-9) // strictly below, ties by id aside
	for _, c := range kept {
		c.score *= f
		c.below = f
	}
}

// keywordResult returns the candidates that a keyword search of the same
// request would rank within KeepKeyword × limit places (none when
// KeepKeyword ≤ 0). A keyword search fuses the keyword list (and, as of a
// past time, the old versions matched in memory) alone, weighs the result
// like any search and applies no relative threshold; so its order is the
// candidates' keyword share of the fused score (kwFused) times the same
// weights, ties by id: the order of its result before expansion.
func keywordResult(cands []*candidate, cfg *SearchConfig, limit int) map[*candidate]bool {
	n := int(math.Ceil(cfg.KeepKeyword * float64(limit)))
	if n <= 0 {
		return nil
	}
	var kw []*candidate
	for _, c := range cands {
		if c.mem != nil && (c.kwRank > 0 || c.histRank > 0) {
			kw = append(kw, c)
		}
	}
	slices.SortStableFunc(kw, func(a, b *candidate) int {
		if sa, sb := a.keywordAlone(), b.keywordAlone(); sa != sb {
			return cmp.Compare(sb, sa)
		}
		return cmp.Compare(a.id, b.id)
	})
	keep := make(map[*candidate]bool, min(n, len(kw)))
	for _, c := range kw[:min(n, len(kw))] {
		keep[c] = true
	}
	return keep
}

// keywordAlone is c's score in a keyword search of the same request: its
// keyword share of the fused score, weighed like any candidate.
func (c *candidate) keywordAlone() float64 {
	return c.kwFused * c.significance * c.trust * c.recency * c.pool * c.length * c.timeFactor
}

// gateBest holds the best match of each retriever among the candidates,
// which the relative thresholds are shares of. For the query extended by
// feedback it is the best of the memories the first pass did not find:
// they match the added terms only, and the memories that also match the
// question's own terms would set a bar they could never reach.
type gateBest struct{ sim, kw, fb float64 }

func (b *gateBest) add(c *candidate) {
	if c.vecRank > 0 {
		b.sim = math.Max(b.sim, c.similarity)
	}
	if c.kwRank > 0 {
		b.kw = math.Max(b.kw, c.kwScore)
	}
	if c.fbRank > 0 && c.kwRank == 0 {
		b.fb = math.Max(b.fb, c.fbScore)
	}
}

// gateVerdict returns why c is dropped, or "" when it passes: when at
// least one retriever found it with a strong enough match. A keyword
// search of the same request would return c when kwResult is set, and its
// keyword match is then strong whatever its share of the best.
func gateVerdict(c *candidate, best gateBest, cfg *SearchConfig, hybrid, kwResult bool) string {
	bestSim, bestKw := best.sim, best.kw
	raise := 1.0
	if cfg.TrustGate > 0 {
		raise += cfg.TrustGate * (1 - c.mem.Trust.Score)
	}
	var why []string
	strong := false
	if c.vecRank > 0 {
		switch need, rel := cfg.MinSimilarity*raise, cfg.RelativeSimilarity*raise*bestSim; {
		case c.similarity < need:
			why = append(why, fmt.Sprintf("similarity %.3f below %.3f", c.similarity, need))
		case hybrid && c.similarity < rel:
			why = append(why, fmt.Sprintf("similarity %.3f below %.0f%% of the best (%.3f)", c.similarity, cfg.RelativeSimilarity*raise*100, bestSim))
		default:
			strong = true
		}
	}
	switch {
	case c.histRank > 0:
		strong = true // an old version matched in memory: no score to judge
	case c.kwRank > 0:
		need := cfg.RelativeKeyword * raise * bestKw
		if hybrid && !kwResult && cfg.RelativeKeyword > 0 && bestKw > 0 && c.kwScore < need {
			why = append(why, fmt.Sprintf("keyword score %.3g below %.0f%% of the best (%.3g)", c.kwScore, cfg.RelativeKeyword*raise*100, bestKw))
		} else {
			strong = true
		}
	case c.fbRank > 0:
		// Found only by the query extended by feedback: judged against the
		// best such hit, like a keyword match.
		if need := cfg.RelativeKeyword * raise * best.fb; cfg.RelativeKeyword > 0 && c.fbScore < need {
			why = append(why, fmt.Sprintf("feedback keyword score %.3g below %.0f%% of the best found by feedback alone (%.3g)", c.fbScore, cfg.RelativeKeyword*raise*100, best.fb))
		} else {
			strong = true
		}
	}
	if strong || len(why) == 0 {
		return ""
	}
	msg := strings.Join(why, "; ")
	if raise > 1 {
		msg += fmt.Sprintf(" (thresholds raised ×%.2f for trust %.2f)", raise, c.mem.Trust.Score)
	}
	return msg
}
