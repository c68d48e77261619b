// Package conform is the machinery the provider conformance kits share
// (core/embedtest for embedders, core/provider/rerank/reranktest for rerankers): a
// case is a named check of a value under test, and every case runs with a
// guard against providers that ignore their context and a recover for ones
// that panic, either under `go test` (Run) or from a program such as
// `memos plugin test` (Check).
package conform

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// Case is one conformance check of a T. Run returns nil when the value
// behaves, an error saying what was wrong otherwise, or an error wrapping
// ErrSkip when the case does not apply (the message says why).
type Case[T any] struct {
	Name string
	Run  func(ctx context.Context, v T) error
}

// ErrSkip marks a case that does not apply to the value under test.
var ErrSkip = errors.New("skipped")

// Result is the outcome of one case. Err is nil when the case passed; when
// the case did not apply, Err wraps ErrSkip.
type Result struct {
	Name string
	Err  error
}

// Skipped reports whether the case did not apply.
func (r Result) Skipped() bool { return errors.Is(r.Err, ErrSkip) }

// Passed reports whether the case passed.
func (r Result) Passed() bool { return r.Err == nil }

// HangGuard bounds every case, so that a provider that ignores its context
// fails the case instead of hanging the caller. It is not a speed target.
const HangGuard = 30 * time.Second

// Check runs cases against v and returns one Result per case, in order.
// Every case runs, whatever the others did. kind ("embedder", "reranker")
// names the value in messages.
func Check[T any](ctx context.Context, kind string, v T, cases []Case[T]) []Result {
	out := make([]Result, 0, len(cases))
	for _, c := range cases {
		out = append(out, Result{Name: c.Name, Err: runCase(ctx, kind, v, c)})
	}
	return out
}

// Run runs cases against v as subtests of t.
func Run[T any](t *testing.T, kind string, v T, cases []Case[T]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			err := runCase(t.Context(), kind, v, c)
			switch {
			case errors.Is(err, ErrSkip):
				t.Skip(err)
			case err != nil:
				t.Fatal(err)
			}
		})
	}
}

// runCase runs c with the hang guard; a panic in the provider fails the
// case.
func runCase[T any](ctx context.Context, kind string, v T, c Case[T]) (err error) {
	ctx, cancel := context.WithTimeout(ctx, HangGuard)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("%s panicked: %v", kind, p)
			}
		}()
		done <- c.Run(ctx, v)
	}()
	select {
	case err = <-done:
		return err
	case <-time.After(HangGuard + 5*time.Second):
		return fmt.Errorf("no answer within %v although the context expired: the %s ignores its context", HangGuard, kind)
	}
}
