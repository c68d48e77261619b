// Package hash is memos' built-in embedder and the default: it needs no
// model, no download, no server and no key, and embeds a 30-word text in
// about 10 µs of one core.
//
// It is lexical, not semantic. A vector is a signed feature hashing ("the
// hashing trick") of what the text is written with, so two texts are similar
// when they share words, word pairs or pieces of words. "Alice prefers
// open-source tools" is close to "alice likes open source software" because
// they share "alice", "open", "source" and the letter sequences in them; it
// is not close to "Bob enjoys free software licences", which means much the
// same in other words. Synonyms, paraphrases and other languages' words for
// the same thing are not recognised. For meaning, configure a real model
// (embedders ollama, openai or wordvec); this embedder makes hybrid search
// tolerant of inflections ("kitten"/"kittens") and typos ("recieve"/"receive")
// that an exact keyword index misses.
//
// # Features
//
// The text is split into lower-case tokens (diacritics removed,
// punctuation separates): for ASCII as text.Tokenize does, the tokenizer of
// the keyword indexes; outside ASCII by v1's own definition (see
// appendTokens), which text.Tokenize has since left to follow FTS5. Each feature is hashed with 64-bit FNV-1a and a MurmurHash3
// finaliser; the high bits choose one of Dim buckets, the lowest bit a sign,
// so that collisions cancel out on average instead of piling up. The
// features and their weights (constants in this file) are:
//
//   - word: every token, weight 1, or 0.25 for English function words
//     ("the", "is", "of"), which otherwise make any two English sentences
//     look alike;
//   - word pair: every two adjacent tokens, weight 0.4, except pairs of two
//     function words;
//   - character n-grams: the 3- and 4-rune substrings of each token wrapped
//     in boundary markers ("<kitten>" gives "<ki", "kit", ..., "tten>"), each
//     weighted 1.5/√(number of n-grams of the token), so that a word's
//     n-grams together add 1.5 times as much to the vector's length as the
//     word feature, however long the word; function words have none.
//     They make "kitten" and "kittens", or "receive" and "recieve", similar.
//
// The weights were chosen on a small retrieval fixture of agent memories
// (see the tests), averaged over several dimensions: n-grams weighted above
// whole words and 3–4-grams rather than 3–5-grams did best; an English
// suffix-stripping rule on top of the n-grams made no measurable difference
// and was left out.
//
// Within a text, the weight of a distinct word (and of its n-grams) or word
// pair that occurs tf times is multiplied by 1+ln(tf), so repetition counts,
// sublinearly. The vector is then scaled to unit length.
//
// A text with no tokens — the empty string, or only punctuation — embeds to
// one fixed unit vector (a reserved feature), so every output is unit length
// and all such texts are equal to each other.
//
// Because of collisions, texts without shared features typically score
// within about ±0.1 of zero at the default 256 dimensions, short texts
// more; more dimensions lower that noise at the cost of storage and search
// time.
//
// # Versions
//
// The model ID, "hash-v1-<dim>", names the feature scheme and the dimension.
// Any change that alters a vector (features, weights, hash, tokenizer) must
// bump the version, so that stores embedded with the old scheme are re-embedded
// instead of being searched with incompatible vectors.
package hash

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memos-go/memos/core/driver"
)

// Name is the name the embedder registers under.
const Name = "hash"

// Version is the feature scheme's version, part of the model ID.
const Version = 1

// Dimension limits and default.
const (
	DefaultDim = 256
	MinDim     = 16
	MaxDim     = 4096
)

// Feature-class weights; see the package documentation.
const (
	wordWeight     = 1.0
	stopWordWeight = 0.25
	pairWeight     = 0.4
	gramWeight     = 1.5 // shared by all n-grams of one word
	minGram        = 3
	maxGram        = 4
)

// Feature classes: the first byte hashed, so that a word, a pair and an
// n-gram with the same letters are different features.
const (
	classWord  = 'w'
	classPair  = 'p'
	classGram  = 'g'
	classEmpty = 'e'
)

// Config configures the embedder. The zero value is valid.
type Config struct {
	// Dim is the vector dimension, 16–4096; 0 means DefaultDim (256).
	// Larger dimensions have fewer collisions and cost more to store and
	// search.
	Dim int `koanf:"dim"`
}

// Embedder is the hash embedder. It holds no state beyond its dimension, so
// it is safe for concurrent use and needs no Close.
type Embedder struct {
	info driver.ModelInfo
}

var _ driver.Embedder = (*Embedder)(nil)

func init() {
	driver.RegisterEmbedder(Name, driver.NewEmbedderDriver(Name, Open))
}

// Open returns an embedder for cfg. A dimension outside 16–4096 is an
// ErrInvalid error.
func Open(ctx context.Context, cfg Config) (*Embedder, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("hash embedder: %w", err)
	}
	return New(cfg)
}

// New is Open without a context: opening does no I/O.
func New(cfg Config) (*Embedder, error) {
	cfg.Defaults()
	dim := cfg.Dim
	if dim < MinDim || dim > MaxDim {
		return nil, fmt.Errorf("hash embedder: %w: dim %d is outside %d–%d (0 means %d)",
			driver.ErrInvalid, cfg.Dim, MinDim, MaxDim, DefaultDim)
	}
	return &Embedder{info: driver.ModelInfo{
		ID:         fmt.Sprintf("%s-v%d-%d", Name, Version, dim),
		Dim:        dim,
		MaxBatch:   0,
		Normalized: true,
	}}, nil
}

// Info describes the model: ID "hash-v1-<dim>", no batch limit, unit-length
// vectors.
func (e *Embedder) Info(ctx context.Context) (driver.ModelInfo, error) {
	return e.info, nil
}

// ctxEvery is how many texts Embed embeds between two checks of its context.
const ctxEvery = 64

// Embed returns one unit vector of Info().Dim floats per text. The same text
// always gives the same vector, alone or in any batch, in any process, on any
// platform. It fails only when ctx is done.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var s scratch
	for i, t := range texts {
		if i%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("hash embed: %w", err)
			}
		}
		out[i] = make([]float32, e.info.Dim)
		s.embed(t, out[i])
	}
	return out, nil
}

// scratch holds buffers reused across the texts of one Embed call.
type scratch struct {
	toks  []string
	stop  []bool   // stop[i]: toks[i] is a function word
	words []keyed  // distinct-word grouping
	pairs []uint64 // word-pair hashes
	buf   []byte   // "<token>" for n-grams
	runes []int    // rune offsets into buf
}

// keyed is a token's index with the hash it is grouped by.
type keyed struct {
	h uint64
	i int
}

// embed writes the embedding of text into v, which must be zeroed.
func (s *scratch) embed(content string, v []float32) {
	s.toks = appendTokens(s.toks[:0], content)
	toks := s.toks
	s.stop = s.stop[:0]
	for _, t := range toks {
		s.stop = append(s.stop, isStopWord(t))
	}

	// Words: group equal tokens to weigh each distinct one by 1+ln(tf).
	s.words = s.words[:0]
	for i, t := range toks {
		s.words = append(s.words, keyed{hashString(classWord, t), i})
	}
	slices.SortFunc(s.words, func(a, b keyed) int { return cmpU64(a.h, b.h) })
	for i := 0; i < len(s.words); {
		j := i + 1
		for j < len(s.words) && s.words[j].h == s.words[i].h {
			j++
		}
		w, tf := s.words[i], tfWeight(j-i)
		if s.stop[w.i] {
			add(v, w.h, stopWordWeight*tf)
		} else {
			add(v, w.h, wordWeight*tf)
			s.grams(v, toks[w.i], gramWeight*tf)
		}
		i = j
	}

	// Word pairs.
	s.pairs = s.pairs[:0]
	for i := 1; i < len(toks); i++ {
		if s.stop[i-1] && s.stop[i] {
			continue
		}
		s.pairs = append(s.pairs, hashPair(toks[i-1], toks[i]))
	}
	slices.Sort(s.pairs)
	for i := 0; i < len(s.pairs); {
		j := i + 1
		for j < len(s.pairs) && s.pairs[j] == s.pairs[i] {
			j++
		}
		add(v, s.pairs[i], pairWeight*tfWeight(j-i))
		i = j
	}

	if !normalize(v) {
		// No tokens (or, in theory, features that cancel out exactly).
		clear(v)
		add(v, hashString(classEmpty, ""), 1)
		normalize(v)
	}
}

// grams adds the character n-grams of tok with boundary markers, weighted so
// that together they weigh w.
func (s *scratch) grams(v []float32, tok string, w float64) {
	s.buf = append(append(append(s.buf[:0], '<'), tok...), '>')
	s.runes = s.runes[:0]
	for i, c := range s.buf {
		if utf8.RuneStart(c) {
			s.runes = append(s.runes, i)
		}
	}
	nr := len(s.runes)
	s.runes = append(s.runes, len(s.buf))
	count := 0
	for n := minGram; n <= maxGram; n++ {
		count += max(nr-n+1, 0)
	}
	if count == 0 {
		return
	}
	gw := w / math.Sqrt(float64(count))
	for n := minGram; n <= maxGram; n++ {
		for i := 0; i+n <= nr; i++ {
			add(v, hashBytes(classGram, s.buf[s.runes[i]:s.runes[i+n]]), gw)
		}
	}
}

// tfWeight is the sublinear term-frequency weight 1+ln(tf). It is rounded to
// float32 so that a last-bit difference between math.Log implementations
// (assembly on some platforms) cannot change a vector.
func tfWeight(tf int) float64 {
	if tf == 1 {
		return 1
	}
	return float64(float32(1 + math.Log(float64(tf))))
}

// add adds ±w to the bucket that feature hash h falls in.
func add(v []float32, h uint64, w float64) {
	h = fmix64(h)
	i, _ := bits.Mul64(h, uint64(len(v))) // high bits pick the bucket
	if h&1 != 0 {                         // the low bit picks the sign
		w = -w
	}
	v[i] += float32(w)
}

// normalize scales v to unit length, reporting false for a zero vector.
// Like every computation here it uses only correctly rounded operations, so
// the result is the same on every platform: the explicit conversion keeps the
// compiler from fusing the multiply and add (Go allows fused multiply-add
// unless a conversion forces rounding).
func normalize(v []float32) bool {
	var ss float64
	for _, x := range v {
		ss += float64(float64(x) * float64(x))
	}
	if ss == 0 {
		return false
	}
	inv := 1 / math.Sqrt(ss)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return true
}

// FNV-1a, 64 bit.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(class byte, s string) uint64 {
	h := (fnvOffset ^ uint64(class)) * fnvPrime
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func hashBytes(class byte, b []byte) uint64 {
	h := (fnvOffset ^ uint64(class)) * fnvPrime
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// hashPair hashes two tokens with a separator no token contains.
func hashPair(a, b string) uint64 {
	h := hashString(classPair, a)
	h = (h ^ ' ') * fnvPrime
	for i := 0; i < len(b); i++ {
		h = (h ^ uint64(b[i])) * fnvPrime
	}
	return h
}

// fmix64 is MurmurHash3's finaliser. FNV-1a's low bits depend on few input
// bits (the lowest is the parity of the bytes' lowest bits); this spreads
// every input bit over the whole word before bucket and sign are taken.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// stopWords are English function words. They are part of the model: changing
// the list changes vectors and needs a new Version.
var stopWords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`
		a an the and or not but if then so than
		of at by for with about to from in on into onto as
		am is are was were be been being do does did have has had
		can could would should will shall may might must
		what which who whom whose when where why how
		this that these those there here
		i me my mine myself you your yours he him his she her hers
		it its we us our ours they them their theirs`) {
		m[w] = true
	}
	return m
}()

func isStopWord(t string) bool { return len(t) <= 8 && stopWords[t] }
