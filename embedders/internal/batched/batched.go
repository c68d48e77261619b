// Package batched holds what the HTTP embedding providers share: sending a
// batch of texts as requests of a bounded size and checking what comes back.
package batched

import (
	"context"
	"fmt"

	"github.com/memos-go/memos/core/driver"
)

// Embed sends texts to request in chunks of at most size texts, in order, and
// checks that every vector has dim components. who names the provider and
// model in errors (e.g. "ollama: model nomic-embed-text").
func Embed(ctx context.Context, texts []string, size, dim int, who string,
	request func(context.Context, []string) ([][]float32, error)) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	if size <= 0 {
		size = len(texts)
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += size {
		vs, err := request(ctx, texts[start:min(start+size, len(texts))])
		if err != nil {
			return nil, err
		}
		for i, v := range vs {
			if len(v) != dim {
				return nil, fmt.Errorf("%w: %s returned %d dimensions for text %d, expected %d",
					driver.ErrDimensionMismatch, who, len(v), start+i, dim)
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}

// Info describes a provider's model, asking the server for the dimension
// (one request with a probe text) when dim is 0. dimKey names the config key
// that skips the probe, for the error message.
func Info(ctx context.Context, provider, model string, dim, batch int, dimKey string,
	request func(context.Context, []string) ([][]float32, error)) (driver.ModelInfo, error) {
	if dim == 0 {
		vs, err := request(ctx, []string{"dimension probe"})
		if err != nil {
			return driver.ModelInfo{}, fmt.Errorf("%s: finding the dimension of model %s (set %s to skip this): %w", provider, model, dimKey, err)
		}
		if len(vs) != 1 || len(vs[0]) == 0 {
			return driver.ModelInfo{}, fmt.Errorf("%s: model %s answered the dimension probe with %d vectors", provider, model, len(vs))
		}
		dim = len(vs[0])
	}
	return driver.ModelInfo{
		ID:         fmt.Sprintf("%s:%s:%d", provider, model, dim),
		Dim:        dim,
		MaxBatch:   batch,
		Normalized: true,
	}, nil
}
