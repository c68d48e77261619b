package text

import "math"

// bm25 parameters, as in FTS5.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Corpus holds the figures of the whole indexed corpus that bm25 needs, as
// FTS5 counts them: every document of the index, whatever a search filters.
type Corpus struct {
	Docs   uint64 // number of documents
	Tokens uint64 // total number of tokens
}

// IDF returns FTS5's inverse document frequency of a phrase that hits of the
// corpus' documents contain.
func (c Corpus) IDF(hits uint64) float64 {
	v := math.Log(float64(float64(float64(c.Docs)-float64(hits))+0.5) / float64(float64(hits)+0.5))
	if v <= 0 {
		v = 1e-6
	}
	return v
}

// Score returns FTS5's bm25() with every column weight 1, negated so that
// higher is better, of a document of dl tokens with freq[i] counted
// instances of phrase i (from Query.Freq) whose inverse document frequency is
// idf[i] (from IDF). Explicit conversions keep the compiler from fusing
// operations, so the result is bit-identical to FTS5's.
func (c Corpus) Score(freq []int, idf []float64, dl int) float64 {
	avgdl := float64(c.Tokens) / float64(c.Docs)
	var score float64
	for i, n := range freq {
		f := float64(n)
		num := float64(f * (bm25K1 + 1.0))
		den := float64(f + float64(bm25K1*float64(float64(1-bm25B)+float64(float64(bm25B*float64(dl))/avgdl))))
		score = float64(score + float64(idf[i]*float64(num/den)))
	}
	return score
}

// Term returns what a phrase with freq instances in a document of dl tokens
// and inverse document frequency idf adds to Score: it grows with freq and
// shrinks as dl grows, so Term(freq, idf, 0) bounds it for any length. It
// is computed like Score's terms, but Score sums them in phrase order: a
// bound built from Terms should allow for the rounding (see MaxTerm).
func (c Corpus) Term(freq int, idf float64, dl int) float64 {
	avgdl := float64(c.Tokens) / float64(c.Docs)
	f := float64(freq)
	num := float64(f * (bm25K1 + 1.0))
	den := float64(f + float64(bm25K1*float64(float64(1-bm25B)+float64(float64(bm25B*float64(dl))/avgdl))))
	return float64(idf * float64(num/den))
}

// MaxTerm returns the limit of Term as the frequency grows, idf·(k1+1):
// what a phrase of inverse document frequency idf adds to Score is below
// it, whatever the document.
func MaxTerm(idf float64) float64 { return idf * (bm25K1 + 1) }

// RoundUp returns a bound b (a sum of at most a few dozen Terms or
// MaxTerms) raised enough that no score computed by Score from the same
// parts exceeds it through rounding: the parts are non-negative, so each
// sum is within a relative 1e-15 or so of the exact one.
func RoundUp(b float64) float64 { return b * (1 + 1e-9) }
