package reranktest_test

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/provider/rerank/reranktest"
)

// toy scores a text by the share of the query's words it contains. Its
// fields turn on one misbehaviour each, so that every case is shown to fail
// on the reranker it exists to catch.
type toy struct {
	reversed   bool // scores in reverse order of the texts
	dropLast   bool
	nan        bool // the last score is NaN
	positional bool // a text's score grows with its position
	firstSeen  bool // a repeated text scores lower the second time
	failOdd    bool // refuses non-ASCII text
	flaky      bool // every other call inverts its scores
	ignoreCtx  bool
	failEmpty  bool
	calls      atomic.Int64
}

func (r *toy) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	if !r.ignoreCtx {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if len(texts) == 0 && r.failEmpty {
		return nil, driver.Invalidf("no texts")
	}
	flip := r.flaky && r.calls.Add(1)%2 == 0
	q := strings.Fields(strings.ToLower(query))
	seen := map[string]bool{}
	out := make([]float64, 0, len(texts))
	for i, t := range texts {
		if r.failOdd && strings.ContainsFunc(t, func(c rune) bool { return c > 127 }) {
			return nil, driver.Invalidf("text %d is not ASCII", i)
		}
		low := strings.ToLower(t)
		n := 0
		for _, w := range q {
			if strings.Contains(low, strings.Trim(w, "?")) {
				n++
			}
		}
		s := float64(n) / float64(len(q))
		if r.positional {
			s += float64(i)
		}
		if r.firstSeen && seen[t] {
			s -= 0.5
		}
		if flip {
			s = -s
		}
		seen[t] = true
		out = append(out, s)
	}
	if r.reversed {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	if r.dropLast && len(out) > 0 {
		out = out[:len(out)-1]
	}
	if r.nan && len(out) > 0 {
		out[len(out)-1] = math.NaN()
	}
	return out, nil
}

func TestGoodRerankerPasses(t *testing.T) {
	reranktest.Run(t, &toy{})
}

// TestEveryCaseCatchesItsFault runs every case against a reranker with the
// fault it exists for, and checks that it fails there.
func TestEveryCaseCatchesItsFault(t *testing.T) {
	faults := map[string]*toy{
		"one score per text, in the texts' order":               {reversed: true},
		"scores are finite":                                     {nan: true},
		"a text's rank does not depend on its position":         {positional: true},
		"equal texts score alike":                               {firstSeen: true},
		"empty list returns no scores":                          {failEmpty: true},
		"long, non-ASCII and punctuation-only texts are scored": {failOdd: true},
		"concurrent calls agree":                                {flaky: true},
		"cancelled context returns a context error":             {ignoreCtx: true},
	}
	cases := reranktest.Cases()
	if len(faults) != len(cases) {
		t.Fatalf("%d faults for %d cases: every case needs a reranker that fails it", len(faults), len(cases))
	}
	for _, c := range cases {
		r, ok := faults[c.Name]
		if !ok {
			t.Errorf("case %q has no faulty reranker", c.Name)
			continue
		}
		res := reranktest.Check(t.Context(), r, c)
		if res[0].Passed() || res[0].Skipped() {
			t.Errorf("case %q passed a reranker with its fault", c.Name)
		}
	}
	// A reranker that drops a score fails the cases that count them.
	var failed int
	for _, res := range reranktest.Check(t.Context(), &toy{dropLast: true}) {
		if !res.Passed() {
			failed++
		}
	}
	if failed < 5 {
		t.Errorf("a reranker that drops the last score failed only %d cases", failed)
	}
}

func TestPanicFailsTheCase(t *testing.T) {
	res := reranktest.Check(t.Context(), panicky{})
	for _, r := range res {
		if r.Name != "empty list returns no scores" && (r.Passed() || !strings.Contains(r.Err.Error(), "reranker panicked")) {
			t.Errorf("case %q: %v", r.Name, r.Err)
		}
	}
}

type panicky struct{}

func (panicky) Rerank(_ context.Context, _ string, texts []string) ([]float64, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	panic("boom")
}
