package core

// fuse merges ranked candidate lists by weighted reciprocal rank fusion:
// score = Σ weight/(k + rank). kw and vec are the keyword and vector lists;
// hist lists old versions that matched the keyword query in memory (searches
// as of a past time) and counts with the keyword weight. Candidates come out
// in order of first appearance (keyword, vector, history); callers sort.
func fuse(kw, vec, hist []Hit, c *SearchConfig) []*candidate {
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
	for i, h := range kw {
		x := get(h.ID)
		x.kwRank, x.kwScore = i+1, h.Score
		x.fused += c.KeywordWeight / (c.RRFK + float64(i+1))
	}
	for i, h := range vec {
		x := get(h.ID)
		x.vecRank, x.similarity = i+1, h.Score
		x.fused += c.VectorWeight / (c.RRFK + float64(i+1))
	}
	for i, h := range hist {
		x := get(h.ID)
		x.histRank = i + 1
		x.fused += c.KeywordWeight / (c.RRFK + float64(i+1))
	}
	return out
}
