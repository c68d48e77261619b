package retrieve

import "github.com/memos-go/memos/core/query"

// Values of SearchConfig.SessionDiversityQueries.
const (
	// DiversityCounting diversifies the questions that count or add up
	// (query.AsksCount).
	DiversityCounting = "counting"
	// DiversityAll diversifies every search.
	DiversityAll = "all"
)

// diversifies reports whether session diversity applies to this search.
func (p *Pipeline) diversifies() bool {
	f := p.cfg.SessionDiversity
	if p.mode == ModeFTS || f <= 0 || f >= 1 {
		return false
	}
	return p.cfg.SessionDiversityQueries == DiversityAll || query.AsksCount(p.req.Query)
}

// diversify returns the first k of cands (sorted best first) with the
// first top places chosen so that one session does not take them all: a
// memory counts ×f for each memory of its session already placed, and the
// best such score takes the next place (ties keep the incoming order). A
// memory outside any session is never discounted. The places after top
// follow the incoming order. Scores are left as they are: the first places
// are in order of the discounted score, recorded as each chosen
// candidate's diversity factor (shown by explain).
func diversify(cands []*candidate, k, top int, f float64) []*candidate {
	k = min(k, len(cands))
	out := make([]*candidate, 0, k)
	taken := make([]bool, len(cands))
	placed := map[sessionKey]int{}
	for len(out) < min(k, top) {
		pick, best, bestF := -1, 0.0, 1.0
		for i, c := range cands {
			if taken[i] {
				continue
			}
			x := diversityFactor(c, placed, f)
			if s := c.score * x; pick < 0 || s > best {
				pick, best, bestF = i, s, x
			}
			if x == 1 {
				break // undiscounted: no later candidate can beat it
			}
		}
		c := cands[pick]
		taken[pick] = true
		c.diversity = bestF
		if c.mem.Session != "" {
			placed[sessionOf(c)]++
		}
		out = append(out, c)
	}
	for i, c := range cands {
		if len(out) == k {
			break
		}
		if !taken[i] {
			out = append(out, c)
		}
	}
	return out
}

func sessionOf(c *candidate) sessionKey { return sessionKey{c.mem.Namespace, c.mem.Session} }

// diversityFactor is f to the power of how many memories of c's session
// are placed (1 outside sessions).
func diversityFactor(c *candidate, placed map[sessionKey]int, f float64) float64 {
	x := 1.0
	if c.mem.Session == "" {
		return x
	}
	for range placed[sessionOf(c)] {
		x *= f
	}
	return x
}
