// Package testrerank is a small deterministic reranker for the plugin
// tests: a text scores the share of the query's lower-cased words (without
// punctuation) that occur in it. It checks its context.
package testrerank

import (
	"context"
	"strings"
	"unicode"

	"github.com/memos-go/memos/core/driver"
)

// Reranker is the test reranker.
type Reranker struct{}

var _ driver.Reranker = Reranker{}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Rerank implements driver.Reranker.
func (Reranker) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := words(query)
	out := make([]float64, len(texts))
	for i, t := range texts {
		have := map[string]bool{}
		for _, w := range words(t) {
			have[w] = true
		}
		n := 0
		for _, w := range q {
			if have[w] {
				n++
			}
		}
		if len(q) > 0 {
			out[i] = float64(n) / float64(len(q))
		}
	}
	return out, nil
}
