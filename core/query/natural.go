package query

import (
	"strings"
	"unicode/utf8"

	"github.com/memos-go/memos/core/text"
)

// stopWords are the English function words Natural drops: articles,
// auxiliaries, pronouns, question words, conjunctions and common
// prepositions. They carry no topic, and in an OR query each would match a
// large part of any store. The list is deliberately short: words that can
// be the point of a memory query stay, notably "like" ("what does alice
// like" must find "Alice likes jazz"; porter stems both to "like"), and
// also "want", "know", "remember", "name", "never" and all numbers.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		a an the
		and or not but if then so than
		of at by for with about to from in on into onto as
		am is are was were be been being
		do does did have has had
		can could would should will shall may might must
		what which who whom whose when where why how
		this that these those there here
		i me my mine myself you your yours he him his she her hers
		it its we us our ours they them their theirs`) {
		stopWords[w] = true
	}
}

// IsStopWord reports whether Natural drops the token tok (lower case).
func IsStopWord(tok string) bool { return stopWords[tok] }

// Natural rewrites free text, such as a question to an agent's memory,
// into a query that matches any of its content words. It never fails; it
// returns nil when s contains nothing to search for.
//
// The text is split on white space and parentheses. Then:
//   - a "quoted phrase" stays a phrase (a quote without a partner is ignored);
//   - a word that text.Tokenize splits into several tokens ("open-source",
//     "v2.1") becomes a phrase of them; a trailing possessive "'s" is dropped
//     ("alice's" is "alice");
//   - a word ending in * is a prefix term ("config*"); after a phrase the *
//     is ignored, since the AST has no prefix phrases;
//   - single words that are English stop words (see IsStopWord) are dropped,
//     as are the operator keywords AND, OR, NOT and NEAR: nothing here is
//     syntax;
//   - duplicates are dropped, and what remains is OR-ed in order of
//     appearance, up to MaxTerms tokens (the rest of s is ignored).
//
// When every word is a stop word ("who is it"), Natural ORs those words
// instead, so that such a query still searches for something.
func Natural(s string) Node {
	var nb natural
	for i := 0; i < len(s) && !nb.full; {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isSpace(r) || r == '(' || r == ')':
			i += size
		case r == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				i += size // unbalanced: the rest is plain text
				continue
			}
			inner := s[i+1 : i+1+end]
			i += end + 2
			prefix := false
			for i < len(s) && s[i] == '*' {
				prefix = true
				i++
			}
			nb.add(text.Tokenize(inner), prefix, false)
		default:
			j := i
			for j < len(s) {
				r, size := utf8.DecodeRuneInString(s[j:])
				if isSpace(r) || r == '(' || r == ')' || r == '"' {
					break
				}
				j += size
			}
			nb.word(s[i:j])
			i = j
		}
	}
	nodes := nb.nodes
	if len(nodes) == 0 {
		nodes = nb.stopped
	}
	switch len(nodes) {
	case 0:
		return nil
	case 1:
		return nodes[0]
	}
	return &Or{Children: nodes}
}

// natural accumulates Natural's operands.
type natural struct {
	nodes, stopped   []Node // stopped: the dropped stop words, for the fallback
	seen, seenStop   map[string]bool
	terms, stopTerms int
	full             bool // MaxTerms reached
}

func (nb *natural) word(w string) {
	switch w {
	case "AND", "OR", "NOT", "NEAR":
		nb.add(text.Tokenize(w), false, true)
		return
	}
	body := strings.TrimRightFunc(w, func(r rune) bool { _, token := text.Fold(r); return !token })
	prefix := strings.Contains(w[len(body):], "*")
	toks := text.Tokenize(body)
	if n := len(toks); n > 1 && toks[n-1] == "s" {
		for _, poss := range []string{"'s", "'S", "’s", "’S"} {
			if strings.HasSuffix(body, poss) {
				toks = toks[:n-1]
				break
			}
		}
	}
	nb.add(toks, prefix, len(toks) == 1 && !prefix && stopWords[toks[0]])
}

// add appends the operand made of toks, or records it as a stop word.
func (nb *natural) add(toks []string, prefix, stop bool) {
	var n Node
	switch len(toks) {
	case 0:
		return
	case 1:
		n = &Term{Text: toks[0], Prefix: prefix}
	default:
		n = &Phrase{Terms: toks}
	}
	list, seen, terms := &nb.nodes, &nb.seen, &nb.terms
	if stop {
		list, seen, terms = &nb.stopped, &nb.seenStop, &nb.stopTerms
	}
	if *terms+len(toks) > MaxTerms {
		nb.full = nb.full || !stop
		return
	}
	key := n.String()
	if (*seen)[key] {
		return
	}
	if *seen == nil {
		*seen = map[string]bool{}
	}
	(*seen)[key] = true
	*terms += len(toks)
	*list = append(*list, n)
}
