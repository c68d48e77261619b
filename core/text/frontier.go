package text

import (
	"encoding/binary"
	"errors"
	"slices"
)

// A Frontier is what a backend keeps beside its index, per term, to bound
// the term's bm25 contribution more tightly than MaxTerm: the
// (frequency, length) pairs of the documents that contain the term, less
// every pair another one dominates (as many instances or more, in as few
// tokens or fewer). Term grows with the frequency and shrinks as the
// length grows, so the largest Term over the frontier is the largest over
// every document it was built from, whatever the corpus' figures are when
// it is asked (Bound): the frontier holds raw counts, not scores, and stays
// right as documents are added elsewhere and the average length moves.
//
// A frontier only grows while documents are added (Add). A document that is
// deleted or changed leaves its pair behind: the bound may then be higher
// than the largest Term of the documents left, never lower, which is safe
// for pruning. Rebuilding from the index makes it tight again.
//
// Its points are ordered by frequency and length, both strictly rising. At
// most MaxFrontier are kept: beyond that two neighbours give way to one
// pair that dominates both (the higher frequency with the shorter length),
// so the bound only loosens.
type Frontier []FrontierPoint

// A FrontierPoint is one document's figures for a term: its instances of
// the term and its number of tokens.
type FrontierPoint struct {
	Freq, Len int
}

// MaxFrontier is the most points a Frontier keeps.
const MaxFrontier = 16

// Add returns f with p added (f's array may be reused) and whether that
// changed it: not when a point of f dominates p.
func (f Frontier) Add(p FrontierPoint) (Frontier, bool) {
	// The first point with at least p's frequency: it dominates p when it
	// is no longer; the points before it (lower frequencies) are dominated
	// by p when they are at least as long.
	i, _ := slices.BinarySearchFunc(f, p.Freq, func(q FrontierPoint, freq int) int { return q.Freq - freq })
	if i < len(f) && f[i].Len <= p.Len {
		return f, false
	}
	j := i // f[j:] stays: higher frequencies (or equal, and longer: p replaces it)
	if j < len(f) && f[j].Freq == p.Freq {
		j++
	}
	k := i
	for k > 0 && f[k-1].Len >= p.Len {
		k--
	}
	f = slices.Replace(f, k, j, p)
	for len(f) > MaxFrontier {
		f = f.merge()
	}
	return f, true
}

// merge replaces the two neighbours whose lengths are closest by the pair
// that dominates both.
func (f Frontier) merge() Frontier {
	best := 0
	for i := 1; i+1 < len(f); i++ {
		if f[i+1].Len-f[i].Len < f[best+1].Len-f[best].Len {
			best = i
		}
	}
	f[best+1].Len = f[best].Len
	return slices.Delete(f, best, best+1)
}

// Bound returns the largest Term, over f's points, of a phrase whose
// inverse document frequency is idf: no document that f was built from
// scores more for a phrase whose instances in it are at most its instances
// of f's term. A sum of Bounds, like one of Terms, should be raised by
// RoundUp before it is compared with a Score.
func (f Frontier) Bound(c Corpus, idf float64) float64 {
	var b float64
	for _, p := range f {
		b = max(b, c.Term(p.Freq, idf, p.Len))
	}
	return b
}

// AppendBinary appends f's encoding (varints) to buf.
func (f Frontier) AppendBinary(buf []byte) ([]byte, error) {
	for _, p := range f {
		buf = binary.AppendUvarint(buf, uint64(p.Freq))
		buf = binary.AppendUvarint(buf, uint64(p.Len))
	}
	return buf, nil
}

// DecodeFrontier decodes what AppendBinary wrote.
func DecodeFrontier(b []byte) (Frontier, error) {
	var f Frontier
	for len(b) > 0 {
		freq, n := binary.Uvarint(b)
		if n <= 0 || freq > 1<<31 {
			return nil, errMalformedFrontier
		}
		b = b[n:]
		dl, n := binary.Uvarint(b)
		if n <= 0 || dl > 1<<31 {
			return nil, errMalformedFrontier
		}
		b = b[n:]
		p := FrontierPoint{Freq: int(freq), Len: int(dl)}
		if k := len(f); k > 0 && (p.Freq <= f[k-1].Freq || p.Len <= f[k-1].Len) {
			return nil, errMalformedFrontier
		}
		f = append(f, p)
	}
	return f, nil
}

var errMalformedFrontier = errors.New("malformed term frontier")
