package hnsw

import (
	"slices"
	"testing"
)

// checkInvariants verifies the graph's structure; tests call it after every
// change, as bbolt runs its consistency check after every test.
func checkInvariants(t *testing.T, ix *Index) {
	t.Helper()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	live, tombs, free := 0, 0, 0
	counts := map[attrKey]int{}
	indeg := make([]uint32, len(ix.nodes))
	for i, n := range ix.nodes {
		slot := uint32(i)
		switch n.state {
		case stateLive:
			live++
			counts[attrKey{n.ns, n.pool}]++
			if got, ok := ix.byID[n.id]; !ok || got != slot {
				t.Fatalf("live slot %d (id %d) not in byID (got %d, %v)", slot, n.id, got, ok)
			}
		case stateTomb:
			tombs++
		case stateFree:
			free++
			if !slices.Contains(ix.free, slot) {
				t.Fatalf("free slot %d missing from the free list", slot)
			}
			continue
		}
		for l := 0; l <= int(n.level); l++ {
			nb := ix.neighbors(slot, l)
			if len(nb) > ix.maxLinks(l) {
				t.Fatalf("slot %d level %d has %d links, cap %d", slot, l, len(nb), ix.maxLinks(l))
			}
			for j, x := range nb {
				if slices.Contains(nb[:j], x) {
					t.Fatalf("slot %d links to slot %d twice at level %d", slot, x, l)
				}
				if x == slot {
					t.Fatalf("slot %d links to itself at level %d", slot, l)
				}
				if ix.nodes[x].state == stateFree || int(ix.nodes[x].level) < l {
					t.Fatalf("slot %d level %d links to slot %d (state %d, level %d)",
						slot, l, x, ix.nodes[x].state, ix.nodes[x].level)
				}
				if l == 0 {
					indeg[x]++
				}
			}
		}
	}
	if live != ix.live || tombs != ix.tombs || free != len(ix.free) || live != len(ix.byID) {
		t.Fatalf("counts: live %d/%d/%d, tombstones %d/%d, free %d/%d",
			live, ix.live, len(ix.byID), tombs, ix.tombs, free, len(ix.free))
	}
	if !slices.Equal(indeg, ix.indeg) {
		t.Fatalf("in-degree counts are off")
	}
	for k, n := range counts {
		if ix.counts[k] != n {
			t.Fatalf("count for %v is %d, want %d", k, ix.counts[k], n)
		}
	}
	if live+tombs == 0 {
		if ix.top != -1 {
			t.Fatalf("empty graph has top level %d", ix.top)
		}
		return
	}
	e := ix.nodes[ix.entry]
	if e.state == stateFree || int(e.level) != ix.top {
		t.Fatalf("entry point %d: state %d level %d, top %d", ix.entry, e.state, e.level, ix.top)
	}
	// Every live node must be reachable from the entry point on level 0,
	// or searches could never return it.
	seen := make([]bool, len(ix.nodes))
	stack := []uint32{ix.entry}
	seen[ix.entry] = true
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, x := range ix.neighbors(s, 0) {
			if !seen[x] {
				seen[x] = true
				stack = append(stack, x)
			}
		}
	}
	unreachable := 0
	for i, n := range ix.nodes {
		if n.state == stateLive && !seen[i] {
			unreachable++
		}
	}
	if unreachable > 0 {
		t.Fatalf("%d of %d live nodes are unreachable from the entry point", unreachable, live)
	}
}
