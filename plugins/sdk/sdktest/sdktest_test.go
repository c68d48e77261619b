package sdktest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/plugins/internal/testembed"
	"github.com/memos-go/memos/plugins/internal/testrerank"
	"github.com/memos-go/memos/plugins/sdk/sdktest"
)

func TestRun(t *testing.T) {
	sdktest.Run(t, testembed.Embedder{Dim: 16, MaxBatch: 8})
}

// failing returns err from every call, to check the mapping of errors.
type failing struct{ err error }

func (f failing) Info(context.Context) (driver.ModelInfo, error) {
	return driver.ModelInfo{ID: "failing", Dim: 4}, nil
}

func (f failing) Embed(context.Context, []string) ([][]float32, error) { return nil, f.err }

func TestErrorsCrossTheWire(t *testing.T) {
	for _, sentinel := range []error{driver.ErrInvalid, driver.ErrUnavailable, driver.ErrNotFound,
		driver.ErrDimensionMismatch, driver.ErrClosed, driver.ErrConflict, driver.ErrUnknownName,
		context.Canceled, context.DeadlineExceeded} {
		e := sdktest.Connect(t, failing{err: errors.Join(errors.New("model says no"), sentinel)})
		_, err := e.Embed(t.Context(), []string{"x"})
		if !errors.Is(err, sentinel) {
			t.Errorf("%v: got %v, which does not wrap it", sentinel, err)
		}
		if err == nil || !strings.Contains(err.Error(), "model says no") {
			t.Errorf("%v: the plugin's message was lost: %v", sentinel, err)
		}
	}
	e := sdktest.Connect(t, failing{err: errors.New("plain failure")})
	_, err := e.Embed(t.Context(), []string{"x"})
	if err == nil || err.Error() != "plain failure" || driver.KindOf(err).Name != "internal" {
		t.Errorf("plain error: got %v (kind %s)", err, driver.KindOf(err).Name)
	}
}

// blocking waits for its context and reports that it saw it end.
type blocking struct {
	started chan struct{}
	saw     chan error
}

func (b blocking) Info(context.Context) (driver.ModelInfo, error) {
	return driver.ModelInfo{ID: "blocking", Dim: 4}, nil
}

func (b blocking) Embed(ctx context.Context, _ []string) ([][]float32, error) {
	close(b.started)
	<-ctx.Done()
	b.saw <- ctx.Err()
	return nil, ctx.Err()
}

func TestCancellationCrossesTheWire(t *testing.T) {
	b := blocking{started: make(chan struct{}), saw: make(chan error, 1)}
	e := sdktest.Connect(t, b)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { _, err := e.Embed(ctx, []string{"x"}); errc <- err }()
	<-b.started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("caller got %v", err)
	}
	if err := <-b.saw; !errors.Is(err, context.Canceled) {
		t.Fatalf("embedder saw %v", err)
	}
}

// TestCatchesBrokenEmbedder shows the shims do not hide a broken embedder.
func TestCatchesBrokenEmbedder(t *testing.T) {
	e := sdktest.Connect(t, short{})
	rs := embedtest.Check(t.Context(), e)
	var failed bool
	for _, r := range rs {
		failed = failed || !r.Passed()
	}
	if !failed {
		t.Fatal("an embedder returning vectors of the wrong dimension passed")
	}
}

type short struct{}

func (short) Info(context.Context) (driver.ModelInfo, error) {
	return driver.ModelInfo{ID: "short", Dim: 4}, nil
}

func (short) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0}
	}
	return out, nil
}

func TestRunReranker(t *testing.T) {
	sdktest.RunReranker(t, testrerank.Reranker{})
}

// failingReranker returns err from every call, or panics when err is nil.
type failingReranker struct{ err error }

func (f failingReranker) Rerank(context.Context, string, []string) ([]float64, error) {
	if f.err == nil {
		panic("reranker bug")
	}
	return nil, f.err
}

func TestRerankerErrorsCrossTheWire(t *testing.T) {
	for _, sentinel := range []error{driver.ErrInvalid, driver.ErrUnavailable, context.DeadlineExceeded} {
		r := sdktest.ConnectReranker(t, failingReranker{err: errors.Join(errors.New("model says no"), sentinel)})
		_, err := r.Rerank(t.Context(), "q", []string{"x"})
		if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), "model says no") {
			t.Errorf("%v: got %v", sentinel, err)
		}
	}
	r := sdktest.ConnectReranker(t, failingReranker{})
	if _, err := r.Rerank(t.Context(), "q", []string{"x"}); err == nil || !strings.Contains(err.Error(), "reranker panicked: reranker bug") {
		t.Errorf("a panic: got %v", err)
	}
	// and the server survived it
	r2 := sdktest.ConnectReranker(t, testrerank.Reranker{})
	if got, err := r2.Rerank(t.Context(), "apple", []string{"apple pie", "pear"}); err != nil || fmt.Sprint(got) != "[1 0]" {
		t.Errorf("scores %v, %v", got, err)
	}
}
