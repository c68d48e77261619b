package retrieve

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

func TestLengthFactor(t *testing.T) {
	for _, tc := range []struct {
		n     int
		w     float64
		want  float64
		label string
	}{
		{400, 1, 1, "shorter than the pivot"},
		{500, 1, 1, "at the pivot"},
		{1500, 1, 1 / (1 + 1.0986122886681098), "three times the pivot"},
		{1500, 2, 1 / (1 + 2*1.0986122886681098), "weight 2"},
		{1500, 0, 1, "weight 0"},
		{1500, -1, 1, "off"},
	} {
		if got := lengthFactor(tc.n, 500, tc.w); !near(got, tc.want) {
			t.Errorf("%s: lengthFactor(%d, 500, %v) = %v, want %v", tc.label, tc.n, tc.w, got, tc.want)
		}
	}
}

func TestWeighLongTurnsOnly(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := DefaultSearchConfig()
	long := string(make([]byte, 1500))
	for _, tc := range []struct {
		typ  driver.Type
		want float64
	}{
		{driver.TypeTurn, 1 / (1 + 1.0986122886681098)},
		{driver.TypeDocument, 1},
		{driver.TypeFact, 1},
	} {
		c := &candidate{fused: 1, mem: &driver.Memory{Content: long, Type: tc.typ, Significance: 5, Trust: driver.Trust{Score: 1}, UpdatedAt: now, Pool: driver.PoolRaw}}
		weigh(c, now, &cfg)
		if !near(c.score, tc.want) || !near(c.length, tc.want) {
			t.Errorf("%s of 1500 bytes: score %v, length factor %v, want %v", tc.typ, c.score, c.length, tc.want)
		}
	}
}

func TestDiversifySpreadsTheFirstPlacesOverSessions(t *testing.T) {
	mk := func(id int64, session string, score float64) *candidate {
		return &candidate{id: id, score: score, mem: &driver.Memory{ID: id, Session: session}}
	}
	// Session a holds the three best; b's and the session-less memory
	// follow closely.
	cands := []*candidate{mk(1, "a", 1), mk(2, "a", 0.95), mk(3, "a", 0.9), mk(4, "b", 0.85), mk(5, "", 0.7), mk(6, "b", 0.5)}
	ids := func(cs []*candidate) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.id)
		}
		return out
	}
	// Places 1–3 diversified at 0.8: 1 (a), then 4 (b, 0.85) beats 2
	// (0.95·0.8 = 0.76), then 2 (0.76) beats 6 (0.5·0.8) and 5 (0.7); the
	// rest in score order.
	got := ids(diversify(cands, 6, 3, 0.8))
	if want := []int64{1, 4, 2, 3, 5, 6}; !slices.Equal(got, want) {
		t.Fatalf("diversify(top 3, 0.8) = %v, want %v", got, want)
	}
	if !near(cands[1].diversity, 0.8) || cands[0].diversity != 1 || cands[3].diversity != 1 {
		t.Fatalf("diversity factors %v %v %v", cands[0].diversity, cands[1].diversity, cands[3].diversity)
	}
	// A stronger discount puts the session-less memory before a's second.
	for _, c := range cands {
		c.diversity = 0
	}
	got = ids(diversify(cands, 4, 4, 0.5))
	if want := []int64{1, 4, 5, 2}; !slices.Equal(got, want) {
		t.Fatalf("diversify(top 4, 0.5) = %v, want %v", got, want)
	}
	if got := ids(diversify(cands, 10, 5, 0.5)); len(got) != len(cands) {
		t.Fatalf("limit over the candidates: %v", got)
	}
}

func TestLengthAndDiversityValidation(t *testing.T) {
	c := DefaultSearchConfig()
	if c.TurnLengthPivot != 500 || c.TurnLengthWeight != 1 || c.SessionDiversity != 0.8 || c.SessionDiversityTop != 5 || c.SessionDiversityQueries != DiversityCounting {
		t.Fatalf("defaults: pivot %d, weight %v, diversity %v top %d for %q", c.TurnLengthPivot, c.TurnLengthWeight, c.SessionDiversity, c.SessionDiversityTop, c.SessionDiversityQueries)
	}
	for name, bad := range map[string]SearchConfig{
		"pivot":             {TurnLengthPivot: -5},
		"length weight":     {TurnLengthWeight: 11},
		"diversity":         {SessionDiversity: 1.5},
		"diversity top":     {SessionDiversityTop: -1},
		"diversity queries": {SessionDiversityQueries: "some"},
	} {
		if err := bad.withDefaults().validate(); !errors.Is(err, driver.ErrInvalid) {
			t.Errorf("%s: %v, want driver.ErrInvalid", name, err)
		}
	}
}
