package text

import (
	"slices"
	"testing"
)

func TestSentences(t *testing.T) {
	got := Sentences("Hey Mel!  I went to the group yesterday. It was so powerful... Really?")
	want := []string{"Hey Mel!", "I went to the group yesterday.", "It was so powerful...", "Really?"}
	if !slices.Equal(got, want) {
		t.Fatalf("Sentences = %q", got)
	}
}

func TestJaccard(t *testing.T) {
	a, b := TokenSet("Alice likes tea"), TokenSet("alice likes coffee")
	if j := Jaccard(a, b); j != 0.5 {
		t.Fatalf("Jaccard = %v, want 2/4", j)
	}
	if Jaccard(nil, nil) != 0 {
		t.Fatal("Jaccard of two empty sets is not 0")
	}
}
