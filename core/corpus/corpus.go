// Package corpus generates the seeded synthetic corpus that every memos
// benchmark shares: `memos bench`'s synthetic data set (core/bench/dataset)
// and the backend kit's benchmarks (backendtest.RunBenchmarks). One
// generator, so that figures from the Go benchmarks and from `memos bench`
// describe the same data.
//
// The language has a Zipf vocabulary: English function words at the top,
// then pronounceable pseudo-words that no stemmer conflates, drawn with
// frequency ∝ 1/rank. Memories belong to topics (about five memories each);
// a topic has a few rarer words and a namespace, and a quarter of a
// memory's words are its topic's, at least two of them distinct. Lengths
// are log-normal (median 16 words, 4–160), types, significance and sessions
// vary. A query names three of a topic's words and runs in the topic's
// namespace; every memory of the topic is relevant. Memories that share no
// word with the query are still relevant, as happens with real paraphrase,
// so that recall below 1 is expected from lexical retrievers.
//
// The package depends on core/driver and core/query only, so that
// implementers' kits can use it without linking the engine.
package corpus

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// Options configure New.
type Options struct {
	// Docs is the number of memories, at least 1.
	Docs int
	// Queries is the number of queries (default 200).
	Queries int
	// Seed makes the corpus: the same options give the same memories and
	// queries, byte for byte, on every machine and Go version.
	Seed int64
	// Vocabulary is the number of distinct words (default Docs, clamped to
	// 2,000–50,000).
	Vocabulary int
}

// Corpus is a generated corpus: memories and queries with known answers.
type Corpus struct {
	Docs    []Doc
	Queries []Query
}

// Doc is one memory of the corpus.
type Doc struct {
	// Key names the memory in Query.Relevant: "m0", "m1", ...
	Key          string
	Content      string
	Namespace    string
	Type         driver.Type
	Significance int
	Source       string // "synthetic:" + Key
	Session      string // twenty memories per session
}

// Query is one query of the corpus.
type Query struct {
	ID string // "q0", "q1", ...
	// Words are three words of the query's topic, rarer than the 200
	// commonest words of the language.
	Words     []string
	Namespace string
	// Relevant lists the keys of the topic's memories.
	Relevant []string
}

// Parameters of the corpus; see the package documentation.
const (
	zipfExponent    = 1.0  // word frequency ∝ 1/rank
	docsPerTopic    = 5    // average topic size: the relevant set of a query
	wordsPerTopic   = 6    // topic words drawn for each topic
	topicWordShare  = 0.25 // share of a memory's words that are its topic's
	queryTopicWords = 3    // topic words in a query
	firstTopicRank  = 200  // topic words are rarer than the 200 commonest words
	medianLength    = 16.0 // words in a memory: log-normal around this median
	lengthSigma     = 0.6
	minLength       = 4
	maxLength       = 160
)

// functionWords are the commonest ranks of the synthetic language, so that
// memories carry English's share of words that say nothing.
var functionWords = strings.Fields("the of and to a in is it that for was on with as we be at this have from but not by you")

// syntheticNamespaces and their shares of topics: scoped queries see their
// own namespace and the default one, as in a real multi-project store.
var syntheticNamespaces = []struct {
	name  string
	share float64
}{
	{driver.DefaultNamespace, 0.4}, {"project:alpha", 0.2}, {"project:beta", 0.2}, {"user:sam", 0.2},
}

var syntheticTypes = []driver.Type{driver.TypeFact, driver.TypeFact, driver.TypePreference, driver.TypeEvent, driver.TypeNote}

// New generates a corpus of o.Docs memories; see the package documentation.
func New(o Options) (*Corpus, error) {
	if o.Docs < 1 {
		return nil, driver.Invalidf("synthetic corpus: %d documents; want at least 1", o.Docs)
	}
	if o.Queries <= 0 {
		o.Queries = 200
	}
	if o.Vocabulary <= 0 {
		o.Vocabulary = min(max(o.Docs, 2000), 50000)
	}
	if o.Vocabulary < firstTopicRank+wordsPerTopic {
		return nil, driver.Invalidf("synthetic corpus: vocabulary of %d words; want at least %d", o.Vocabulary, firstTopicRank+wordsPerTopic)
	}
	g := &generator{r: rand.New(rand.NewPCG(uint64(o.Seed), 0x6d656d6f73)), words: Vocabulary(o.Vocabulary)}
	g.cdf = ZipfCDF(len(g.words), zipfExponent)

	nTopics := max(1, (o.Docs+docsPerTopic/2)/docsPerTopic)
	topics := make([]topic, nTopics)
	for i := range topics {
		t := &topics[i]
		t.ns = g.namespace()
		for len(t.words) < wordsPerTopic {
			w := firstTopicRank + g.intn(len(g.words)-firstTopicRank)
			if !slices.Contains(t.words, w) {
				t.words = append(t.words, w)
			}
		}
	}
	c := &Corpus{Docs: make([]Doc, o.Docs)}
	for i := range c.Docs {
		ti := g.intn(nTopics)
		if i < nTopics {
			ti = i // every topic has at least one memory
		}
		t := &topics[ti]
		key := fmt.Sprintf("m%d", i)
		t.docs = append(t.docs, key)
		c.Docs[i] = Doc{
			Key:          key,
			Content:      g.text(t),
			Namespace:    t.ns,
			Type:         syntheticTypes[g.intn(len(syntheticTypes))],
			Significance: 3 + g.intn(5),
			Source:       "synthetic:" + key,
			Session:      fmt.Sprintf("s%d", i/20),
		}
	}
	for i := range o.Queries {
		ti := g.intn(nTopics)
		if o.Queries <= nTopics {
			ti = (i*nTopics/o.Queries + g.intn(max(1, nTopics/o.Queries))) % nTopics // spread over topics
		}
		t := &topics[ti]
		picked := slices.Clone(t.words)
		g.shuffle(picked)
		var words []string
		for _, w := range picked[:queryTopicWords] {
			words = append(words, g.words[w])
		}
		c.Queries = append(c.Queries, Query{
			ID:        fmt.Sprintf("q%d", i),
			Words:     words,
			Namespace: t.ns,
			Relevant:  slices.Clone(t.docs),
		})
	}
	return c, nil
}

type topic struct {
	ns    string
	words []int // ranks
	docs  []string
}

// generator draws everything from one PCG stream with arithmetic of its own
// (no math/rand distribution helpers), so that the output depends on the
// seed only.
type generator struct {
	r     *rand.Rand
	words []string
	cdf   []float64
}

func (g *generator) float() float64 { return float64(g.r.Uint64()>>11) * 0x1p-53 }

func (g *generator) intn(n int) int { return int(g.r.Uint64() % uint64(n)) }

func (g *generator) shuffle(s []int) {
	for i := len(s) - 1; i > 0; i-- {
		j := g.intn(i + 1)
		s[i], s[j] = s[j], s[i]
	}
}

// normal draws a standard normal variate (Box–Muller).
func (g *generator) normal() float64 {
	u := 1 - g.float() // (0, 1]
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*g.float())
}

func (g *generator) namespace() string {
	x := g.float()
	for _, ns := range syntheticNamespaces {
		if x < ns.share {
			return ns.name
		}
		x -= ns.share
	}
	return driver.DefaultNamespace
}

// zipfWord draws a rank with probability ∝ 1/rank^s.
func (g *generator) zipfWord() int {
	i, _ := slices.BinarySearch(g.cdf, g.float())
	return min(i, len(g.cdf)-1)
}

// text writes one memory of topic t.
func (g *generator) text(t *topic) string {
	n := int(math.Round(medianLength * math.Exp(lengthSigma*g.normal())))
	n = min(max(n, minLength), maxLength)
	ranks := make([]int, n)
	for i := range ranks {
		if g.float() < topicWordShare {
			ranks[i] = t.words[g.intn(len(t.words))]
		} else {
			ranks[i] = g.zipfWord()
		}
	}
	// At least two distinct topic words, at random places.
	a := g.intn(len(t.words))
	b := (a + 1 + g.intn(len(t.words)-1)) % len(t.words)
	pa := g.intn(n)
	pb := (pa + 1 + g.intn(n-1)) % n
	ranks[pa], ranks[pb] = t.words[a], t.words[b]

	var sb strings.Builder
	sentence := 0
	for i, r := range ranks {
		w := g.words[r]
		if sentence == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			sb.WriteByte(' ')
		}
		sb.WriteString(w)
		sentence++
		if i == n-1 || (sentence >= 6 && g.float() < 0.12) {
			sb.WriteByte('.')
			if i < n-1 {
				sb.WriteByte(' ')
			}
			sentence = 0
		}
	}
	return sb.String()
}

// Vocabulary returns n words: the function words, then pseudo-words made
// of consonant–vowel syllables. The consonants leave out c, l, t, v, w, y
// and z, so no porter-stemmer suffix rule fires on two words to give the
// same stem, and stop words are skipped; every word is its own term.
func Vocabulary(n int) []string {
	const consonants, vowels = "bdfgkmnprs", "aeiou"
	base := len(consonants) * len(vowels)
	words := slices.Clone(functionWords)
	seen := make(map[string]bool, n)
	for _, w := range words {
		seen[w] = true
	}
	for i := base; len(words) < n; i++ {
		var sb strings.Builder
		var digits []int
		for x := i; x > 0; x /= base {
			digits = append(digits, x%base)
		}
		for _, d := range slices.Backward(digits) {
			sb.WriteByte(consonants[d/len(vowels)])
			sb.WriteByte(vowels[d%len(vowels)])
		}
		w := sb.String()
		if seen[w] || query.IsStopWord(w) {
			continue
		}
		seen[w] = true
		words = append(words, w)
	}
	return words[:n]
}

// ZipfCDF returns the cumulative distribution of ranks 1..n with
// probability ∝ 1/rank^s.
func ZipfCDF(n int, s float64) []float64 {
	cdf := make([]float64, n)
	sum := 0.0
	for i := range cdf {
		sum += 1 / math.Pow(float64(i+1), s)
		cdf[i] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	return cdf
}

// FormatSize writes a corpus size the way benchmarks name it (the inverse
// of dataset.ParseSize for round numbers): 10000 → "10k".
func FormatSize(n int) string {
	switch {
	case n >= 1e6 && n%1e6 == 0:
		return strconv.Itoa(n/1e6) + "m"
	case n >= 1e3 && n%1e3 == 0:
		return strconv.Itoa(n/1e3) + "k"
	}
	return strconv.Itoa(n)
}
