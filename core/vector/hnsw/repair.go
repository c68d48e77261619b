package hnsw

import "slices"

// maxDeadHops bounds how many tombstones repair walks through, per node and
// level, to find replacement neighbours.
const maxDeadHops = 64

// repair removes every tombstone from the graph. Each live node that links
// to a tombstone at some level gets its list re-selected, with the
// heuristic, from its live neighbours and the live nodes reachable through
// the tombstones it linked to (the neighbours' neighbours that deletion
// would otherwise cut off); a node left with no candidate at all is
// reconnected by a search from the entry point, as on insert. Newly chosen
// neighbours link back when their lists have room, so that a node whose
// in-links all came from tombstones stays reachable. Then the tombstones'
// slots are cleared (vectors zeroed) and freed for reuse, and any live node
// the entry point cannot reach is linked back in. The caller holds the write
// lock.
func (ix *Index) repair() {
	if ix.tombs == 0 {
		ix.reconnectUnreachable(ix.build)
		return
	}
	if ix.live == 0 {
		ix.freeTombs()
		ix.entry, ix.top = 0, -1
		return
	}
	if ix.nodes[ix.entry].state != stateLive {
		best := -1
		for slot, n := range ix.nodes {
			if n.state == stateLive && (best < 0 || n.level > ix.nodes[best].level) {
				best = slot
			}
		}
		ix.entry, ix.top = uint32(best), int(ix.nodes[best].level)
	}
	type orphan struct {
		slot  uint32
		level int
	}
	var orphans []orphan
	s := ix.build
	for i := range ix.nodes {
		slot := uint32(i)
		n := &ix.nodes[slot]
		if n.state != stateLive {
			continue
		}
		for l := 0; l <= int(n.level); l++ {
			if !slices.ContainsFunc(ix.neighbors(slot, l), ix.dead) {
				continue
			}
			cands := ix.replacements(s, slot, l)
			if len(cands) == 0 {
				ix.setNeighbors(slot, l, nil)
				orphans = append(orphans, orphan{slot, l})
				continue
			}
			sortCands(cands)
			sel := ix.selectNeighbors(s, cands, ix.maxLinks(l))
			ix.setNeighbors(slot, l, sel)
			for _, x := range ix.neighbors(slot, l) {
				ix.linkIfRoom(x, slot, l)
			}
		}
	}
	for _, o := range orphans {
		ix.reconnect(s, o.slot, o.level)
	}
	ix.freeTombs()
	ix.reconnectUnreachable(s)
}

// reconnectUnreachable finds the live nodes that no path from the entry
// point reaches on level 0 (their in-links all came from tombstones, or a
// few nodes link only among themselves) and links each into the graph: a
// search from the entry point finds its nearest reachable nodes, and the
// nearest one takes it into its list. The caller holds the write lock and
// has removed all tombstones.
func (ix *Index) reconnectUnreachable(s *searcher) {
	ix.unwalked = 0
	if ix.top < 0 {
		return
	}
	seen := make([]bool, len(ix.nodes))
	var stack []uint32
	walk := func(from uint32) {
		seen[from] = true
		stack = append(stack[:0], from)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, y := range ix.neighbors(x, 0) {
				if !seen[y] {
					seen[y] = true
					stack = append(stack, y)
				}
			}
		}
	}
	walk(ix.entry)
	for i, n := range ix.nodes {
		slot := uint32(i)
		if n.state != stateLive || seen[slot] {
			continue
		}
		q := ix.vec(slot, &s.qv)
		ep := ix.cand(q, ix.entry)
		for l := ix.top; l > 0; l-- {
			ep = ix.greedy(s, q, ep, l)
		}
		found := ix.searchLayer(s, q, []cand{ep}, ix.cfg.EfConstruction, 0, notSelf(slot))
		if len(found) == 0 {
			continue // cannot happen: the entry point is live and reachable
		}
		if len(ix.neighbors(slot, 0)) == 0 {
			ix.setNeighbors(slot, 0, ix.selectNeighbors(s, found, ix.maxLinks(0)))
		}
		ix.link(s, found[0].slot, slot, 0) // keeps slot: it has no in-link
		walk(slot)
	}
}

func (ix *Index) dead(slot uint32) bool { return ix.nodes[slot].state == stateTomb }

// replacements returns the live candidates to replace slot's neighbours at
// level: its live neighbours and the live nodes found by walking through its
// tombstoned neighbours (and their tombstoned neighbours, up to maxDeadHops).
func (ix *Index) replacements(s *searcher, slot uint32, level int) []cand {
	base := ix.vec(slot, &s.bv)
	s.vis.reset(len(ix.nodes))
	s.vis.visit(slot)
	s.tmp = s.tmp[:0]
	var dead []uint32
	for _, x := range ix.neighbors(slot, level) {
		if !s.vis.visit(x) {
			continue
		}
		if ix.dead(x) {
			dead = append(dead, x)
		} else {
			s.tmp = append(s.tmp, ix.cand(base, x))
		}
	}
	for i := 0; i < len(dead) && i < maxDeadHops; i++ {
		for _, y := range ix.neighbors(dead[i], level) {
			if !s.vis.visit(y) {
				continue
			}
			if ix.dead(y) {
				dead = append(dead, y)
			} else {
				s.tmp = append(s.tmp, ix.cand(base, y))
			}
		}
	}
	return s.tmp
}

// linkIfRoom adds to's slot to from's neighbours at level if it is missing
// and the list is not full.
func (ix *Index) linkIfRoom(from, to uint32, level int) {
	b := ix.block(from, level)
	n := int(b[0])
	if n >= ix.maxLinks(level) || slices.Contains(b[1:1+n], to) {
		return
	}
	b[1+n] = to
	b[0]++
	if level == 0 {
		ix.indeg[to]++
	}
}

// notSelf accepts live nodes other than one slot.
type notSelf uint32

func (x notSelf) accept(ix *Index, slot uint32) bool {
	return slot != uint32(x) && ix.nodes[slot].state == stateLive
}

// reconnect links a live node that lost every neighbour at level by
// searching for it from the entry point, as insert does.
func (ix *Index) reconnect(s *searcher, slot uint32, level int) {
	q := ix.vec(slot, &s.qv)
	ep := ix.cand(q, ix.entry)
	for l := ix.top; l > level; l-- {
		ep = ix.greedy(s, q, ep, l)
	}
	found := ix.searchLayer(s, q, []cand{ep}, ix.cfg.EfConstruction, level, notSelf(slot))
	ix.setNeighbors(slot, level, ix.selectNeighbors(s, found, ix.maxLinks(level)))
	for _, x := range ix.neighbors(slot, level) {
		ix.link(s, x, slot, level)
	}
}

// freeTombs clears every tombstone's slot and pushes it on the free list,
// lowest slot on top so that reuse fills the front of the arrays first.
func (ix *Index) freeTombs() {
	for i := len(ix.nodes) - 1; i >= 0; i-- {
		slot := uint32(i)
		if ix.nodes[slot].state != stateTomb {
			continue
		}
		ix.setNeighbors(slot, 0, nil)
		ix.nodes[slot] = node{state: stateFree}
		ix.vecs.Clear(int(slot))
		ix.upper[slot] = nil
		ix.free = append(ix.free, slot)
	}
	ix.tombs = 0
}
