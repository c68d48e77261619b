package text

import (
	"regexp"
	"strings"
)

// sentenceEnd is where a sentence ends: . ! or ? (repeated) before space.
var sentenceEnd = regexp.MustCompile(`([.!?]+)\s+`)

// Sentences splits text into sentences at ., ! or ? followed by white
// space, keeping the punctuation, after folding runs of white space.
func Sentences(text string) []string {
	text = strings.Join(strings.Fields(text), " ")
	var out []string
	last := 0
	for _, m := range sentenceEnd.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, strings.TrimSpace(text[last:m[3]]))
		last = m[1]
	}
	if rest := strings.TrimSpace(text[last:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// TokenSet is the set of s's tokens (see Tokenize).
func TokenSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, t := range Tokenize(s) {
		out[t] = true
	}
	return out
}

// Jaccard is the overlap of two token sets: |a ∩ b| / |a ∪ b| (0 when both
// are empty).
func Jaccard(a, b map[string]bool) float64 {
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	u := len(a) + len(b) - inter
	if u == 0 {
		return 0
	}
	return float64(inter) / float64(u)
}
