// Package batched holds what the HTTP embedding providers share: sending a
// batch of texts as requests of a bounded size and checking what comes back.
package batched

import (
	"context"
	"fmt"

	"github.com/memos-go/memos/core"
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
					core.ErrDimensionMismatch, who, len(v), start+i, dim)
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}
