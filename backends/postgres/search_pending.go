package postgres

import (
	"context"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/match"
	"github.com/memos-go/memos/core/query"
)

// TEMPORARY until core/text lands on main.
func analyze(content string) ([]string, int) {
	toks := query.Tokenize(content)
	seen := map[string]bool{}
	out := []string{}
	for _, t := range toks {
		s := lexeme(match.Stem(t))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, len(toks)
}

func (d *DB) SearchKeyword(ctx context.Context, q query.Node, f driver.Filter, limit int) ([]driver.Hit, error) {
	return nil, driver.Invalidf("postgres: keyword search is not built yet")
}
