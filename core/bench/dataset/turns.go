package dataset

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/corpus"
)

// TurnsOptions configure Turns.
type TurnsOptions struct {
	// Dir is the shared data directory that holds locomo/locomo-dev.json and
	// longmemeval/longmemeval-s-dev100.json.gz (see DevTurns).
	Dir string
	// Docs is the number of memories, at least 1.
	Docs int
	// Queries is the number of queries (default 200).
	Queries int
	// Seed makes the variations: the same options and data give the same
	// memories and queries.
	Seed int64
}

// turnNames is the number of names the repetitions of Turns draw from.
const turnNames = 50_000

// Turns builds a corpus of o.Docs memories of real conversation text: the
// distinct turns of the LoCoMo and LongMemEval-S dev sets (DevSet, about
// 50,000), repeated as often as it takes. The first repetition is the dev
// text as it is. Each later one stands for other people's conversations:
// its names — the words that the dev text capitalises inside sentences
// more than four times as often as it writes them in lower case — are replaced by names drawn from a Zipf distribution over 50,000 generated ones (the same
// name for the same word throughout the repetition), its numbers by other
// numbers of as many digits, and its sessions are its own. The queries are
// the dev questions, each varied as one repetition (chosen at random) would
// word it, and labelled with that repetition's copies of the question's
// evidence turns (those the store holds; a question without any is not
// labelled). Recall on them is a lower bound: a copy of an evidence turn in
// another repetition that names nobody and no number reads the same, and
// answers the question as well, unlabelled.
//
// A missing data file is an error that wraps fs.ErrNotExist.
func Turns(o TurnsOptions) (*Dataset, error) {
	if o.Docs < 1 {
		return nil, core.Invalidf("turns data set: %d documents; want at least 1", o.Docs)
	}
	if o.Queries <= 0 {
		o.Queries = 200
	}
	all, questions, err := DevSet(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("turns data set: %w", err)
	}
	// Turns without text are left out; evidence indexes follow.
	var turns []Turn
	moved := make([]int, len(all))
	for i, t := range all {
		moved[i] = -1
		if hasText(t.Content) {
			moved[i] = len(turns)
			turns = append(turns, t)
		}
	}
	if len(turns) == 0 || len(questions) == 0 {
		return nil, core.Invalidf("turns data set: the dev data in %s holds no turns or no questions", o.Dir)
	}
	v := newVarier(o.Seed, turns, questionTexts(questions))
	c := Corpus{Name: "turns-" + corpus.FormatSize(o.Docs), Docs: make([]Doc, o.Docs)}
	for i := range c.Docs {
		t, rep := turns[i%len(turns)], i/len(turns)
		in := core.Input{Content: v.vary(t.Content, rep), Session: t.Session}
		if rep > 0 {
			in.Session = fmt.Sprintf("%s#%d", t.Session, rep)
		}
		in.Content, _ = clip(in.Content)
		c.Docs[i] = Doc{Key: fmt.Sprintf("t%d", i), Input: in}
	}
	reps := (o.Docs + len(turns) - 1) / len(turns)
	labelled := 0
	for i := range o.Queries {
		h := v.hash(uint64(i), "query")
		q := questions[h%uint64(len(questions))]
		rep := int((h >> 32) % uint64(reps))
		qq := Query{ID: fmt.Sprintf("q%d", i), Text: v.vary(q.Text, rep)}
		for _, e := range q.Evidence {
			if j := moved[e]; j >= 0 && rep*len(turns)+j < o.Docs {
				if qq.Relevant == nil {
					qq.Relevant = map[string]float64{}
				}
				qq.Relevant[fmt.Sprintf("t%d", rep*len(turns)+j)] = 1
			}
		}
		if qq.Labelled() {
			labelled++
		}
		c.Queries = append(c.Queries, qq)
	}
	return &Dataset{Name: "turns", Corpora: []Corpus{c}, Notes: []string{
		fmt.Sprintf("turns: the %d distinct LoCoMo and LongMemEval-S dev turns, repeated with other names and numbers; its queries are the dev questions, %d of %d labelled with their repetition's copies of the evidence (recall is a lower bound: an evidence turn that names nobody reads the same in every repetition)", len(turns), labelled, o.Queries),
	}}, nil
}

// hasText reports whether s has a letter or a digit: a few dev turns are
// only an image, with nothing to store.
func hasText(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// varier rewrites a text as a repetition of Turns words it.
type varier struct {
	salt   uint64
	isName map[string]bool // the dev text's names
	names  []string        // what a repetition calls them
	cdf    []float64       // Zipf over names
}

func newVarier(seed int64, turns []Turn, questions []string) *varier {
	words := corpus.Vocabulary(turnNames + 200)[200:] // past the function words
	v := &varier{salt: uint64(seed), isName: map[string]bool{}, names: make([]string, len(words)), cdf: corpus.ZipfCDF(len(words), 1)}
	for i, w := range words {
		v.names[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	// Names are written capitalised inside sentences far more often than in
	// lower case (which a name's spelling in a link or a typo may be).
	mid, lower := map[string]int{}, map[string]int{}
	see := func(text string) {
		eachWord(text, func(w string, sentenceStart bool) string {
			r, _ := utf8.DecodeRuneInString(w)
			switch {
			case !unicode.IsUpper(r):
				lower[w]++
			case !sentenceStart && utf8.RuneCountInString(w) > 1:
				mid[w]++
			}
			return w
		})
	}
	for _, t := range turns {
		see(t.Content)
	}
	for _, q := range questions {
		see(q)
	}
	for w, n := range mid {
		if n > 4*lower[strings.ToLower(w)] {
			v.isName[w] = true
		}
	}
	return v
}

// hash mixes the seed, a repetition and a string: the same on every run and
// machine, so that the variations are too.
func (v *varier) hash(rep uint64, s string) uint64 {
	h := fnv.New64a()
	var b [16]byte
	for i := range 8 {
		b[i], b[8+i] = byte(v.salt>>(8*i)), byte(rep>>(8*i))
	}
	h.Write(b[:])
	h.Write([]byte(s))
	return mix(h.Sum64())
}

// mix is splitmix64's finaliser: FNV's low bits alone are poorly mixed.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// vary returns text as repetition rep words it; repetition 0 is the text.
func (v *varier) vary(text string, rep int) string {
	if rep == 0 {
		return text
	}
	return eachWord(text, func(w string, _ bool) string {
		switch {
		case v.isName[w]:
			u := float64(v.hash(uint64(rep), w)>>11) * 0x1p-53
			k, _ := slices.BinarySearch(v.cdf, u)
			return v.names[min(k, len(v.names)-1)]
		case w[0] >= '0' && w[0] <= '9':
			h := v.hash(uint64(rep), w)
			b := []byte(w)
			for k := range b {
				b[k] = byte('0' + h%10)
				if k == 0 && len(b) > 1 && b[k] == '0' {
					b[k] = '1' // no leading zero
				}
				h = mix(h)
			}
			return string(b)
		}
		return w
	})
}

// eachWord rewrites text word by word: f gets each word (a run of letters,
// or of ASCII digits) and whether it starts a sentence, and
// returns what to write instead; everything else is copied.
func eachWord(text string, f func(w string, sentenceStart bool) string) string {
	var sb strings.Builder
	sb.Grow(len(text) + len(text)/8)
	sentenceStart := true
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		j := i + n
		switch {
		case unicode.IsLetter(r):
			for j < len(text) {
				r2, n2 := utf8.DecodeRuneInString(text[j:])
				if !unicode.IsLetter(r2) {
					break
				}
				j += n2
			}
		case r >= '0' && r <= '9':
			for j < len(text) && text[j] >= '0' && text[j] <= '9' {
				j++
			}
		default:
			switch r {
			case '.', '!', '?', '\n', ':':
				sentenceStart = true
			}
			sb.WriteString(text[i:j])
			i = j
			continue
		}
		sb.WriteString(f(text[i:j], sentenceStart))
		sentenceStart = false
		i = j
	}
	return sb.String()
}
