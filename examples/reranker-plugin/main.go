// Command reranker-plugin is a complete memos reranker plugin: it scores a
// candidate by the share of the query's words (stemmed, stop words left out)
// that it contains, with a small bonus for short, focused texts. It is
// deterministic and needs no model, which makes it a fine template: replace
// Rerank's body with a call to your cross-encoder. See README.md.
package main

import (
	"context"

	"github.com/memos-go/memos/core/text"
	"github.com/memos-go/memos/plugins/sdk"
)

// stop words carry no topic; a query made only of them matches on all its words.
var stop = map[string]bool{"a": true, "an": true, "the": true, "of": true, "in": true, "on": true, "at": true,
	"to": true, "is": true, "are": true, "was": true, "do": true, "does": true, "did": true, "what": true,
	"which": true, "who": true, "when": true, "where": true, "how": true, "and": true, "or": true, "for": true}

type overlap struct{}

func (overlap) Rerank(ctx context.Context, query string, texts []string) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // the host gave up (rerank_timeout, Ctrl-C): stop early
	}
	terms := map[string]bool{}
	for _, t := range text.Tokenize(query) {
		if !stop[t] {
			terms[text.Stem(t)] = true
		}
	}
	if len(terms) == 0 { // only stop words: use them all
		for _, t := range text.Tokenize(query) {
			terms[text.Stem(t)] = true
		}
	}
	scores := make([]float64, len(texts))
	for i, s := range texts {
		toks := text.Tokenize(s)
		seen := map[string]bool{}
		for _, t := range toks {
			if st := text.Stem(t); terms[st] {
				seen[st] = true
			}
		}
		matched := float64(len(seen))
		scores[i] = matched/float64(max(len(terms), 1)) + 0.01*matched/float64(len(toks)+10)
	}
	return scores, nil
}

func main() { sdk.ServeReranker(overlap{}) }
