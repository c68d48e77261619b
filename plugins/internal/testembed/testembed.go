// Package testembed is a small deterministic embedder for the plugin
// tests and benchmarks: feature hashing of lower-cased words into Dim
// buckets, normalised. It checks its context and rejects batches larger
// than MaxBatch, so tests can see that the host splits them.
package testembed

import (
	"context"
	"hash/fnv"
	"math"
	"strings"

	"github.com/memos-go/memos/core/driver"
)

// Embedder is the test embedder. The zero value has 64 dimensions and no
// batch limit.
type Embedder struct {
	Dim      int
	MaxBatch int
}

var _ driver.Embedder = Embedder{}

func (e Embedder) dim() int {
	if e.Dim <= 0 {
		return 64
	}
	return e.Dim
}

// Info implements driver.Embedder.
func (e Embedder) Info(context.Context) (driver.ModelInfo, error) {
	return driver.ModelInfo{ID: "testembed-v1", Dim: e.dim(), MaxBatch: e.MaxBatch, Normalized: true}, nil
}

// Embed implements driver.Embedder.
func (e Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.MaxBatch > 0 && len(texts) > e.MaxBatch {
		return nil, driver.Invalidf("batch of %d texts exceeds max batch %d", len(texts), e.MaxBatch)
	}
	d := e.dim()
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, d)
		v[0] = 1 // so that the empty string has a unit vector too
		for _, w := range strings.Fields(strings.ToLower(s)) {
			h := fnv.New64a()
			h.Write([]byte(w))
			x := h.Sum64()
			sign := float32(1)
			if x>>63 == 1 {
				sign = -1
			}
			v[x%uint64(d)] += sign
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n == 0 {
			v[0], n = 1, 1
		}
		inv := float32(1 / math.Sqrt(n))
		for j := range v {
			v[j] *= inv
		}
		out[i] = v
	}
	return out, nil
}
