package core_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench/dataset"
)

// locomoPath is LoCoMo's dev split, shared by the benchmarks.
const locomoPath = "../../shared/data/locomo/locomo-dev.json"

// TestContradictionDetectorOnLoCoMo measures how noisy the contradiction
// detector is: every LoCoMo dev turn is remembered one at a time, as an
// agent would, with its speaker as entity — so every earlier turn of the
// same speaker shares an entity with it and only similarity, word overlap
// and a disagreement of numbers, dates or negation decide. Conversations
// hold few real contradictions, so a flagged turn is almost always a false
// positive; the test fails when more than 1% of turns are flagged.
func TestContradictionDetectorOnLoCoMo(t *testing.T) {
	path := filepath.Join("..", locomoPath)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("LoCoMo dev set not found at %s", path)
	}
	if testing.Short() {
		t.Skip("ingests every LoCoMo dev turn one at a time")
	}
	ds, err := dataset.Load("locomo:"+path, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The defaults, and a looser setting to show the detector does fire on
	// this data when its guards are relaxed (logged, not asserted).
	for _, g := range []core.GovernConfig{{}, {ContradictionSimilarity: 0.5, ContradictionOverlap: 0.25}} {
		g.Contradictions = core.ContradictFlag
		turns, flagged := 0, 0
		for _, c := range ds.Corpora {
			e := openOn(t, "sqlite", t.TempDir(), core.Options{Govern: g}, 0)
			for _, d := range c.Docs {
				m, err := e.Remember(ctx, d.Input)
				if err != nil {
					t.Fatal(err)
				}
				turns++
				es, err := e.Edges(ctx, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, ed := range es {
					if ed.From == m.ID && ed.Type == core.EdgeContradicts {
						flagged++
						old, _ := e.Get(ctx, ed.To)
						t.Logf("flagged %d %q\n  against %d %q (%s)", m.ID, m.Content, old.ID, old.Content, ed.Source)
						break
					}
				}
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
		}
		rate := float64(flagged) / float64(turns)
		t.Logf("LoCoMo dev, similarity ≥ %v, overlap ≥ %v: %d of %d turns flagged as contradicting an earlier turn (%.2f%%)",
			g.ContradictionSimilarity, g.ContradictionOverlap, flagged, turns, 100*rate)
		if g.ContradictionSimilarity == 0 && rate > 0.01 {
			t.Errorf("the detector flagged %.2f%% of LoCoMo turns; it must stay conservative (≤ 1%%)", 100*rate)
		}
	}
}
