// Package embedtest is the embedder conformance kit: the behaviour every
// driver.Embedder must show, written once as data so that it runs both under
// `go test` (Run) and from a program such as `memos plugin test` (Check).
//
// A provider's whole conformance test is one call:
//
//	func TestConformance(t *testing.T) { embedtest.Run(t, myEmbedder) }
//
// The cases check what the engine relies on: Info is stable; a batch returns
// one vector per text, each of the declared dimension; vectors are finite and,
// when the model says so, unit length; the same text gives the same vector
// alone and inside a batch; empty batches and empty strings work; a cancelled
// context makes Embed return a context error promptly. HostSplitsBatches is an
// extra case, not in Cases, for hosts (such as the plugin loader) that promise
// to accept batches larger than the model's MaxBatch.
package embedtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/conform"
)

// Case is one conformance check. Run returns nil when e behaves, an error
// saying what was wrong otherwise, or an error wrapping ErrSkip when the case
// does not apply to e (the message says why).
type Case = conform.Case[driver.Embedder]

// ErrSkip marks a case that does not apply to the embedder under test.
var ErrSkip = conform.ErrSkip

// Result is the outcome of one case. Err is nil when the case passed; when
// the case did not apply, Err wraps ErrSkip.
type Result = conform.Result

// texts is the fixture used by the cases: ordinary sentences, punctuation,
// non-ASCII text, a repeated entry and a long text.
var texts = []string{
	"Alice prefers open-source tools",
	"The meeting moved to Thursday at 10:00.",
	"Café au lait, s'il vous plaît — naïve façade",
	"東京は日本の首都です",
	"Alice prefers open-source tools",
	"a",
	longText(),
}

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
		{Name: "info is stable", Run: infoStable},
		{Name: "info is valid", Run: infoValid},
		{Name: "batch output length equals input length", Run: batchLength},
		{Name: "dimensions match the declared ones", Run: dimensions},
		{Name: "vectors are finite and normalised when declared so", Run: finiteNormalized},
		{Name: "same text gives the same vector alone and in a batch", Run: deterministic},
		{Name: "empty batch returns an empty result", Run: emptyBatch},
		{Name: "empty string embeds", Run: emptyString},
		{Name: "cancelled context returns a context error", Run: cancelled},
	}
}

// HostSplitsBatches checks that Embed accepts a batch larger than
// Info().MaxBatch and returns the same vectors as embedding the texts one at
// a time. Only hosts that promise to split batches (the plugin loader) must
// pass it; plain embedders may reject such batches, which is why it is not
// part of Cases. It is skipped when MaxBatch is 0 (no limit).
var HostSplitsBatches = Case{Name: "batch larger than max-batch is split by the host", Run: hostSplits}

// Check runs cases against e (Cases() when none are given) and returns one
// Result per case, in order. Every case runs, whatever the others did.
func Check(ctx context.Context, e driver.Embedder, cases ...Case) []Result {
	if len(cases) == 0 {
		cases = Cases()
	}
	return conform.Check(ctx, "embedder", e, cases)
}

// Run runs cases against e (Cases() when none are given) as subtests of t.
func Run(t *testing.T, e driver.Embedder, cases ...Case) {
	t.Helper()
	if len(cases) == 0 {
		cases = Cases()
	}
	conform.Run(t, "embedder", e, cases)
}

func info(ctx context.Context, e driver.Embedder) (driver.ModelInfo, error) {
	mi, err := e.Info(ctx)
	if err != nil {
		return mi, fmt.Errorf("Info: %w", err)
	}
	return mi, nil
}

// embed calls Embed and checks the shape of the answer against mi.
func embed(ctx context.Context, e driver.Embedder, mi driver.ModelInfo, in []string) ([][]float32, error) {
	vs, err := e.Embed(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("Embed(%d texts): %w", len(in), err)
	}
	if len(vs) != len(in) {
		return nil, fmt.Errorf("Embed(%d texts) returned %d vectors", len(in), len(vs))
	}
	for i, v := range vs {
		if len(v) != mi.Dim {
			return nil, fmt.Errorf("Embed: vector %d has %d dimensions, Info declares %d", i, len(v), mi.Dim)
		}
	}
	return vs, nil
}

// batch returns the fixture cut to the model's max batch.
func batch(mi driver.ModelInfo) []string {
	if mi.MaxBatch > 0 && mi.MaxBatch < len(texts) {
		return texts[:mi.MaxBatch]
	}
	return texts
}

func infoStable(ctx context.Context, e driver.Embedder) error {
	a, err := info(ctx, e)
	if err != nil {
		return err
	}
	if _, err := e.Embed(ctx, texts[:1]); err != nil {
		return fmt.Errorf("Embed: %w", err)
	}
	b, err := info(ctx, e)
	if err != nil {
		return err
	}
	if a != b {
		return fmt.Errorf("Info changed from %+v to %+v", a, b)
	}
	return nil
}

func infoValid(ctx context.Context, e driver.Embedder) error {
	mi, err := info(ctx, e)
	if err != nil {
		return err
	}
	switch {
	case mi.ID == "":
		return errors.New("Info: empty model ID")
	case mi.Dim <= 0:
		return fmt.Errorf("Info: dimension %d, want > 0", mi.Dim)
	case mi.MaxBatch < 0:
		return fmt.Errorf("Info: max batch %d, want >= 0 (0 means no limit)", mi.MaxBatch)
	}
	return nil
}

func batchLength(ctx context.Context, e driver.Embedder) error {
	mi, err := info(ctx, e)
	if err != nil {
		return err
	}
	for _, n := range []int{1, 2, len(texts)} {
		if mi.MaxBatch > 0 && n > mi.MaxBatch {
			n = mi.MaxBatch
		}
		if _, err := embed(ctx, e, mi, texts[:n]); err != nil {
			return err
		}
	}
	return nil
}

func dimensions(ctx context.Context, e driver.Embedder) error {
	mi, err := info(ctx, e)
	if err != nil {
		return err
	}
	_, err = embed(ctx, e, mi, batch(mi))
	return err
}

func finiteNormalized(ctx context.Context, e driver.Embedder) error {
	mi, err := info(ctx, e)
	if err != nil {
		return err
	}
	vs, err := embed(ctx, e, mi, batch(mi))
	if err != nil {
		return err
	}
	for i, v := range vs {
		var s float64
		for j, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("vector %d: component %d is %v", i, j, x)
			}
			s += float64(x) * float64(x)
		}
		if mi.Normalized && math.Abs(math.Sqrt(s)-1) > 1e-3 {
			return fmt.Errorf("vector %d has length %.6f, but Info declares normalised vectors", i, math.Sqrt(s))
		}
	}
	return nil
}

func deterministic(ctx context.Context, e driver.Embedder) error {
	mi, err := info(ctx, e)
	if err != nil {
		return err
	}
	in := batch(mi)
	all, err := embed(ctx, e, mi, in)
	if err != nil {
		return err
	}
	for i, s := range in {
		one, err := embed(ctx, e, mi, []string{s})
		if err != nil {
			return err
		}
		if !same(one[0], all[i]) {
			return fmt.Errorf("text %d (%.20q) embeds differently alone and at position %d of a batch", i, s, i)
		}
	}
	again, err := embed(ctx, e, mi, in)
	if err != nil {
		return err
	}
	for i := range in {
		if !same(again[i], all[i]) {
			return fmt.Errorf("text %d embeds differently in two identical batches", i)
		}
	}
	return nil
}

// same reports whether a and b are equal up to float rounding that batched
// arithmetic may introduce (cosine similarity above 1-1e-5 and equal norms).
func same(a, b []float32) bool {
	if slices.Equal(a, b) {
		return true
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return na == nb
	}
	return dot/math.Sqrt(na*nb) > 1-1e-5 && math.Abs(math.Sqrt(na)-math.Sqrt(nb)) < 1e-4*math.Sqrt(na)
}

func emptyBatch(ctx context.Context, e driver.Embedder) error {
	for _, in := range [][]string{nil, {}} {
		vs, err := e.Embed(ctx, in)
		if err != nil {
			return fmt.Errorf("Embed(empty batch): %w", err)
		}
		if len(vs) != 0 {
			return fmt.Errorf("Embed(empty batch) returned %d vectors, want 0", len(vs))
		}
	}
	return nil
}

func emptyString(ctx context.Context, e driver.Embedder) error {
	mi, err := info(ctx, e)
	if err != nil {
		return err
	}
	in := []string{"", "x", ""}
	if mi.MaxBatch > 0 && mi.MaxBatch < len(in) {
		in = in[:1]
	}
	vs, err := embed(ctx, e, mi, in)
	if err != nil {
		return err
	}
	for i, v := range vs {
		for j, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("vector %d of %q: component %d is %v", i, in[i], j, x)
			}
		}
	}
	return nil
}

func cancelled(ctx context.Context, e driver.Embedder) error {
	mi, err := info(ctx, e)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = e.Embed(cctx, batch(mi))
	switch {
	case err == nil:
		return errors.New("Embed with a cancelled context succeeded; it must return the context's error")
	case !errors.Is(err, context.Canceled):
		return fmt.Errorf("Embed with a cancelled context returned %q, which does not wrap context.Canceled", err)
	}
	return nil
}

func hostSplits(ctx context.Context, e driver.Embedder) error {
	mi, err := info(ctx, e)
	if err != nil {
		return err
	}
	if mi.MaxBatch == 0 {
		return fmt.Errorf("%w: the model declares no max batch, so there is nothing to split", ErrSkip)
	}
	in := make([]string, 2*mi.MaxBatch+1)
	for i := range in {
		in[i] = fmt.Sprintf("text number %d: %s", i, texts[i%len(texts)])
	}
	all, err := embed(ctx, e, mi, in)
	if err != nil {
		return err
	}
	for _, i := range []int{0, mi.MaxBatch - 1, mi.MaxBatch, 2 * mi.MaxBatch} {
		one, err := embed(ctx, e, mi, in[i:i+1])
		if err != nil {
			return err
		}
		if !same(one[0], all[i]) {
			return fmt.Errorf("text %d of an oversized batch embeds differently than alone: the batch was not split in order", i)
		}
	}
	return nil
}
