package text

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFrontier adds random (frequency, length) pairs to frontiers and
// checks after each: the points rise strictly in both; every pair added is
// dominated by a point (so Bound is at least its Term under any corpus
// figures); with fewer distinct frequencies than MaxFrontier, every point
// is a pair that was added and that no other pair dominates (the frontier
// is exact); the encoding round-trips.
func TestFrontier(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 35))
	for round := range 300 {
		var f Frontier
		var added []FrontierPoint
		spread := 1 + rng.IntN(200) // few distinct pairs in some rounds, many in others
		for range 1 + rng.IntN(400) {
			p := FrontierPoint{Freq: 1 + rng.IntN(1+spread/10), Len: 1 + rng.IntN(spread)}
			if p.Freq > p.Len {
				p.Len = p.Freq
			}
			added = append(added, p)
			f, _ = f.Add(p)
			if len(f) > MaxFrontier {
				t.Fatalf("round %d: %d points", round, len(f))
			}
			for i := 1; i < len(f); i++ {
				if f[i].Freq <= f[i-1].Freq || f[i].Len <= f[i-1].Len {
					t.Fatalf("round %d: not rising: %v", round, f)
				}
			}
		}
		dominated := func(p FrontierPoint, by []FrontierPoint) bool {
			return slices.ContainsFunc(by, func(q FrontierPoint) bool { return q != p && q.Freq >= p.Freq && q.Len <= p.Len })
		}
		for _, p := range added {
			if !slices.Contains(f, p) && !dominated(p, f) {
				t.Fatalf("round %d: %v is not dominated by %v", round, p, f)
			}
		}
		exact := true
		for _, p := range f {
			if !slices.Contains(added, p) || dominated(p, added) {
				exact = false
			}
		}
		// With fewer distinct frequencies than MaxFrontier no merge happens.
		if 1+spread/10 < MaxFrontier && !exact {
			t.Fatalf("round %d: %v is not the frontier of the pairs added", round, f)
		}
		c := Corpus{Docs: uint64(1 + rng.IntN(1000)), Tokens: uint64(1 + rng.IntN(100000))}
		idf := rng.Float64() * 10
		b := f.Bound(c, idf)
		for _, p := range added {
			if term := c.Term(p.Freq, idf, p.Len); term > b {
				t.Fatalf("round %d: %v adds %g, above the bound %g", round, p, term, b)
			}
		}
		if b > MaxTerm(idf) {
			t.Fatalf("round %d: bound %g above MaxTerm %g", round, b, MaxTerm(idf))
		}
		enc, _ := f.AppendBinary(nil)
		dec, err := DecodeFrontier(enc)
		if err != nil || !slices.Equal(dec, f) {
			t.Fatalf("round %d: %v decodes as %v, %v", round, f, dec, err)
		}
	}
	// Adding a dominated pair changes nothing; one that dominates replaces.
	f, _ := Frontier(nil).Add(FrontierPoint{2, 10})
	if _, changed := f.Add(FrontierPoint{1, 12}); changed {
		t.Error("a dominated pair changed the frontier")
	}
	if g, changed := f.Add(FrontierPoint{3, 9}); !changed || !slices.Equal(g, Frontier{{3, 9}}) {
		t.Errorf("a dominating pair gives %v, %v", g, changed)
	}
	for _, b := range [][]byte{{0x80}, {1}, {2, 5, 1, 6}, {2, 5, 3, 5}} {
		if _, err := DecodeFrontier(b); err == nil {
			t.Errorf("DecodeFrontier(% x): no error", b)
		}
	}
}
