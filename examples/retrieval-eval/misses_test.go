package main

import (
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
)

func TestPrintMisses(t *testing.T) {
	c := corpus{name: "c0",
		docs: []doc{{key: "t1", in: core.Input{Content: "I went to my cousin's wedding"}}, {key: "t2", in: core.Input{Content: "the cake was lemon"}}, {key: "t3", in: core.Input{Content: "unrelated"}}},
		questions: []question{
			{text: "how many weddings?", turns: []string{"t1", "t2"}, category: "multi-session"},
			{text: "what cake?", turns: []string{"t2"}},
		}}
	hit := func(s string) core.Result { return core.Result{Memory: &core.Memory{Content: s}, Score: 0.5} }
	missed := map[int][]missRun{
		// Question 0: keyword finds t1 only, expand t1 and t2 at 12: a miss.
		0: {{"keyword", []string{"t1", "t3"}, nil}, {"expand", append([]string{"t1"}, append(make([]string, 10), "t2")...), []core.Result{hit("I went to my cousin's wedding")}}},
		// Question 1: the last variant answers it: not printed.
		1: {{"keyword", []string{"t3"}, nil}, {"expand", []string{"t2"}, []core.Result{hit("the cake was lemon")}}},
	}
	var b strings.Builder
	printMisses(&b, c, missed)
	out := b.String()
	for _, want := range []string{
		`MISS c0 [multi-session] "how many weddings?"`,
		"evidence t1: keyword 1 expand 1",
		"evidence t2: keyword - expand 12",
		"the cake was lemon",
		"hit 1 (0.500): I went to my cousin's wedding",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "what cake?") {
		t.Errorf("a question the last variant answers was printed:\n%s", out)
	}
}
