package text

import (
	"math"
	"slices"
	"testing"
)

func TestPlanPrune(t *testing.T) {
	for _, c := range []struct {
		dfs          []int64
		rows         int
		ok           bool
		rare, common []int
	}{
		{[]int64{500, 10, 4000, 10}, 1000, true, []int{1, 3, 0}, []int{2}},
		{[]int64{500, 10, 400}, 1000, false, nil, nil},                     // every match fits
		{[]int64{2000, 3000}, 1000, false, nil, nil},                       // no rare phrase, none selective
		{[]int64{2000, 30000}, 1000, true, []int{0}, []int{1}},             // the rarest alone is a fraction of the work
		{[]int64{600, 600, 5, 5000}, 1000, true, []int{2, 0}, []int{1, 3}}, // a prefix only
		{[]int64{10, 5000}, -1, false, nil, nil},                           // off
	} {
		p, ok := PlanPrune(c.dfs, c.rows)
		if ok != c.ok || !slices.Equal(p.Rare, c.rare) || !slices.Equal(p.Common, c.common) {
			t.Errorf("PlanPrune(%v, %d) = %+v, %v; want %v %v, %v", c.dfs, c.rows, p, ok, c.rare, c.common, c.ok)
		}
	}
	p := PrunePlan{Rare: []int{0}, Common: []int{1, 2}}
	if b := p.Bound([]float64{9, 1, 0.5}); math.Abs(b-3.3) > 1e-12 {
		t.Errorf("Bound = %v", b)
	}
	for _, c := range []struct{ in, want int }{{0, DefaultPruneRows}, {-1, -1}, {7, 7}} {
		if got, err := PruneRows(c.in); got != c.want || err != nil {
			t.Errorf("PruneRows(%d) = %d, %v", c.in, got, err)
		}
	}
	if _, err := PruneRows(-2); err == nil {
		t.Error("PruneRows(-2): no error")
	}
}
