package retrieve

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/memos-go/memos/core/driver"
)

// expand adds the neighbours of the best results, bounded by
// search.expand_budget: turns next to a seed in the same session
// (session expansion) and memories joined to a seed by an edge (graph
// expansion). The seeds are the search.expand_seeds best live candidates.
//
// A session neighbour at distance d (in the session's order: valid_from,
// then created_at, then id) scores seed·session_factor/d; a graph neighbour
// seed·graph_factor·edge weight·edge_factors[type]. Either is then weighed
// like any candidate (significance, trust, pool, recency). Proposals are
// taken best first (ties by id); a memory already in the result, or not
// visible at the request's clocks, is skipped; a candidate the gate dropped
// comes back when a seed vouches for it, keeping its gate verdict for
// explain, and one it kept only as keyword search's own result (spared,
// see keywordResult) is scored like one it dropped: the better of its own
// score and the seed's.
func (p *Pipeline) expand(ctx context.Context) error {
	cfg := p.cfg
	if cfg.ExpandSeeds <= 0 || cfg.ExpandBudget <= 0 {
		return nil
	}
	seeds := p.seeds()
	if len(seeds) == 0 {
		return nil
	}
	return p.d.Store.View(ctx, func(tx driver.ReadTx) error {
		props, err := p.sessionProposals(ctx, tx, seeds)
		if err != nil {
			return err
		}
		graph, err := graphProposals(tx, seeds, cfg)
		if err != nil {
			return err
		}
		props = append(props, graph...)
		sort.SliceStable(props, func(i, j int) bool {
			if props[i].score != props[j].score {
				return props[i].score > props[j].score
			}
			return props[i].id < props[j].id
		})
		return p.addProposals(ctx, tx, props)
	})
}

// proposal is a memory expansion proposes: its score from the seed and
// the expansion that found it.
type proposal struct {
	id     int64
	score  float64
	origin string
}

// seeds are the best live candidates, which expansion starts from.
func (p *Pipeline) seeds() []*candidate {
	var seeds []*candidate
	for _, c := range p.cands {
		if len(seeds) == p.cfg.ExpandSeeds {
			break
		}
		if c.live() {
			seeds = append(seeds, c)
		}
	}
	return seeds
}

// sessionProposals proposes the seeds' session neighbours. Only a search
// whose seeds belong to a session reads sessions.
func (p *Pipeline) sessionProposals(ctx context.Context, tx driver.ReadTx, seeds []*candidate) ([]proposal, error) {
	cfg := p.cfg
	inSession := false
	for _, s := range seeds {
		inSession = inSession || (s.mem != nil && s.mem.Session != "")
	}
	if !inSession || cfg.SessionWindow <= 0 || cfg.SessionFactor <= 0 {
		return nil, nil
	}
	var props []proposal
	for _, s := range seeds {
		nbs, err := sessionAround(ctx, tx, p.d.Sessions, s.mem, cfg.SessionWindow)
		if err != nil {
			return nil, err
		}
		for _, nb := range nbs {
			props = append(props, proposal{nb.id, s.score * cfg.SessionFactor / float64(nb.dist),
				fmt.Sprintf("session neighbour of %d (%+d)", s.id, nb.offset)})
		}
	}
	return props, nil
}

// graphProposals proposes the memories joined to a seed by an edge.
func graphProposals(tx driver.ReadTx, seeds []*candidate, cfg *SearchConfig) ([]proposal, error) {
	if cfg.GraphFactor <= 0 {
		return nil, nil
	}
	ids := make([]int64, len(seeds))
	for i, s := range seeds {
		ids[i] = s.id
	}
	// One read for every seed where the backend can (MultiEdgeReader).
	all, err := driver.EdgesOf(tx, ids)
	if err != nil {
		return nil, err
	}
	var props []proposal
	for _, s := range seeds {
		for _, ed := range all[s.id] {
			f := cfg.edgeFactor(ed.Type) * ed.Weight
			if f <= 0 {
				continue
			}
			pr := proposal{ed.To, s.score * cfg.GraphFactor * f, fmt.Sprintf("%d %s it", s.id, ed.Type)}
			if ed.To == s.id {
				pr = proposal{ed.From, pr.score, fmt.Sprintf("it %s %d", ed.Type, s.id)}
			}
			props = append(props, pr)
		}
	}
	return props, nil
}

// addProposals adds the proposals (sorted best first) to the candidates
// up to the budget: weighed like a fused score; a candidate the gate
// dropped keeps its own fused score and the better score.
func (p *Pipeline) addProposals(ctx context.Context, tx driver.ReadTx, props []proposal) error {
	cfg := p.cfg
	// Load the proposals the loop below may need at once (a few times
	// the budget: those beyond are read one by one if ever reached).
	var ids []int64
	for _, pr := range props {
		if p.byID[pr.id] == nil && len(ids) < 4*cfg.ExpandBudget {
			ids = append(ids, pr.id)
		}
	}
	if err := p.prefetch(tx, ids); err != nil {
		return err
	}
	floor, protect := p.protectedFloor()
	added := 0
	for _, pr := range props {
		if added == cfg.ExpandBudget {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		c := p.byID[pr.id]
		if c != nil && ((c.live() && c.spared == "") || c.mem == nil) {
			continue // already in the result, or not visible
		}
		if c == nil {
			m, _, err := p.resolve(tx, pr.id)
			if err != nil {
				return err
			}
			if m == nil {
				continue
			}
			c = &candidate{id: pr.id, mem: m}
			p.cands = append(p.cands, c)
			p.byID[pr.id] = c
		}
		own, fused := c.score, c.fused
		c.fused = pr.score
		weigh(c, p.ref, cfg)
		if protect && c.score >= floor {
			// Below the protected keyword hits, in the proposals' order.
			floor = math.Nextafter(floor, math.Inf(-1))
			c.score = floor
		}
		if c.retrieved() {
			c.fused, c.score = fused, max(c.score, own)
		}
		c.expanded, c.origin, c.after = true, pr.origin, false
		added++
	}
	return nil
}

// Values of SearchConfig.ExpandProtectBy.
const (
	// ProtectKeyword measures a keyword hit by its keyword score.
	ProtectKeyword = "keyword"
	// ProtectWeighed measures it by its score in a keyword search of the
	// same request: weighed by time, length, trust and the rest.
	ProtectWeighed = "weighed"
)

// protectedFloor returns the score expansion ranks below, and whether
// there is one: the lowest score among the first Limit live candidates
// that keyword search found with at least ExpandProtect × the best keyword
// score (ExpandProtectBy: the keyword score, or keyword search's own
// score, weighed). A neighbour vouched for by a seed is a guess; a strong
// keyword hit already in the result is evidence, and expansion does not
// push it out (ExpandProtect ≤ 0: off).
func (p *Pipeline) protectedFloor() (float64, bool) {
	if p.cfg.ExpandProtect <= 0 {
		return 0, false
	}
	kw := func(c *candidate) float64 { return c.kwScore }
	if p.cfg.ExpandProtectBy == ProtectWeighed {
		kw = (*candidate).keywordAlone
	}
	best := 0.0
	for _, c := range p.cands {
		if c.kwRank > 0 && c.mem != nil {
			best = max(best, kw(c))
		}
	}
	floor, ok, n := 0.0, false, 0
	for _, c := range p.cands { // sorted best first
		if n == p.req.Limit {
			break
		}
		if !c.live() {
			continue
		}
		n++
		if c.kwRank > 0 && best > 0 && kw(c) >= p.cfg.ExpandProtect*best {
			floor, ok = c.score, true
		}
	}
	return floor, ok
}

// sessionAround returns the members of m's session within w places of m
// (see Sessions.around), as tx sees them. A backend that indexes sessions
// (SessionReader) answers from its index; for any other, sess does.
func sessionAround(ctx context.Context, tx driver.ReadTx, sess *Sessions, m *driver.Memory, w int) ([]sessionNeighbour, error) {
	if m == nil || m.Session == "" {
		return nil, nil
	}
	if sr, ok := tx.(driver.SessionReader); ok {
		ms, err := sr.Session(m.Namespace, m.Session)
		if err != nil {
			return nil, fmt.Errorf("session of memory %d: %w", m.ID, err)
		}
		sortSession(ms)
		return neighbours(ms, m.ID, w), nil
	}
	if err := sess.sync(ctx, tx); err != nil {
		return nil, err
	}
	return sess.around(m.ID, w), nil
}

// sortSession puts a session's members in session order: event time
// (valid_from), then ingest time (created_at), then id.
func sortSession(ms []driver.SessionMember) {
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if !a.ValidFrom.Equal(b.ValidFrom) {
			return a.ValidFrom.Before(b.ValidFrom)
		}
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.Before(b.CreatedAt)
		}
		return a.ID < b.ID
	})
}

// neighbours returns the members of ms (in session order) within w places
// of id, nearest first, earlier before later at equal distance.
func neighbours(ms []driver.SessionMember, id int64, w int) []sessionNeighbour {
	at := -1
	for i := range ms {
		if ms[i].ID == id {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	var out []sessionNeighbour
	for d := 1; d <= w; d++ {
		for _, off := range []int{-d, d} {
			if j := at + off; j >= 0 && j < len(ms) {
				out = append(out, sessionNeighbour{ms[j].ID, off, d})
			}
		}
	}
	return out
}

// Sessions orders the memories of each session so that expansion can
// find a turn's neighbours in a backend that does not index sessions (no
// SessionReader). It is built by one Scan on first use (its zero value is
// empty) and then kept in step with the change log, like the vector index. It
// is safe for concurrent use.
type Sessions struct {
	mu      sync.Mutex
	built   bool
	seq     uint64
	of      map[int64]sessionKey
	members map[sessionKey][]driver.SessionMember
	dirty   map[sessionKey]bool // members to sort again
}

type sessionKey struct{ ns, session string }

type sessionNeighbour struct {
	id     int64
	offset int // position relative to the seed
	dist   int // |offset|
}

// sync brings the index up to date with the change log as tx sees it.
func (x *Sessions) sync(ctx context.Context, tx driver.ReadTx) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.update(ctx, tx); err != nil {
		return fmt.Errorf("sync session index: %w", err)
	}
	for k := range x.dirty {
		sortSession(x.members[k])
		delete(x.dirty, k)
	}
	return nil
}

func (x *Sessions) update(ctx context.Context, tx driver.ReadTx) error {
	seq, err := tx.Seq()
	if err != nil || (x.built && seq == x.seq) {
		return err
	}
	if !x.built {
		x.of, x.members, x.dirty = map[int64]sessionKey{}, map[sessionKey][]driver.SessionMember{}, map[sessionKey]bool{}
		err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			x.put(m)
			return ctx.Err()
		})
		if err != nil {
			return err
		}
	} else {
		var ids []int64
		err := tx.Changes(x.seq, func(c driver.Change) error {
			x.remove(c.ID)
			if !c.Deleted {
				ids = append(ids, c.ID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = driver.EachMemory(tx, ids, func(m *driver.Memory) error {
			x.put(m)
			return nil
		})
		if err != nil {
			return err
		}
	}
	x.built, x.seq = true, seq
	return nil
}

func (x *Sessions) put(m *driver.Memory) {
	if m.Session == "" {
		return
	}
	k := sessionKey{m.Namespace, m.Session}
	x.of[m.ID] = k
	x.members[k] = append(x.members[k], driver.SessionMember{ID: m.ID, ValidFrom: m.ValidFrom, CreatedAt: m.CreatedAt})
	x.dirty[k] = true
}

func (x *Sessions) remove(id int64) {
	k, ok := x.of[id]
	if !ok {
		return
	}
	delete(x.of, id)
	ms := x.members[k]
	for i := range ms {
		if ms[i].ID == id {
			x.members[k] = append(ms[:i], ms[i+1:]...)
			break
		}
	}
	if len(x.members[k]) == 0 {
		delete(x.members, k)
	}
}

// around returns the members within w places of id in its session,
// nearest first, earlier before later at equal distance.
func (x *Sessions) around(id int64, w int) []sessionNeighbour {
	x.mu.Lock()
	defer x.mu.Unlock()
	k, ok := x.of[id]
	if !ok {
		return nil
	}
	return neighbours(x.members[k], id, w)
}
