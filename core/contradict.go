package core

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// This file is the contradiction detector. It is deliberately conservative
// (a noisy detector is worse than none): a new memory contradicts an older
// one only when
//   - both name a common entity (case-insensitive),
//   - their embeddings are close (cosine ≥ governance.contradiction_similarity)
//     and, with numbers, dates and negations set aside, they share most
//     content words (Jaccard of porter stems ≥ governance.contradiction_overlap),
//   - and they disagree: both state numbers (digits or number words) and the
//     numbers differ, or both name months and the months differ, or one is
//     negated and the other is not.
// Candidates come from the vector index (the ten nearest active memories in
// scope), so detection needs an embedder; an explicit Input.Contradicts
// needs none.

// contradictionK is how many nearest neighbours the detector compares.
const contradictionK = 10

// conflict is a memory a new one contradicts.
type conflict struct {
	id       int64
	why      string
	trusted  bool
	explicit bool
}

// contradictionCandidates returns the ids of the active memories in scope
// whose embeddings are close enough to m's to compare, nearest first.
func (e *Engine) contradictionCandidates(ctx context.Context, m *Memory) ([]int64, error) {
	if e.gov.Contradictions == ContradictOff || e.emb == nil || len(m.Entities) == 0 || m.Embedding.Dim() == 0 {
		return nil, nil
	}
	if err := e.syncVectors(ctx); err != nil {
		return nil, err
	}
	hits, err := e.vec.Search(ctx, m.Embedding.Vector, contradictionK, VectorFilter{Namespaces: e.scope()})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, h := range hits {
		if h.Score >= e.gov.ContradictionSimilarity {
			ids = append(ids, h.ID)
		}
	}
	return ids, nil
}

// contradiction says why m contradicts old, or "" when it does not.
func (g *GovernConfig) contradiction(m, old *Memory) string {
	// shareEntity (consolidation's) also accepts a memory that names none;
	// the detector needs both to name one.
	if old.ID == m.ID || old.Status != StatusActive || len(m.Entities) == 0 || len(old.Entities) == 0 || !shareEntity(m, old) {
		return ""
	}
	return disagreement(m.Content, old.Content, g.ContradictionOverlap)
}

// claims is what the detector reads from a text.
type claims struct {
	words   map[string]bool // porter stems of content words
	numbers []string        // sorted, deduplicated, number words as digits
	months  []string
	negated bool
}

var numberWords = map[string]string{"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
	"six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
	"thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18",
	"nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000"}

var monthNames = map[string]string{"january": "01", "february": "02", "march": "03", "april": "04", "may": "05",
	"june": "06", "july": "07", "august": "08", "september": "09", "october": "10", "november": "11", "december": "12",
	"jan": "01", "feb": "02", "mar": "03", "apr": "04", "jun": "06", "jul": "07", "aug": "08", "sep": "09", "sept": "09",
	"oct": "10", "nov": "11", "dec": "12"}

var negations = map[string]bool{"not": true, "no": true, "never": true, "none": true, "nothing": true,
	"nobody": true, "neither": true, "nor": true, "cannot": true, "without": true, "nowhere": true}

func readClaims(s string) claims {
	c := claims{words: map[string]bool{}}
	toks := text.Tokenize(s)
	for i, t := range toks {
		switch {
		case negations[t] || (t == "t" && i > 0 && strings.HasSuffix(toks[i-1], "n")):
			c.negated = true
		case isDigits(t):
			c.numbers = append(c.numbers, strings.TrimLeft(t, "0"))
		case numberWords[t] != "":
			c.numbers = append(c.numbers, numberWords[t])
		case monthNames[t] != "" && (t != "may" && t != "mar" || i+1 < len(toks) && isDigits(toks[i+1])):
			c.months = append(c.months, monthNames[t])
		case !query.IsStopWord(t) && len(t) > 1:
			c.words[text.Stem(t)] = true
		}
	}
	slices.Sort(c.numbers)
	c.numbers = slices.Compact(c.numbers)
	slices.Sort(c.months)
	c.months = slices.Compact(c.months)
	return c
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// disagreement says how a and b disagree, or "" when they do not or are not
// about the same thing.
func disagreement(a, b string, overlap float64) string {
	ca, cb := readClaims(a), readClaims(b)
	if text.Jaccard(ca.words, cb.words) < overlap {
		return ""
	}
	switch {
	case len(ca.numbers) > 0 && len(cb.numbers) > 0 && !slices.Equal(ca.numbers, cb.numbers):
		return fmt.Sprintf("numbers differ (%s against %s)", strings.Join(ca.numbers, ", "), strings.Join(cb.numbers, ", "))
	case len(ca.months) > 0 && len(cb.months) > 0 && !slices.Equal(ca.months, cb.months):
		return "dates differ"
	case ca.negated != cb.negated:
		return "one negates the other"
	}
	return ""
}
