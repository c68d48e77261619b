package text

// The Porter stemmer as SQLite FTS5's "porter" tokenizer computes it, which
// every keyword index and the in-memory matcher use. porter_test.go checks it
// against SQLite on a large vocabulary. FTS5's variant differs in small ways
// from other Porter implementations:
//
//   - it works on bytes, so every byte of a non-ASCII letter counts as a
//     consonant;
//   - tokens shorter than 3 or longer than 64 bytes are not stemmed;
//   - each step looks for the first listed suffix that ends the word and
//     applies it only if its condition holds (it never falls back to a
//     shorter suffix);
//   - it includes the "logi" → "log" and "bli" → "ble" rules of the revised
//     algorithm.

const (
	stemMinLen = 3
	stemMaxLen = 64
)

// MayStemTo reports whether the lower-case token tok can have the stem
// stem, so that a caller looking for the tokens with given stems needs to
// stem only those. The stemmer rewrites only a token's end: it removes a
// suffix and may put back a shorter one (or an "e", or "i" for "y"), so a
// stem is never longer than its token and differs from it in its last two
// bytes at most ("sensibility" → "sensibiliti" → "sensible").
func MayStemTo(tok []byte, stem string) bool { return mayStemTo(tok, stem) }

func mayStemTo[T string | []byte](tok T, stem string) bool {
	if len(tok) < len(stem) {
		return false
	}
	keep := max(1, len(stem)-2)
	return string(tok[:keep]) == stem[:keep]
}

// Stem returns the porter stem of a lower-case token.
func Stem(tok string) string {
	if len(tok) < stemMinLen || len(tok) > stemMaxLen {
		return tok
	}
	var buf [stemMaxLen + 8]byte
	w := buf[:copy(buf[:], tok)]

	w = step1a(w)
	w, ok := step1b(w)
	if ok {
		if w2, ok := step1bFix(w); ok {
			w = w2
		} else {
			c := w[len(w)-1]
			if !isVowel(c, false) && c != 'l' && c != 's' && c != 'z' && c == w[len(w)-2] {
				w = w[:len(w)-1]
			} else if measureIs1(w) && endsCVC(w) {
				w = append(w, 'e')
			}
		}
	}
	if w[len(w)-1] == 'y' && hasVowel(w[:len(w)-1]) {
		w[len(w)-1] = 'i'
	}
	w = applyRules(w, step2Rules)
	w = applyRules(w, step3Rules)
	w = applyRules(w, step4Rules)
	if w[len(w)-1] == 'e' {
		s := w[:len(w)-1]
		if measureGt1(s) || (measureIs1(s) && !endsCVC(s)) {
			w = s
		}
	}
	if len(w) > 1 && w[len(w)-1] == 'l' && w[len(w)-2] == 'l' && measureGt1(w[:len(w)-1]) {
		w = w[:len(w)-1]
	}
	return string(w)
}

// isVowel reports whether c is a vowel; y is one after a consonant.
func isVowel(c byte, prevCons bool) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	case 'y':
		return prevCons
	}
	return false
}

// skipVC skips one vowel run followed by one consonant: it returns the index
// just past the first consonant that follows a vowel, or 0 when there is no
// such consonant. prevCons says whether the byte before w was a consonant.
func skipVC(w []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(w); i++ {
		cons = !isVowel(w[i], cons)
		if !cons {
			break
		}
	}
	for i++; i < len(w); i++ {
		cons = !isVowel(w[i], cons)
		if cons {
			return i + 1
		}
	}
	return 0
}

// measureGt0, measureIs1 and measureGt1 test Porter's measure m of w, the
// number of vowel-consonant sequences.
func measureGt0(w []byte) bool { return skipVC(w, false) > 0 }

func measureIs1(w []byte) bool {
	n := skipVC(w, false)
	return n > 0 && skipVC(w[n:], true) == 0
}

func measureGt1(w []byte) bool {
	n := skipVC(w, false)
	return n > 0 && skipVC(w[n:], true) > 0
}

// endsCVC is Porter's *o: w ends consonant-vowel-consonant and the last
// consonant is not w, x or y.
func endsCVC(w []byte) bool {
	switch w[len(w)-1] {
	case 'w', 'x', 'y':
		return false
	}
	mask, cons := 0, false
	for _, c := range w {
		cons = !isVowel(c, cons)
		mask <<= 1
		if cons {
			mask |= 1
		}
	}
	return mask&7 == 5
}

// hasVowel is Porter's *v*: w contains a vowel (y counts after position 0).
func hasVowel(w []byte) bool {
	for i, c := range w {
		if isVowel(c, i > 0) {
			return true
		}
	}
	return false
}

func endsWith(w []byte, suffix string) bool {
	return len(w) > len(suffix) && string(w[len(w)-len(suffix):]) == suffix
}

func step1a(w []byte) []byte {
	n := len(w)
	if w[n-1] != 's' {
		return w
	}
	switch {
	case w[n-2] == 'e':
		if (n > 4 && w[n-4] == 's' && w[n-3] == 's') || (n > 3 && w[n-3] == 'i') {
			return w[:n-2] // sses → ss, ies → i
		}
		return w[:n-1]
	case w[n-2] != 's':
		return w[:n-1]
	}
	return w
}

// step1b removes -eed/-ed/-ing; ok reports that -ed or -ing was removed, which
// triggers the follow-up rules.
func step1b(w []byte) ([]byte, bool) {
	switch {
	case endsWith(w, "eed"):
		if measureGt0(w[:len(w)-3]) {
			return w[:len(w)-1], false
		}
	case endsWith(w, "ed"):
		if hasVowel(w[:len(w)-2]) {
			return w[:len(w)-2], true
		}
	case endsWith(w, "ing"):
		if hasVowel(w[:len(w)-3]) {
			return w[:len(w)-3], true
		}
	}
	return w, false
}

func step1bFix(w []byte) ([]byte, bool) {
	for _, s := range []string{"at", "bl", "iz"} {
		if endsWith(w, s) {
			return append(w, 'e'), true
		}
	}
	return w, false
}

type cond func([]byte) bool

type rule struct {
	suffix, repl string
	cond         cond
}

func measureGt1AndST(w []byte) bool {
	c := w[len(w)-1]
	return (c == 's' || c == 't') && measureGt1(w)
}

var step2Rules = []rule{
	{"ational", "ate", measureGt0}, {"tional", "tion", measureGt0},
	{"enci", "ence", measureGt0}, {"anci", "ance", measureGt0},
	{"izer", "ize", measureGt0},
	{"logi", "log", measureGt0},
	{"bli", "ble", measureGt0}, {"alli", "al", measureGt0}, {"entli", "ent", measureGt0},
	{"eli", "e", measureGt0}, {"ousli", "ous", measureGt0},
	{"ization", "ize", measureGt0}, {"ation", "ate", measureGt0}, {"ator", "ate", measureGt0},
	{"alism", "al", measureGt0}, {"iveness", "ive", measureGt0}, {"fulness", "ful", measureGt0},
	{"ousness", "ous", measureGt0},
	{"aliti", "al", measureGt0}, {"iviti", "ive", measureGt0}, {"biliti", "ble", measureGt0},
}

var step3Rules = []rule{
	{"ical", "ic", measureGt0},
	{"ness", "", measureGt0},
	{"icate", "ic", measureGt0}, {"iciti", "ic", measureGt0},
	{"ful", "", measureGt0},
	{"ative", "", measureGt0},
	{"alize", "al", measureGt0},
}

var step4Rules = []rule{
	{"al", "", measureGt1},
	{"ance", "", measureGt1}, {"ence", "", measureGt1},
	{"er", "", measureGt1},
	{"ic", "", measureGt1},
	{"able", "", measureGt1}, {"ible", "", measureGt1},
	{"ant", "", measureGt1}, {"ement", "", measureGt1}, {"ment", "", measureGt1}, {"ent", "", measureGt1},
	{"ion", "", measureGt1AndST}, {"ou", "", measureGt1},
	{"ism", "", measureGt1},
	{"ate", "", measureGt1}, {"iti", "", measureGt1},
	{"ous", "", measureGt1},
	{"ive", "", measureGt1},
	{"ize", "", measureGt1},
}

// applyRules applies the first rule, among those for the word's
// second-to-last letter, whose suffix ends w, if its condition holds. The
// rules are grouped by that letter, as in FTS5, so that a rule whose suffix
// matches but whose condition fails stops the search.
func applyRules(w []byte, rules []rule) []byte {
	if len(w) < 2 {
		return w
	}
	key := w[len(w)-2]
	for _, r := range rules {
		if r.suffix[len(r.suffix)-2] != key {
			continue
		}
		if endsWith(w, r.suffix) {
			if s := w[:len(w)-len(r.suffix)]; r.cond(s) {
				return append(s, r.repl...)
			}
			return w
		}
	}
	return w
}
