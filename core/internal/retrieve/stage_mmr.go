package retrieve

import (
	"fmt"

	"github.com/memos-go/memos/core/text"
)

// mmr picks up to k of cands (sorted best first) by maximal marginal
// relevance: each step takes the candidate with the highest
// λ·relevance − (1−λ)·(its greatest similarity to those already taken),
// relevance being the score divided by the best score. Similarity is the
// cosine of the embeddings when both have one from the same model, else the
// Jaccard overlap of their tokens. Ties go to the better-ranked candidate.
// It records each candidate's decision for explain.
func mmr(cands []*candidate, k int, lambda float64) []*candidate {
	if len(cands) == 0 || k <= 0 {
		return nil
	}
	// Look a few places past k, not at every candidate: enough to replace
	// paraphrases, and the cost stays O(k²).
	for _, c := range cands[min(len(cands), 3*k+10):] {
		c.mmr = "not considered: ranked too low"
	}
	cands = cands[:min(len(cands), 3*k+10)]
	best := cands[0].score
	if best <= 0 {
		best = 1
	}
	toks := make([]map[string]bool, len(cands))
	sim := func(i, j int) float64 {
		a, b := cands[i].mem, cands[j].mem
		if a.Embedding.Model != "" && a.Embedding.Model == b.Embedding.Model && a.Embedding.Dim() == b.Embedding.Dim() && a.Embedding.Dim() > 0 {
			return dot(a.Embedding.Vector, b.Embedding.Vector) // stored vectors are unit length
		}
		for _, x := range []int{i, j} {
			if toks[x] == nil {
				toks[x] = map[string]bool{}
				for _, t := range text.Tokenize(cands[x].mem.Content) {
					toks[x][t] = true
				}
			}
		}
		inter := 0
		for t := range toks[i] {
			if toks[j][t] {
				inter++
			}
		}
		union := len(toks[i]) + len(toks[j]) - inter
		if union == 0 {
			return 0
		}
		return float64(inter) / float64(union)
	}
	maxSim := make([]float64, len(cands))
	taken := make([]bool, len(cands))
	var out []*candidate
	for len(out) < min(k, len(cands)) {
		pick, pickVal := -1, 0.0
		for i, c := range cands {
			if taken[i] {
				continue
			}
			v := lambda*c.score/best - (1-lambda)*maxSim[i]
			if pick < 0 || v > pickVal {
				pick, pickVal = i, v
			}
		}
		taken[pick] = true
		c := cands[pick]
		c.mmr = fmt.Sprintf("chosen %d (mmr %.3f)", len(out)+1, pickVal)
		if pick != len(out) {
			c.mmr += fmt.Sprintf(", was %d by score", pick+1)
		}
		out = append(out, c)
		for i := range cands {
			if !taken[i] {
				maxSim[i] = max(maxSim[i], sim(i, pick))
			}
		}
	}
	for i, c := range cands {
		if !taken[i] {
			c.mmr = fmt.Sprintf("not chosen: similarity %.3f to a chosen memory", maxSim[i])
		}
	}
	return out
}
