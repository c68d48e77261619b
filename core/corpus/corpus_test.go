package corpus

import (
	"reflect"
	"strings"
	"testing"
)

func TestVocabulary(t *testing.T) {
	words := Vocabulary(5000)
	seen := map[string]bool{}
	for _, w := range words {
		if seen[w] {
			t.Fatalf("word %q twice", w)
		}
		seen[w] = true
	}
	for _, w := range words[len(functionWords):] {
		if strings.ContainsAny(w, "cltvwyz") || len(w) < 4 {
			t.Fatalf("pseudo-word %q", w)
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, err := New(Options{Docs: 500, Queries: 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(Options{Docs: 500, Queries: 20, Seed: 3})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave different corpora")
	}
	c, _ := New(Options{Docs: 500, Queries: 20, Seed: 4})
	if reflect.DeepEqual(a.Docs, c.Docs) {
		t.Fatal("different seeds gave the same memories")
	}
	keys := map[string]bool{}
	for _, d := range a.Docs {
		keys[d.Key] = true
	}
	for _, q := range a.Queries {
		if len(q.Words) != queryTopicWords || len(q.Relevant) == 0 {
			t.Fatalf("query %s: words %v, relevant %v", q.ID, q.Words, q.Relevant)
		}
		for _, k := range q.Relevant {
			if !keys[k] {
				t.Fatalf("query %s names unknown memory %s", q.ID, k)
			}
		}
	}
}
