package retrieve

import (
	"context"
	"fmt"

	"github.com/memos-go/memos/core/driver"
)

// What a context pack takes from a search.

// Pick is a memory a search proposes for a context pack, with Via saying
// why a memory that no retriever found is there: the expansion or edge
// that brought it, such as "12 supports it".
type Pick struct {
	Memory *driver.Memory
	Via    string
}

// Picks takes the result as the pack's memories, except lessons. Lessons
// compete with lessons: every lesson among the candidates goes through the
// relevance gate again with the best lesson's scores as the reference (a
// lesson that matches the query's topic applies even when facts match it
// better), best first.
func (p *Pipeline) Picks() (mems, lessons []Pick) {
	for _, c := range p.hits {
		if c.mem.Type != driver.TypeLesson {
			mems = append(mems, Pick{Memory: c.mem, Via: c.origin})
		}
	}
	var ls []*candidate
	var best gateBest
	for _, c := range p.cands {
		if c.mem != nil && c.mem.Type == driver.TypeLesson && (c.retrieved() || c.expanded) {
			ls = append(ls, c)
			best.add(c)
		}
	}
	for _, c := range ls {
		if c.expanded || gateVerdict(c, best, p.cfg, p.mode == ModeHybrid, false) == "" {
			lessons = append(lessons, Pick{Memory: c.mem, Via: c.origin})
		}
	}
	return mems, lessons
}

// Neighbours returns up to n memories joined by an edge to one of the
// memories sel and not in the result, visible at the request's clocks, in
// the order of sel, then edge order. The edges of every memory of sel are
// read at once where the backend can (driver.MultiEdgeReader: one round
// trip on a database server), and so are the first neighbours
// (driver.MultiGetter).
func (p *Pipeline) Neighbours(ctx context.Context, sel []int64, n int) ([]Pick, error) {
	if n <= 0 || len(sel) == 0 {
		return nil, nil
	}
	var out []Pick
	seen := map[int64]bool{}
	for _, c := range p.hits {
		seen[c.id] = true
	}
	err := p.d.Store.View(ctx, func(tx driver.ReadTx) error {
		all, err := driver.EdgesOf(tx, sel)
		if err != nil {
			return err
		}
		// The neighbours in the order the loop below meets them; a few
		// times n are read at once (the rest, one by one if ever reached:
		// some may be out of scope or forgotten).
		var ids []int64
		next := map[int64]bool{}
		for _, id := range sel {
			for _, ed := range all[id] {
				other := ed.To
				if ed.To == id {
					other = ed.From
				}
				if !seen[other] && !next[other] && len(ids) < 4*n {
					next[other] = true
					ids = append(ids, other)
				}
			}
		}
		if err := p.prefetch(tx, ids); err != nil {
			return err
		}
		for _, id := range sel {
			for _, ed := range all[id] {
				if len(out) == n {
					return nil
				}
				other, via := ed.To, fmt.Sprintf("%d %s it", id, ed.Type)
				if ed.To == id {
					other, via = ed.From, fmt.Sprintf("it %s %d", ed.Type, id)
				}
				if seen[other] {
					continue
				}
				seen[other] = true
				m, _, err := p.resolve(tx, other)
				if err != nil {
					return err
				}
				if m != nil {
					out = append(out, Pick{Memory: m, Via: via})
				}
			}
		}
		return nil
	})
	return out, err
}

// Mentions is what a memory carries for a question about time: the dates
// its content mentions, resolved against its event time (nil when the
// question does not ask for a time).
func (p *Pipeline) Mentions(m *driver.Memory) []TimeMention { return p.timeMentions(m) }
