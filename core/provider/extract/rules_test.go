package extract

import (
	"context"
	"reflect"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

func TestRules(t *testing.T) {
	r, err := OpenRules(context.Background(), RulesConfig{})
	if err != nil {
		t.Fatal(err)
	}
	turns := []driver.Turn{
		{Speaker: "Caroline", Text: "Hey Mel! I went to the LGBTQ support group yesterday and it was so powerful."},
		{Speaker: "Melanie", Text: "That's great. I really love painting landscapes with my kids in Maine. Thanks!"},
		{Speaker: "Caroline", Text: "I'm going to apply to adoption agencies next month. My name is Caroline Smith."},
		{Speaker: "Melanie", Text: "Cool. I love it."},
		{Speaker: "Melanie", Text: "My husband Tom works at Acme and I'm so proud of him."},
	}
	got, err := r.Extract(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	want := []driver.Extraction{
		{Content: "Caroline went to the LGBTQ support group yesterday and it was so powerful.", Type: driver.TypeEvent, Significance: 4,
			Entities: []string{"Caroline", "LGBTQ"}, Turns: []int{0}},
		{Content: "Melanie really loves painting landscapes with Melanie's kids in Maine.", Type: driver.TypeRelationship, Significance: 6,
			Entities: []string{"Melanie", "Maine"}, Turns: []int{1}},
		{Content: "Caroline is going to apply to adoption agencies next month.", Type: driver.TypeEvent, Significance: 5,
			Entities: []string{"Caroline"}, Turns: []int{2}},
		{Content: "Caroline's name is Caroline Smith.", Type: driver.TypeFact, Significance: 7,
			Entities: []string{"Caroline", "Smith"}, Turns: []int{2}},
		{Content: "Melanie's husband Tom works at Acme and Melanie is so proud of him.", Type: driver.TypeRelationship, Significance: 6,
			Entities: []string{"Melanie", "Tom", "Acme"}, EmotionalContext: "proud", Turns: []int{4}},
	}
	if !reflect.DeepEqual(got, want) {
		for i := range max(len(got), len(want)) {
			var g, w driver.Extraction
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("extraction %d:\n got %+v\nwant %+v", i, g, w)
			}
		}
	}
	// Deterministic.
	again, _ := r.Extract(context.Background(), turns)
	if !reflect.DeepEqual(got, again) {
		t.Fatal("two runs over the same turns differ")
	}
}

func TestConjugate(t *testing.T) {
	for in, want := range map[string]string{"love": "loves", "go": "goes", "watch": "watches", "try": "tries", "play": "plays",
		"went": "went", "have": "has", "am": "is", "will": "will", "started": "started", "don't": "doesn't"} {
		if got := conjugate(in); got != want {
			t.Errorf("conjugate(%q) = %q, want %q", in, got, want)
		}
	}
}
