package embedtest_test

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/embedtest"
)

// toy is a small deterministic embedder: each token hashes into a bucket.
// Its fields turn on one misbehaviour each, so that every case is shown to
// fail on the embedder it exists to catch.
type toy struct {
	dim, maxBatch  int
	normalized     bool
	wrongDim       bool // last vector one dimension short
	scale          bool // vectors not unit length
	batchDependent bool // a vector depends on its position in the batch
	ignoreCtx      bool
	dropLast       bool
	nan            bool
	failEmpty      bool // empty string is an error
	nilForEmpty    bool // empty batch returns one vector
	unstable       atomic.Int64
	changeInfo     bool
	split          bool // accepts any batch size (like a host)
}

func (e *toy) Info(context.Context) (driver.ModelInfo, error) {
	id := "toy-v1"
	if e.changeInfo && e.unstable.Add(1) > 1 {
		id = "toy-v2"
	}
	return driver.ModelInfo{ID: id, Dim: e.dim, MaxBatch: e.maxBatch, Normalized: e.normalized}, nil
}

func (e *toy) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if !e.ignoreCtx {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if e.maxBatch > 0 && len(texts) > e.maxBatch && !e.split {
		return nil, driver.Invalidf("batch of %d texts exceeds max batch %d", len(texts), e.maxBatch)
	}
	out := make([][]float32, 0, len(texts))
	for i, s := range texts {
		if s == "" && e.failEmpty {
			return nil, driver.Invalidf("empty text")
		}
		v := make([]float32, e.dim)
		v[0] = 1
		for _, w := range strings.Fields(s) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%uint32(e.dim)] += 1
		}
		if e.batchDependent {
			v[1] += float32(i)
		}
		if e.normalized {
			var n float64
			for _, x := range v {
				n += float64(x * x)
			}
			for j := range v {
				v[j] /= float32(math.Sqrt(n))
			}
		}
		if e.scale {
			v[0] *= 3
		}
		if e.nan {
			v[1] = float32(math.NaN())
		}
		out = append(out, v)
	}
	if e.wrongDim && len(out) > 0 {
		out[len(out)-1] = out[len(out)-1][:e.dim-1]
	}
	if e.dropLast && len(out) > 1 {
		out = out[:len(out)-1]
	}
	if e.nilForEmpty && len(texts) == 0 {
		out = append(out, make([]float32, e.dim))
	}
	return out, nil
}

func TestGoodEmbedderPasses(t *testing.T) {
	embedtest.Run(t, &toy{dim: 16, normalized: true})
	embedtest.Run(t, &toy{dim: 8, maxBatch: 2})
}

func TestHostSplitsBatches(t *testing.T) {
	r := embedtest.Check(t.Context(), &toy{dim: 8, maxBatch: 3, split: true}, embedtest.HostSplitsBatches)
	if !r[0].Passed() {
		t.Fatalf("splitting embedder failed: %v", r[0].Err)
	}
	r = embedtest.Check(t.Context(), &toy{dim: 8, maxBatch: 3}, embedtest.HostSplitsBatches)
	if r[0].Passed() || r[0].Skipped() {
		t.Fatalf("embedder that rejects oversized batches passed: %+v", r[0])
	}
	r = embedtest.Check(t.Context(), &toy{dim: 8}, embedtest.HostSplitsBatches)
	if !r[0].Skipped() {
		t.Fatalf("no max batch: want a skip, got %+v", r[0])
	}
}

// TestBrokenEmbeddersFail shows that each case catches the fault it is for.
func TestBrokenEmbeddersFail(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    *toy
		fail string // the case that must fail
	}{
		{"wrong dimension", &toy{dim: 8, wrongDim: true}, "dimensions match the declared ones"},
		{"not normalised", &toy{dim: 8, normalized: true, scale: true}, "vectors are finite and normalised when declared so"},
		{"NaN", &toy{dim: 8, nan: true}, "vectors are finite and normalised when declared so"},
		{"batch dependent", &toy{dim: 8, batchDependent: true}, "same text gives the same vector alone and in a batch"},
		{"ignores ctx", &toy{dim: 8, ignoreCtx: true}, "cancelled context returns a context error"},
		{"drops a vector", &toy{dim: 8, dropLast: true}, "batch output length equals input length"},
		{"empty string fails", &toy{dim: 8, failEmpty: true}, "empty string embeds"},
		{"empty batch not empty", &toy{dim: 8, nilForEmpty: true}, "empty batch returns an empty result"},
		{"info changes", &toy{dim: 8, changeInfo: true}, "info is stable"},
		{"zero dim", &toy{dim: 0}, "info is valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var found bool
			for _, r := range embedtest.Check(context.Background(), tc.e) {
				if r.Name == tc.fail {
					found = true
					if r.Passed() {
						t.Errorf("case %q passed on a broken embedder", r.Name)
					}
				}
			}
			if !found {
				t.Fatalf("no case named %q", tc.fail)
			}
		})
	}
}

func TestCheckReportsEveryCase(t *testing.T) {
	rs := embedtest.Check(context.Background(), &toy{dim: 4})
	if len(rs) != len(embedtest.Cases()) {
		t.Fatalf("got %d results for %d cases", len(rs), len(embedtest.Cases()))
	}
	for _, r := range rs {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Name, r.Err)
		}
	}
}

func TestPanicFailsCase(t *testing.T) {
	rs := embedtest.Check(context.Background(), panicky{}, embedtest.Cases()[0])
	if rs[0].Passed() || !strings.Contains(rs[0].Err.Error(), "panicked") {
		t.Fatalf("want a panic failure, got %v", rs[0].Err)
	}
	if errors.Is(rs[0].Err, embedtest.ErrSkip) {
		t.Fatal("a panic is not a skip")
	}
}

type panicky struct{}

func (panicky) Info(context.Context) (driver.ModelInfo, error) { panic("boom") }
func (panicky) Embed(context.Context, []string) ([][]float32, error) {
	return nil, nil
}
