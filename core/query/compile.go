package query

import (
	"fmt"

	"github.com/memos-go/memos/core/text"
)

// maxCompileDepth bounds the recursion of Compile on ASTs that Parse did not
// build (Parse stops at MaxDepth).
const maxCompileDepth = 200

// Compile returns n ready to evaluate with FTS5's meaning (see package
// core/text), its phrases numbered in query order. It fails on what
// Validate rejects structurally (nil nodes, operators without operands, bad
// NEAR groups, a negative distance, nesting too deep).
func Compile(n Node) (*text.Query, error) {
	var b text.Builder
	root, err := compile(&b, n, 0)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return b.Query(root), nil
}

func compile(b *text.Builder, n Node, depth int) (text.Expr, error) {
	if depth > maxCompileDepth {
		return text.Expr{}, fmt.Errorf("nests deeper than %d levels", maxCompileDepth)
	}
	switch n := n.(type) {
	case *Term:
		if n != nil {
			return b.Phrase([]string{n.Text}, n.Prefix, n.String()), nil
		}
	case *Phrase:
		if n != nil {
			return b.Phrase(n.Terms, false, n.String()), nil
		}
	case *And:
		if n != nil {
			kids, err := compileAll(b, n.Children, depth)
			if err != nil {
				return text.Expr{}, err
			}
			return b.And(kids...)
		}
	case *Or:
		if n != nil {
			kids, err := compileAll(b, n.Children, depth)
			if err != nil {
				return text.Expr{}, err
			}
			return b.Or(kids...)
		}
	case *Not:
		if n != nil {
			pos, err := compile(b, n.Positive, depth+1)
			if err != nil {
				return text.Expr{}, err
			}
			neg, err := compile(b, n.Negative, depth+1)
			if err != nil {
				return text.Expr{}, err
			}
			return b.Not(pos, neg), nil
		}
	case *Near:
		if n != nil {
			groups := make([]text.Expr, len(n.Groups))
			for i, g := range n.Groups {
				switch g := g.(type) {
				case *Term, *Phrase:
					e, err := compile(b, g, depth+1)
					if err != nil {
						return text.Expr{}, err
					}
					groups[i] = e
				default:
					return text.Expr{}, fmt.Errorf("a NEAR group must be a term or a phrase, not %T", g)
				}
			}
			return b.Near(n.Distance, groups...)
		}
	}
	if n == nil {
		return text.Expr{}, fmt.Errorf("nil node (a query needs at least one term)")
	}
	return text.Expr{}, fmt.Errorf("unknown node %T", n)
}

func compileAll(b *text.Builder, ns []Node, depth int) ([]text.Expr, error) {
	out := make([]text.Expr, len(ns))
	for i, k := range ns {
		e, err := compile(b, k, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}
