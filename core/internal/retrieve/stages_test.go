package retrieve

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestFuseWeightsRanks(t *testing.T) {
	cfg := SearchConfig{RRFK: 10, KeywordWeight: 1, VectorWeight: 0.5}
	cs := fuse([]driver.Hit{{ID: 1, Score: 9}, {ID: 2, Score: 3}}, []driver.Hit{{ID: 2, Score: 0.9}, {ID: 3, Score: 0.5}}, []driver.Hit{{ID: 4, Score: 2}}, &cfg)
	if len(cs) != 4 {
		t.Fatalf("%d candidates, want 4", len(cs))
	}
	by := map[int64]*candidate{}
	for _, c := range cs {
		by[c.id] = c
	}
	if c := by[2]; c.kwRank != 2 || c.vecRank != 1 || c.kwScore != 3 || c.similarity != 0.9 || !near(c.fused, 1.0/12+0.5/11) {
		t.Fatalf("candidate 2 = %+v", *c)
	}
	if c := by[4]; c.histRank != 1 || !near(c.fused, 1.0/11) {
		t.Fatalf("history candidate = %+v", *c)
	}
	if !near(by[1].fused, 1.0/11) || !near(by[3].fused, 0.5/12) {
		t.Fatalf("fused 1 = %v, 3 = %v", by[1].fused, by[3].fused)
	}
}

func TestWeighFactors(t *testing.T) {
	if f := significanceFactor(10, 0.2); !near(f, 1.2) {
		t.Errorf("significance 10: %v", f)
	}
	if f := significanceFactor(1, 0.2); !near(f, 0.84) {
		t.Errorf("significance 1: %v", f)
	}
	if f := trustFactor(0.2, 0.5); !near(f, 0.6) {
		t.Errorf("trust 0.2: %v", f)
	}
	day := 24 * time.Hour
	if f := recencyFactor(30*day, 30*day, 0.1); !near(f, 0.95) {
		t.Errorf("recency at one half-life: %v", f)
	}
	if f := recencyFactor(-day, 30*day, 0.1); f != 1 {
		t.Errorf("recency of a future version: %v", f)
	}
	if poolFactor(driver.PoolRaw, 0.05) != 1 || !near(poolFactor(driver.PoolMemory, 0.05), 1.05) || poolFactor(driver.PoolKnowledge, -1) != 1 {
		t.Error("pool factor")
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := DefaultSearchConfig()
	c := &candidate{fused: 1, mem: &driver.Memory{Significance: 5, Trust: driver.Trust{Score: 1}, UpdatedAt: now, Pool: driver.PoolRaw}}
	weigh(c, now, &cfg)
	if c.score != 1 {
		t.Fatalf("neutral memory score %v, want the fused score", c.score)
	}
}

func TestGateVerdicts(t *testing.T) {
	// The thresholds alone: no keyword hit is spared as keyword search's
	// own result (see TestGateKeepsKeywordSearchsResult).
	cfg := SearchConfig{MinSimilarity: 0.3, RelativeSimilarity: 0.6, RelativeKeyword: 0.25, TrustGate: 1, KeepKeyword: -1}.withDefaults()
	mk := func(id int64, kwRank int, kwScore float64, vecRank int, sim, trust float64) *candidate {
		return &candidate{id: id, kwRank: kwRank, kwScore: kwScore, vecRank: vecRank, similarity: sim,
			mem: &driver.Memory{ID: id, Trust: driver.Trust{Score: trust}}}
	}
	cs := []*candidate{
		mk(1, 1, 10, 1, 0.9, 1),    // both retrievers: kept
		mk(2, 0, 0, 2, 0.7, 1),     // vector only, strong: kept
		mk(3, 0, 0, 3, 0.25, 1),    // vector only, below min similarity
		mk(4, 0, 0, 4, 0.5, 1),     // vector only, below 60% of the best (0.54)
		mk(5, 2, 5, 0, 0, 1),       // keyword only, half the best: kept
		mk(6, 3, 2, 0, 0, 1),       // keyword only, a fifth of the best: dropped
		mk(7, 4, 3, 0, 0, 1),       // keyword only, 30% of the best, certain: kept
		mk(8, 5, 3, 0, 0, 0.2),     // same match, contradicted: needs 1.8×25% = 45%
		mk(9, 0, 0, 5, 0.55, 0.95), // vector only, trust raises 0.54 to 0.567
		mk(10, 6, 1, 6, 0.31, 1),   // found by both, weak in both
		mk(11, 7, 1, 7, 0.6, 1),    // found by both, strong in one
	}
	gate(cs, &cfg, true, 10)
	want := map[int64]string{3: "below 0.300", 4: "below 60% of the best", 6: "keyword score 2 below 25% of the best (10)",
		8: "raised ×1.80", 9: "below 63% of the best", 10: "similarity 0.310 below 60% of the best (0.900); keyword score 1 below"}
	for _, c := range cs {
		w, drop := want[c.id]
		if drop != (c.dropped != "") || drop && !strings.Contains(c.dropped, w) {
			t.Errorf("candidate %d: verdict %q, want dropped=%v (%q)", c.id, c.dropped, drop, w)
		}
	}
	off := cfg
	off.RelativeKeyword = -1
	gate(cs, &off, true, 10)
	if cs[5].dropped != "" {
		t.Errorf("with the keyword gate off candidate 6 was dropped: %s", cs[5].dropped)
	}
	// A single-retriever search applies the absolute threshold only.
	gate(cs, &cfg, false, 10)
	for _, c := range cs {
		if (c.dropped != "") != (c.id == 3) {
			t.Errorf("single retriever: candidate %d verdict %q", c.id, c.dropped)
		}
	}
}

// TestGateKeepsKeywordSearchsResult: keyword search alone would return
// memories 1, 2 and 3 at limit 3 (keyword scores 10, 5 and 2; 5 scores 2.2
// but is a long turn and weighs less, 4 scores 1.5). In a hybrid search
// the relative keyword threshold (25% of the best, 2.5) would drop 3, 4
// and 5; keyword search's own result is spared, so only 4 and 5 go, and
// explain can say why 3 was kept.
func TestGateKeepsKeywordSearchsResult(t *testing.T) {
	mk := func(id int64, kwRank int, kwScore, length float64) *candidate {
		return &candidate{id: id, kwRank: kwRank, kwScore: kwScore, kwFused: kwScore / 10,
			significance: 1, trust: 1, recency: 1, pool: 1, length: length, timeFactor: 1,
			mem: &driver.Memory{ID: id, Trust: driver.Trust{Score: 1}}}
	}
	cands := func() []*candidate {
		return []*candidate{mk(1, 1, 10, 1), mk(2, 2, 5, 1), mk(5, 3, 2.2, 0.4), mk(3, 4, 2, 1), mk(4, 5, 1.5, 1)}
	}
	dropped := func(cs []*candidate) []int64 {
		var out []int64
		for _, c := range cs {
			if c.dropped != "" {
				out = append(out, c.id)
			}
		}
		slices.Sort(out)
		return out
	}
	off := SearchConfig{RelativeKeyword: 0.25, KeepKeyword: -1}.withDefaults()
	cs := cands()
	gate(cs, &off, true, 3)
	if got := dropped(cs); !slices.Equal(got, []int64{3, 4, 5}) {
		t.Fatalf("keep_keyword off: dropped %v, want 3, 4 and 5 (the case is not testing anything)", got)
	}
	on := SearchConfig{RelativeKeyword: 0.25}.withDefaults()
	cs = cands()
	gate(cs, &on, true, 3)
	if got := dropped(cs); !slices.Equal(got, []int64{4, 5}) {
		t.Fatalf("defaults: dropped %v, want only 4 and 5: 3 is in keyword search's own result at limit 3", got)
	}
	if c := cs[3]; c.id != 3 || !strings.Contains(c.spared, "keyword score 2 below 25% of the best (10)") {
		t.Errorf("candidate %d: spared %q, want the verdict it was spared", c.id, c.spared)
	}
	// Twice the limit (keep_keyword 2): keyword search's first six, so all.
	two := SearchConfig{RelativeKeyword: 0.25, KeepKeyword: 2}.withDefaults()
	cs = cands()
	gate(cs, &two, true, 3)
	if got := dropped(cs); len(got) != 0 {
		t.Errorf("keep_keyword 2: dropped %v, want none", got)
	}
	// A single-retriever search has no relative threshold to spare.
	cs = cands()
	gate(cs, &on, false, 3)
	if got := dropped(cs); len(got) != 0 || cs[3].spared != "" {
		t.Errorf("keyword search: dropped %v, spared %q", got, cs[3].spared)
	}
}

// TestRankKept: memories 3 and 4 are kept only as keyword search's own
// result (spared), 3 scoring above 2, which passed the gate on its own.
// "score" leaves the order; "after" scales 3 and 4 by one factor to just
// below 2, keeping their order; "last" sorts them after every other live
// candidate, whatever their scores.
func TestRankKept(t *testing.T) {
	cands := func() []*candidate {
		mk := func(id int64, score float64, spared string) *candidate {
			return &candidate{id: id, score: score, spared: spared, mem: &driver.Memory{ID: id}}
		}
		return []*candidate{mk(1, 2, ""), mk(3, 1.5, "weak"), mk(2, 1, ""), mk(4, 0.5, "weak")}
	}
	order := func(cs []*candidate) []int64 {
		sortCandidates(cs)
		return ids(cs)
	}
	cs := cands()
	rankKept(cs, KeepRankScore)
	if got := order(cs); !slices.Equal(got, []int64{1, 3, 2, 4}) {
		t.Errorf("score: %v", got)
	}
	cs = cands()
	rankKept(cs, KeepRankAfter)
	if got := order(cs); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Errorf("after: %v, want 3 and 4 below 2", got)
	}
	if c := cs[2]; c.score >= 1 || c.score < 0.999 || math.Abs(c.below-1/1.5) > 1e-6 {
		t.Errorf("after: 3 scores %v (factor %v), want just below 1", c.score, c.below)
	}
	cs = cands()
	rankKept(cs, KeepRankLast)
	cs[1].score = 3 // whatever its score (a reranker's, say)
	if got := order(cs); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Errorf("last: %v, want 3 and 4 after the rest", got)
	}
}

func TestMMRSkipsNearDuplicates(t *testing.T) {
	v := func(x, y float32) driver.Embedding { return driver.Embedding{Model: "m", Vector: []float32{x, y}} }
	cs := []*candidate{
		{id: 1, score: 1.0, mem: &driver.Memory{Embedding: v(1, 0)}},
		{id: 2, score: 0.95, mem: &driver.Memory{Embedding: v(1, 0)}},    // a paraphrase of 1
		{id: 3, score: 0.8, mem: &driver.Memory{Embedding: v(0.6, 0.8)}}, // different
	}
	got := mmr(cs, 2, 0.5)
	if len(got) != 2 || got[0].id != 1 || got[1].id != 3 {
		t.Fatalf("mmr picked %v, want [1 3]", ids(got))
	}
	if !strings.HasPrefix(cs[1].mmr, "not chosen") || !strings.Contains(cs[2].mmr, "was 3 by score") {
		t.Fatalf("decisions: %q, %q", cs[1].mmr, cs[2].mmr)
	}
	if got := mmr(cs, 2, 1); got[1].id != 2 {
		t.Fatalf("lambda 1 must keep the score order, got %v", ids(got))
	}
	// Without embeddings, token overlap stands in for similarity.
	ts := []*candidate{
		{id: 1, score: 1, mem: &driver.Memory{Content: "alice likes jazz"}},
		{id: 2, score: 0.9, mem: &driver.Memory{Content: "alice likes jazz a lot"}},
		{id: 3, score: 0.8, mem: &driver.Memory{Content: "bob plays chess"}},
	}
	if got := mmr(ts, 2, 0.5); got[1].id != 3 {
		t.Fatalf("token mmr picked %v, want [1 3]", ids(got))
	}
}

func ids(cs []*candidate) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.id)
	}
	return out
}

func TestSearchConfigDefaultsAndValidation(t *testing.T) {
	c := SearchConfig{EdgeFactors: map[string]float64{"supports": 0.1, "mentions": 2}}.withDefaults()
	if c.edgeFactor(driver.EdgeSupports) != 0.1 || c.edgeFactor("mentions") != 2 || c.edgeFactor(driver.EdgeDerivedFrom) != 0.9 || c.edgeFactor("other") != otherEdgeFactor {
		t.Fatalf("edge factors = %v", c.EdgeFactors)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	if defaultEdgeFactors[string(driver.EdgeSupports)] != 1 {
		t.Fatal("withDefaults changed the shared default map")
	}
	for name, bad := range map[string]SearchConfig{
		"mmr":         {MMRLambda: 1.5},
		"edge type":   {EdgeFactors: map[string]float64{"Not Snake": 1}},
		"edge factor": {EdgeFactors: map[string]float64{"supports": -1}},
		"session":     {SessionFactor: 2},
		"budget":      {ExpandBudget: -3},
		"keyword":     {RelativeKeyword: 2},
		"nan":         {TrustGate: math.NaN()},
	} {
		if err := bad.withDefaults().validate(); !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("%s: %v, want driver.ErrInvalid", name, err)
		}
	}
}

// TestProposedKeptMemoryRanksAsANeighbour: a memory the gate kept only
// because keyword search alone returns it ranks last (KeepRankLast), but
// when a seed proposes it as a neighbour it ranks like any neighbour: the
// better of its own score and the seed's share, among the rest.
func TestProposedKeptMemoryRanksAsANeighbour(t *testing.T) {
	cfg := SearchConfig{ExpandProtect: -1}.withDefaults()
	mem := func(id int64) *driver.Memory {
		return &driver.Memory{ID: id, Significance: 5, Trust: driver.Trust{Score: 1}, Pool: driver.PoolRaw, Type: driver.TypeFact}
	}
	seed := &candidate{id: 1, kwRank: 1, fused: 2, score: 2, mem: mem(1)}
	other := &candidate{id: 2, kwRank: 2, fused: 1, score: 1, mem: mem(2)}
	kept := &candidate{id: 3, kwRank: 3, fused: 0.1, score: 0.1, spared: "keyword search alone returns it", mem: mem(3)}
	cs := []*candidate{seed, other, kept}
	rankKept(cs, KeepRankLast)
	if !kept.after {
		t.Fatal("the kept memory is not marked to rank last (the case tests nothing)")
	}
	p := &Pipeline{cfg: &cfg, cands: cs, byID: map[int64]*candidate{1: seed, 2: other, 3: kept}}
	if err := p.addProposals(context.Background(), nil, []proposal{{3, 1.5, "1's session"}}); err != nil {
		t.Fatal(err)
	}
	if kept.after || !kept.expanded || kept.score <= 1 {
		t.Fatalf("proposed kept memory: after %v, expanded %v, score %v; want it ranked as a neighbour above 2 (score > 1)", kept.after, kept.expanded, kept.score)
	}
	sortCandidates(cs)
	if got := ids(cs); !slices.Equal(got, []int64{1, 3, 2}) {
		t.Errorf("order %v, want the proposed memory above 2", got)
	}
}
