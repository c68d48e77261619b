package retrieve

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// fusedOrder fuses kw and vec under cfg and returns the candidates' ids
// by fused score, ties by id.
func fusedOrder(kw, vec []driver.Hit, cfg SearchConfig) []int64 {
	cfg = cfg.withDefaults()
	cs := fuse(kw, vec, nil, &cfg)
	slices.SortStableFunc(cs, func(a, b *candidate) int {
		switch {
		case a.fused > b.fused:
			return -1
		case a.fused < b.fused:
			return 1
		}
		return int(a.id - b.id)
	})
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.id
	}
	return ids
}

// TestFuseKeepsAConfidentKeywordOrder: the keyword list found the
// question's words in memories 1–4; the vector list proposes other
// memories (a query its embedding does not capture) and shares none of
// them. Under the agreement rule it adds no evidence and the keyword order
// stands; without it, its best guess (7) jumps over keyword hits.
func TestFuseKeepsAConfidentKeywordOrder(t *testing.T) {
	kw := []driver.Hit{{ID: 1, Score: 10}, {ID: 2, Score: 6}, {ID: 3, Score: 5}, {ID: 4, Score: 4.5}}
	vec := []driver.Hit{{ID: 7, Score: 0.9}, {ID: 8, Score: 0.85}, {ID: 9, Score: 0.8}, {ID: 6, Score: 0.5}, {ID: 5, Score: 0.3}}
	if got := fusedOrder(kw, vec, SearchConfig{VectorAgreement: -1}); slices.Index(got, 7) > slices.Index(got, 4) {
		t.Fatalf("without the rule the vector list should move the ranking (the case is not testing anything): %v", got)
	}
	got := fusedOrder(kw, vec, SearchConfig{VectorAgreement: 1})
	if want := []int64{1, 2, 3, 4}; !slices.Equal(got[:4], want) {
		t.Fatalf("fused order %v, want the keyword hits %v first, in keyword order", got, want)
	}
	cfg := SearchConfig{VectorAgreement: 1}.withDefaults()
	if w := cfg.vectorWeight(kw, vec); w != 0 {
		t.Errorf("a vector list sharing nothing with the keyword list weighs %v, want 0", w)
	}
}

// TestFuseLetsAVectorOnlyHitIn: when the two lists agree on most of
// their best memories, the vector list counts, and a memory only it found
// (9, a paraphrase of the question) enters above the weaker keyword hits.
func TestFuseLetsAVectorOnlyHitIn(t *testing.T) {
	kw := []driver.Hit{{ID: 1, Score: 3}, {ID: 2, Score: 2}, {ID: 3, Score: 1.5}, {ID: 4, Score: 1}}
	vec := []driver.Hit{{ID: 9, Score: 0.95}, {ID: 1, Score: 0.9}, {ID: 2, Score: 0.85}, {ID: 3, Score: 0.8}, {ID: 5, Score: 0.4}}
	got := fusedOrder(kw, vec, SearchConfig{VectorAgreement: 1})
	if i := slices.Index(got, 9); i < 0 || i > slices.Index(got, 4) {
		t.Fatalf("fused order %v: the vector-only hit 9 should rank above keyword hit 4", got)
	}
	if a := agreement(kw, vec, 10); !near(a, 0.75) {
		t.Errorf("agreement %v, want 3 of 4", a)
	}
}

// TestExpandKeepsStrongKeywordHits: the question's words are in memory 1
// (three of them) and in 5 and 10 (one each). Session expansion proposes
// 1's neighbours at 0.6 and 0.3 of its score, above 5 and 10; with
// expand_protect 0.3 every keyword hit scoring at least 0.3 of the best is
// kept in its place and the neighbours come after them.
func TestExpandKeepsStrongKeywordHits(t *testing.T) {
	req := SearchRequest{Query: "adopted kitten Miso train", Mode: ModeKeyword, Limit: 3}
	for _, tc := range []struct {
		protect float64
		want    []int64
	}{{-1, []int64{1, 2, 10}}, {0.3, []int64{1, 10, 5}}, {0.5, []int64{1, 2, 10}}} {
		d, _ := kitten(t, SearchConfig{ExpandProtect: tc.protect}, nil)
		p, err := Run(context.Background(), d, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := hitIDs(p.Result()); !slices.Equal(got, tc.want) {
			t.Errorf("expand_protect %v: hits %v, want %v", tc.protect, got, tc.want)
		}
	}
}

func TestAgreementAndProtectDefaultsAndValidation(t *testing.T) {
	c := DefaultSearchConfig()
	if c.VectorAgreement != 0.1 || c.ExpandProtect != 0.8 {
		t.Fatalf("defaults: vector_agreement %v, expand_protect %v", c.VectorAgreement, c.ExpandProtect)
	}
	for _, bad := range []SearchConfig{{VectorAgreement: 1.5}, {ExpandProtect: 2}} {
		if err := bad.withDefaults().validate(); err == nil || !strings.Contains(err.Error(), "must be at most 1") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if c := (SearchConfig{VectorAgreement: -1, ExpandProtect: -1}).withDefaults(); c.validate() != nil || c.VectorAgreement != -1 {
		t.Errorf("off (-1) is valid and kept: %v", c.validate())
	}
}

// TestProtectedFloorWeighsKeywordHits: memory 2 has nearly the best
// keyword score but lies outside the time the question names (time factor
// 1 against 1's 2): by its bare keyword score it is a strong hit that
// expansion must rank below (floor: its score), weighed as keyword search
// ranks it it is not, and only 1 is protected.
func TestProtectedFloorWeighsKeywordHits(t *testing.T) {
	mk := func(id int64, kw, time, score float64) *candidate {
		return &candidate{id: id, kwRank: int(id), kwScore: kw, kwFused: kw / 10, score: score,
			significance: 1, trust: 1, recency: 1, pool: 1, length: 1, timeFactor: time, mem: &driver.Memory{ID: id}}
	}
	for _, tc := range []struct {
		by    string
		floor float64
	}{{ProtectKeyword, 0.9}, {ProtectWeighed, 2}} {
		cfg := SearchConfig{ExpandProtectBy: tc.by}.withDefaults()
		p := &Pipeline{cfg: &cfg, req: SearchRequest{Limit: 10}, cands: []*candidate{mk(1, 10, 2, 2), mk(2, 9, 1, 0.9)}}
		if floor, ok := p.protectedFloor(); !ok || floor != tc.floor {
			t.Errorf("expand_protect_by %s: floor %v (%v), want %v", tc.by, floor, ok, tc.floor)
		}
	}
	if c := DefaultSearchConfig(); c.ExpandProtectBy != ProtectWeighed || c.KeepKeywordRank != KeepRankLast {
		t.Errorf("defaults: expand_protect_by %q, keep_keyword_rank %q", c.ExpandProtectBy, c.KeepKeywordRank)
	}
	for _, bad := range []SearchConfig{{ExpandProtectBy: "bm25"}, {KeepKeywordRank: "first"}} {
		if err := bad.withDefaults().validate(); !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("%+v: %v, want driver.ErrInvalid", bad, err)
		}
	}
}
