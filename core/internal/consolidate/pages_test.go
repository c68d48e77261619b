package consolidate

import (
	"slices"
	"testing"
)

func TestPageContent(t *testing.T) {
	top := topEntities(map[string]int{"Lyon": 2, "Alice": 2, "Bob": 1, "Zoe": 3}, 3)
	if want := []string{"Zoe", "Alice", "Lyon"}; !slices.Equal(top, want) {
		t.Fatalf("topEntities = %v, want %v (most named first, ties by name)", top, want)
	}
	got := pageContent(top, "Alice and Zoe moved to Lyon.", []int64{3, 9})
	want := "Knowledge page: Zoe, Alice, Lyon\nAlice and Zoe moved to Lyon.\nStands for 2 memories: #3, #9"
	if got != want {
		t.Errorf("pageContent = %q, want %q", got, want)
	}
	if got := pageContent(nil, "", []int64{1}); got != "Knowledge page\nStands for 1 memories: #1" {
		t.Errorf("pageContent without entities or summary = %q", got)
	}
}

func TestIDJaccard(t *testing.T) {
	if j := idJaccard([]int64{1, 2, 3, 4}, []int64{2, 3, 4, 5}); j != 0.6 {
		t.Errorf("idJaccard = %v, want 0.6", j)
	}
	if j := idJaccard(nil, nil); j != 0 {
		t.Errorf("idJaccard of nothing = %v", j)
	}
}
