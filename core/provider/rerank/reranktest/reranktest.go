// Package reranktest is the reranker conformance kit: the behaviour every
// driver.Reranker must show, written once as data so that it runs both under
// `go test` (Run) and from a program such as `memos plugin test` (Check).
//
// A provider's whole conformance test is one call:
//
//	func TestConformance(t *testing.T) { reranktest.Run(t, myReranker) }
//
// The cases check what the engine's rerank stage relies on: one finite score
// per text, in the texts' order (the relevant text is found wherever it
// stands); a text's rank does not depend on where it stands in the list;
// equal texts score alike; an empty list gets no scores; long, non-ASCII and
// punctuated texts are scored; concurrent calls agree; and a cancelled
// context makes Rerank return a context error. Scores are compared by the
// order they induce, never by value: the contract only asks that scores be
// comparable within one call.
package reranktest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/conform"
)

// Case is one conformance check. Run returns nil when r behaves, an error
// saying what was wrong otherwise, or an error wrapping ErrSkip when the case
// does not apply to r (the message says why).
type Case = conform.Case[driver.Reranker]

// ErrSkip marks a case that does not apply to the reranker under test.
var ErrSkip = conform.ErrSkip

// Result is the outcome of one case. Err is nil when the case passed; when
// the case did not apply, Err wraps ErrSkip.
type Result = conform.Result

// The fixture: a query, the one text that answers it, and texts that do
// not. Any reranker worth configuring (a cross-encoder, a term-overlap
// scorer) puts the answer first.
const query = "Which office does Alice work at?"

var (
	answer    = "Alice works at the harbour office in Lisbon."
	unrelated = []string{
		"The stock market fell sharply on Tuesday.",
		"Bob's cat sleeps most of the afternoon.",
		"Rain is expected over the weekend.",
	}
	// odd are texts a reranker must score without failing: long,
	// non-ASCII, punctuation only, a single letter.
	odd = []string{
		longText(),
		"東京は日本の首都です",
		"Café au lait, s'il vous plaît — naïve façade",
		"?!…",
		"a",
	}
)

func longText() string {
	b := make([]byte, 0, 8<<10)
	for len(b) < 8<<10 {
		b = append(b, "memory layers give agents a past; "...)
	}
	return string(b)
}

// Cases returns the standard conformance cases, in the order they run.
func Cases() []Case {
	return []Case{
		{Name: "one score per text, in the texts' order", Run: inOrder},
		{Name: "scores are finite", Run: finite},
		{Name: "a text's rank does not depend on its position", Run: positionFree},
		{Name: "equal texts score alike", Run: duplicates},
		{Name: "empty list returns no scores", Run: empty},
		{Name: "long, non-ASCII and punctuation-only texts are scored", Run: oddTexts},
		{Name: "concurrent calls agree", Run: concurrent},
		{Name: "cancelled context returns a context error", Run: cancelled},
	}
}

// Check runs cases against r (Cases() when none are given) and returns one
// Result per case, in order. Every case runs, whatever the others did.
func Check(ctx context.Context, r driver.Reranker, cases ...Case) []Result {
	if len(cases) == 0 {
		cases = Cases()
	}
	return conform.Check(ctx, "reranker", r, cases)
}

// Run runs cases against r (Cases() when none are given) as subtests of t.
func Run(t *testing.T, r driver.Reranker, cases ...Case) {
	t.Helper()
	if len(cases) == 0 {
		cases = Cases()
	}
	conform.Run(t, "reranker", r, cases)
}

// rerank calls Rerank and checks the number of scores.
func rerank(ctx context.Context, r driver.Reranker, q string, texts []string) ([]float64, error) {
	scores, err := r.Rerank(ctx, q, texts)
	if err != nil {
		return nil, fmt.Errorf("Rerank(%d texts): %w", len(texts), err)
	}
	if len(scores) != len(texts) {
		return nil, fmt.Errorf("Rerank(%d texts) returned %d scores", len(texts), len(scores))
	}
	return scores, nil
}

// fixture returns the unrelated texts with the answer inserted at pos.
func fixture(pos int) []string {
	return slices.Insert(slices.Clone(unrelated), pos, answer)
}

func inOrder(ctx context.Context, r driver.Reranker) error {
	for pos := range len(unrelated) + 1 {
		texts := fixture(pos)
		scores, err := rerank(ctx, r, query, texts)
		if err != nil {
			return err
		}
		for i, s := range scores {
			if i != pos && s >= scores[pos] {
				return fmt.Errorf("query %q: the answer %q at position %d scores %v, but %q at position %d scores %v: "+
					"scores are not in the texts' order, or the reranker does not judge relevance", query, answer, pos, scores[pos], texts[i], i, s)
			}
		}
	}
	return nil
}

func finite(ctx context.Context, r driver.Reranker) error {
	texts := append(fixture(1), odd...)
	scores, err := rerank(ctx, r, query, texts)
	if err != nil {
		return err
	}
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("text %d (%.20q) scores %v", i, texts[i], s)
		}
	}
	return nil
}

// sameOrder reports the first pair of texts that a and b (scores of the
// same texts) order differently, ignoring differences within tol of the
// score range: batched arithmetic may move scores a little, never swap
// clearly different ones.
func sameOrder(a, b []float64) (i, j int, ok bool) {
	lo, hi := slices.Min(a), slices.Max(a)
	tol := 1e-3*(hi-lo) + 1e-9*max(math.Abs(lo), math.Abs(hi))
	for i := range a {
		for j := range a {
			if a[i]-a[j] > tol && b[i] <= b[j] {
				return i, j, false
			}
		}
	}
	return 0, 0, true
}

func positionFree(ctx context.Context, r driver.Reranker) error {
	texts := append(fixture(2), odd[1:]...)
	fwd, err := rerank(ctx, r, query, texts)
	if err != nil {
		return err
	}
	rev := slices.Clone(texts)
	slices.Reverse(rev)
	back, err := rerank(ctx, r, query, rev)
	if err != nil {
		return err
	}
	slices.Reverse(back) // back[i] is texts[i]'s score again
	if i, j, ok := sameOrder(fwd, back); !ok {
		return fmt.Errorf("%.30q scores above %.30q in one order of the texts (%v > %v) but not when the list is reversed (%v <= %v)",
			texts[i], texts[j], fwd[i], fwd[j], back[i], back[j])
	}
	return nil
}

func duplicates(ctx context.Context, r driver.Reranker) error {
	texts := []string{answer, unrelated[0], answer, unrelated[1], unrelated[0]}
	scores, err := rerank(ctx, r, query, texts)
	if err != nil {
		return err
	}
	lo, hi := slices.Min(scores), slices.Max(scores)
	tol := 1e-3*(hi-lo) + 1e-9*max(math.Abs(lo), math.Abs(hi))
	for _, p := range [][2]int{{0, 2}, {1, 4}} {
		if d := math.Abs(scores[p[0]] - scores[p[1]]); d > tol {
			return fmt.Errorf("the same text (%.30q) scores %v at position %d and %v at position %d", texts[p[0]], scores[p[0]], p[0], scores[p[1]], p[1])
		}
	}
	return nil
}

func empty(ctx context.Context, r driver.Reranker) error {
	for _, in := range [][]string{nil, {}} {
		scores, err := r.Rerank(ctx, query, in)
		if err != nil {
			return fmt.Errorf("Rerank(no texts): %w", err)
		}
		if len(scores) != 0 {
			return fmt.Errorf("Rerank(no texts) returned %d scores, want 0", len(scores))
		}
	}
	return nil
}

func oddTexts(ctx context.Context, r driver.Reranker) error {
	for _, q := range []string{query, "東京", "naïve façade?"} {
		scores, err := rerank(ctx, r, q, odd)
		if err != nil {
			return fmt.Errorf("query %q: %w", q, err)
		}
		for i, s := range scores {
			if math.IsNaN(s) || math.IsInf(s, 0) {
				return fmt.Errorf("query %q: text %d (%.20q) scores %v", q, i, odd[i], s)
			}
		}
	}
	return nil
}

func concurrent(ctx context.Context, r driver.Reranker) error {
	texts := append(fixture(1), odd[1:]...)
	want, err := rerank(ctx, r, query, texts)
	if err != nil {
		return err
	}
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			got, err := rerank(ctx, r, query, texts)
			if err != nil {
				errs[g] = err
				return
			}
			if i, j, ok := sameOrder(want, got); !ok {
				errs[g] = fmt.Errorf("concurrent call %d orders %.30q and %.30q otherwise than a lone call", g, texts[i], texts[j])
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func cancelled(ctx context.Context, r driver.Reranker) error {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := r.Rerank(cctx, query, fixture(0))
	switch {
	case err == nil:
		return errors.New("Rerank with a cancelled context succeeded; it must return the context's error")
	case !errors.Is(err, context.Canceled):
		return fmt.Errorf("Rerank with a cancelled context returned %q, which does not wrap context.Canceled", err)
	}
	return nil
}
