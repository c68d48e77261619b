package retrieve

import "github.com/memos-go/memos/core/driver"

// fuse merges ranked candidate lists: kw and vec are the keyword and vector
// lists; hist lists old versions that matched the keyword query in memory
// (searches as of a past time) and counts with the keyword weight.
// Candidates come out in order of first appearance (keyword, vector,
// history); callers sort. How a list's hit contributes is the configured
// Fusion's (see contribution).
func fuse(kw, vec, hist []driver.Hit, c *SearchConfig) []*candidate {
	byID := make(map[int64]*candidate, len(kw)+len(vec)+len(hist))
	out := make([]*candidate, 0, len(kw)+len(vec)+len(hist))
	get := func(id int64) *candidate {
		if x := byID[id]; x != nil {
			return x
		}
		x := &candidate{id: id}
		byID[id] = x
		out = append(out, x)
		return x
	}
	kwc, vecc, histc := c.contributions(kw, c.KeywordWeight, false), c.contributions(vec, c.vectorWeight(kw, vec), true), c.contributions(hist, c.KeywordWeight, false)
	for i, h := range kw {
		x := get(h.ID)
		x.kwRank, x.kwScore = i+1, h.Score
		x.fused += kwc[i]
		x.kwFused += kwc[i]
	}
	for i, h := range vec {
		x := get(h.ID)
		x.vecRank, x.similarity = i+1, h.Score
		x.fused += vecc[i]
	}
	for i, h := range hist {
		x := get(h.ID)
		x.histRank = i + 1
		x.fused += histc[i]
		x.kwFused += histc[i]
	}
	return out
}

// Fusion methods (SearchConfig.Fusion).
const (
	// FusionRRF is weighted reciprocal rank fusion: a hit at rank r adds
	// weight/(rrf_k + r); scores do not matter, only ranks.
	FusionRRF = "rrf"
	// FusionScore is score-aware (convex) fusion: a hit adds weight × its
	// score normalised within its list — a keyword score as a share of the
	// list's best; a similarity as its place between the list's lowest and
	// a perfect match, 1 — so that a vector list whose similarities are flat
	// or low for this query (the hash embedder's, typically) moves the
	// ranking little, and one whose best hits stand out moves it more.
	FusionScore = "score"
)

// contributions returns what each hit of a ranked list adds to its
// candidate's fused score. minMax normalises scores between the list's
// lowest and 1 (cosine similarities, whose floor is not 0) rather than as a
// share of the best (keyword scores).
func (c *SearchConfig) contributions(hits []driver.Hit, w float64, minMax bool) []float64 {
	out := make([]float64, len(hits))
	if c.Fusion != FusionScore {
		for i := range hits {
			out[i] = w / (c.RRFK + float64(i+1))
		}
		return out
	}
	if len(hits) == 0 {
		return out
	}
	best, low := hits[0].Score, hits[0].Score
	for _, h := range hits {
		best, low = max(best, h.Score), min(low, h.Score)
	}
	if !minMax {
		low = 0
	}
	top := best
	if minMax {
		top = 1
	}
	for i, h := range hits {
		switch {
		case top > low:
			out[i] = w * (h.Score - low) / (top - low)
		case best > 0:
			out[i] = w
		}
	}
	return out
}

// vectorWeight is the weight of the vector list vec in a search whose
// keyword list is kw: VectorWeight, scaled down where the vector list adds
// little evidence to the keyword list (see VectorAgreement). Without keyword hits the vector list is all there
// is, and weighs VectorWeight.
func (c *SearchConfig) vectorWeight(kw, vec []driver.Hit) float64 {
	w := c.VectorWeight
	if len(kw) == 0 || len(vec) == 0 {
		return w
	}
	if c.VectorAgreement > 0 {
		w *= min(1, agreement(kw, vec, agreementDepth)/c.VectorAgreement)
	}
	return w
}

// agreementDepth is how many of each list's first hits agreement reads.
const agreementDepth = 10

// agreement is the share of the first k hits of the shorter list that are
// among the first k of the other: 1 when the two retrievers propose the
// same memories, 0 when they share none.
func agreement(kw, vec []driver.Hit, k int) float64 {
	a, b := kw[:min(k, len(kw))], vec[:min(k, len(vec))]
	in := make(map[int64]bool, len(a))
	for _, h := range a {
		in[h.ID] = true
	}
	n := 0
	for _, h := range b {
		if in[h.ID] {
			n++
		}
	}
	return float64(n) / float64(min(len(a), len(b)))
}
