// Package wordvec is an offline semantic embedder built from static word
// vectors (GloVe's text format, optionally gzipped) combined into sentence
// vectors by SIF weighting with common-component removal (Arora, Liang and
// Ma, "A Simple but Tough-to-Beat Baseline for Sentence Embeddings", 2017).
// It registers as the embedder "wordvec"; cmd/memos-embed-wordvec serves it
// as a plugin.
//
// # Model
//
// A text is tokenised with core/text.Tokenize (lower case, diacritics
// removed: the same tokens the keyword index sees). Each known word w
// contributes its vector scaled by a/(a+p(w)), a = 1e-3, so frequent words
// ("the", "on") count for little; unknown words are ignored. The weighted
// average then loses its projection on the common component u, and is
// normalised to unit length.
//
// p(w), the word's frequency, comes from a counts file when Config.Freqs
// names one (lines "word count"). Otherwise it is estimated from the word's
// rank r in the vector file (GloVe files list words by descending
// frequency) with Zipf's law: p(w) = 1/(r·H_N), H_N the N-th harmonic
// number for a vocabulary of N words.
//
// u is the first right singular vector of the (uncentred, as in the paper)
// matrix whose rows are the SIF-weighted vectors of the 10,000 most frequent
// words, i.e. the first 10,000 lines. The paper fits u on the sentence
// vectors of a corpus; a vector file comes without one, and the frequent
// words' weighted vectors are what dominates any corpus's sentence vectors.
// It is computed once at load by power iteration from a fixed start, so the
// same file always gives the same u and the same vectors.
//
// A text with no known word (the empty string, say) gets u itself: a fixed
// unit vector, orthogonal to every other text's vector after the removal,
// so such texts match each other and nothing else.
//
// # Caveats
//
// The whole vocabulary is held in memory (N×dim float32s: 40 MB for 100,000
// words of 100 dimensions) and loaded at open; Config.MaxWords keeps only
// the most frequent words. Word order is ignored.
package wordvec

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

// Name is the registry name of this embedder.
const Name = "wordvec"

const (
	sifA    = 1e-3  // SIF's smoothing parameter a
	pcWords = 10000 // words used to estimate the common component
)

// Config configures the embedder. Path is required.
type Config struct {
	// Path is the word-vector file: one word per line followed by its
	// vector, space separated (GloVe's text format; a first line "count dim"
	// as in word2vec and fastText .vec files is skipped), gzipped or not.
	Path string `koanf:"path"`
	// Dim, if set, is the dimension the file must have.
	Dim int `koanf:"dim"`
	// MaxWords, if set, keeps only the first (most frequent) words.
	MaxWords int `koanf:"max_words"`
	// Freqs, if set, is a file of "word count" lines giving word
	// frequencies; without it frequencies are estimated from rank order.
	Freqs string `koanf:"freqs"`
}

func init() {
	driver.RegisterEmbedder(Name, driver.NewEmbedderDriver(Name, Open))
}

// Embedder embeds texts with SIF-weighted word vectors. It is immutable
// after Open and safe for concurrent use.
type Embedder struct {
	info   driver.ModelInfo
	dim    int
	index  map[string]int32 // word → row
	vecs   []float32        // row-major, SIF weight already applied
	common []float64        // u, unit length
}

var _ driver.Embedder = (*Embedder)(nil)

// Open loads the vector file and prepares the model.
func Open(ctx context.Context, cfg Config) (*Embedder, error) {
	if cfg.Path == "" {
		return nil, fmt.Errorf("%w: wordvec: path is empty; set it to a GloVe-format vector file", driver.ErrInvalid)
	}
	if cfg.MaxWords < 0 || cfg.Dim < 0 {
		return nil, fmt.Errorf("%w: wordvec: max_words and dim must not be negative", driver.ErrInvalid)
	}
	words, vecs, dim, err := load(ctx, cfg.Path, cfg.MaxWords)
	if err != nil {
		return nil, err
	}
	if cfg.Dim != 0 && cfg.Dim != dim {
		return nil, fmt.Errorf("%w: wordvec: %s has %d dimensions, the config says %d", driver.ErrDimensionMismatch, cfg.Path, dim, cfg.Dim)
	}
	e := &Embedder{dim: dim, vecs: vecs, index: make(map[string]int32, len(words))}
	for i, w := range words {
		if _, dup := e.index[w]; !dup {
			e.index[w] = int32(i)
		}
	}
	p, err := frequencies(cfg.Freqs, words)
	if err != nil {
		return nil, err
	}
	for i := range words {
		wt := float32(sifA / (sifA + p[i]))
		row := e.vecs[i*dim : (i+1)*dim]
		for j := range row {
			row[j] *= wt
		}
	}
	e.common = commonComponent(e.vecs[:min(len(words), pcWords)*dim], dim)
	id := fmt.Sprintf("wordvec-sif:%s:%d", filepath.Base(cfg.Path), dim)
	if cfg.MaxWords > 0 {
		id += fmt.Sprintf(":max%d", cfg.MaxWords)
	}
	if cfg.Freqs != "" {
		id += ":freqs=" + filepath.Base(cfg.Freqs)
	}
	e.info = driver.ModelInfo{ID: id, Dim: dim, Normalized: true}
	return e, nil
}

// Info implements driver.Embedder.
func (e *Embedder) Info(context.Context) (driver.ModelInfo, error) { return e.info, nil }

// Words returns the number of distinct words the embedder knows (words
// that fold to the same token, such as "café" and "cafe", count once; the
// first, more frequent, one wins).
func (e *Embedder) Words() int { return len(e.index) }

// Embed implements driver.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("wordvec: %w", err)
	}
	out := make([][]float32, len(texts))
	acc := make([]float64, e.dim)
	for i, s := range texts {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("wordvec: %w", err)
			}
		}
		out[i] = e.embed(s, acc)
	}
	return out, nil
}

func (e *Embedder) embed(s string, acc []float64) []float32 {
	clear(acc)
	known := 0
	for _, tok := range text.Tokenize(s) {
		r, ok := e.index[tok]
		if !ok {
			continue
		}
		known++
		for j, x := range e.vecs[int(r)*e.dim : (int(r)+1)*e.dim] {
			acc[j] += float64(x)
		}
	}
	v := make([]float32, e.dim)
	if known > 0 {
		var proj float64
		for j, x := range acc {
			proj += x * e.common[j]
		}
		var n float64
		for j := range acc {
			acc[j] -= proj * e.common[j]
			n += acc[j] * acc[j]
		}
		if n > 1e-24 {
			inv := 1 / math.Sqrt(n)
			for j, x := range acc {
				v[j] = float32(x * inv)
			}
			return v
		}
	}
	for j, x := range e.common {
		v[j] = float32(x)
	}
	return v
}

// frequencies returns p(w) for each word, from the counts file or by Zipf's
// law on the rank.
func frequencies(path string, words []string) ([]float64, error) {
	p := make([]float64, len(words))
	if path == "" {
		var h float64
		for r := 1; r <= len(words); r++ {
			h += 1 / float64(r)
		}
		for i := range p {
			p[i] = 1 / (float64(i+1) * h)
		}
		return p, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: wordvec: freqs: %v", driver.ErrInvalid, err)
	}
	defer f.Close()
	counts := make(map[string]float64)
	var total float64
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		c, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if len(fields) != 2 || err != nil || c < 0 {
			return nil, fmt.Errorf("%w: wordvec: freqs %s line %d: want \"word count\"", driver.ErrInvalid, path, n)
		}
		counts[strings.ToLower(fields[0])] += c
		total += c
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("wordvec: freqs %s: %w", path, err)
	}
	if total == 0 {
		return nil, fmt.Errorf("%w: wordvec: freqs %s has no counts", driver.ErrInvalid, path)
	}
	for i, w := range words {
		c := counts[w]
		if c == 0 {
			c = 1 // unseen: as rare as a word seen once
		}
		p[i] = c / total
	}
	return p, nil
}

// commonComponent returns the first right singular vector of the matrix
// whose rows are rows (n×dim, row-major), by power iteration on its Gram
// matrix from a fixed start, with its largest component made positive.
func commonComponent(rows []float32, dim int) []float64 {
	g := make([]float64, dim*dim)
	start := make([]float64, dim)
	for r := 0; r+dim <= len(rows); r += dim {
		row := rows[r : r+dim]
		for i, x := range row {
			start[i] += float64(x)
			if x == 0 {
				continue
			}
			gi := g[i*dim : (i+1)*dim]
			for j, y := range row {
				gi[j] += float64(x) * float64(y)
			}
		}
	}
	u := start
	if norm(u) == 0 {
		u[0] = 1
	}
	scale(u, 1/norm(u))
	next := make([]float64, dim)
	for range 500 {
		for i := range next {
			var s float64
			for j, x := range g[i*dim : (i+1)*dim] {
				s += x * u[j]
			}
			next[i] = s
		}
		n := norm(next)
		if n == 0 {
			break
		}
		scale(next, 1/n)
		var diff float64
		for i := range u {
			diff += math.Abs(next[i] - u[i])
		}
		u, next = next, u
		if diff < 1e-12 {
			break
		}
	}
	big := 0
	for i := range u {
		if math.Abs(u[i]) > math.Abs(u[big]) {
			big = i
		}
	}
	if u[big] < 0 {
		scale(u, -1)
	}
	return u
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func scale(v []float64, f float64) {
	for i := range v {
		v[i] *= f
	}
}

// chunkSize is how much of the file one parse job gets.
const chunkSize = 1 << 20

// load reads the vector file: the words in file order and their vectors,
// row-major. One goroutine reads (and gunzips) the file in chunks that end
// at line boundaries while the others parse them.
func load(ctx context.Context, path string, maxWords int) ([]string, []float32, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%w: wordvec: %v", driver.ErrInvalid, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%w: wordvec: %s: %v", driver.ErrInvalid, path, err)
		}
		defer zr.Close()
		r = zr
	}
	lr := bufio.NewReaderSize(r, 64<<10)
	first, dim, err := firstLine(lr, path)
	if err != nil {
		return nil, nil, 0, err
	}
	parts, readErr := parseParallel(dim, func(submit func([]byte)) error {
		return readChunks(ctx, lr, first, maxWords, submit)
	})
	if readErr != nil {
		if ctx.Err() != nil {
			return nil, nil, 0, fmt.Errorf("wordvec: loading %s: %w", path, readErr)
		}
		return nil, nil, 0, fmt.Errorf("wordvec: reading %s: %w", path, readErr)
	}
	return joinParts(path, parts, dim)
}

// firstLine returns the first line of vectors, past a word2vec/fastText
// header ("count dim"), and the dimension it shows.
func firstLine(lr *bufio.Reader, path string) ([]byte, int, error) {
	first, err := lr.ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, 0, fmt.Errorf("wordvec: reading %s: %w", path, err)
	}
	if f := bytes.Fields(first); len(f) == 2 && isInt(f[0]) && isInt(f[1]) {
		if first, err = lr.ReadBytes('\n'); err != nil && err != io.EOF {
			return nil, 0, fmt.Errorf("wordvec: reading %s: %w", path, err)
		}
	}
	dim := len(bytes.Fields(first)) - 1
	if dim < 1 {
		return nil, 0, fmt.Errorf("%w: wordvec: %s: the first line is not \"word v1 v2 ...\"", driver.ErrInvalid, path)
	}
	return first, dim, nil
}

// part is the words and vectors parsed from one chunk.
type part struct {
	words []string
	vecs  []float32
	err   error
}

// parseParallel runs read, which passes chunks of whole lines to submit,
// while one goroutine a CPU parses them; it returns the parts in the order
// of the chunks and read's error.
func parseParallel(dim int, read func(submit func([]byte)) error) ([]*part, error) {
	var (
		mu    sync.Mutex
		parts []*part
		jobs  = make(chan func())
		wg    sync.WaitGroup
	)
	for range max(runtime.GOMAXPROCS(0), 1) {
		wg.Go(func() {
			for job := range jobs {
				job()
			}
		})
	}
	err := func() error {
		defer close(jobs)
		return read(func(data []byte) {
			p := new(part)
			mu.Lock()
			parts = append(parts, p)
			mu.Unlock()
			jobs <- func() { p.words, p.vecs, p.err = parse(data, dim) }
		})
	}()
	wg.Wait()
	return parts, err
}

// readChunks reads lr in chunks of about chunkSize that end at line
// boundaries, the first starting with first, and submits them, up to
// maxWords lines in all when it is positive.
func readChunks(ctx context.Context, lr io.Reader, first []byte, maxWords int, submit func([]byte)) error {
	carry := first
	lines := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf := make([]byte, len(carry)+chunkSize)
		copy(buf, carry)
		n, err := io.ReadFull(lr, buf[len(carry):])
		buf = buf[:len(carry)+n]
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return err
		}
		chunk := buf
		carry = nil
		if !eof {
			last := bytes.LastIndexByte(buf, '\n')
			if last < 0 { // a line longer than a chunk: keep reading
				carry = buf
				continue
			}
			chunk, carry = buf[:last+1], buf[last+1:]
		}
		if maxWords > 0 {
			if lines+bytes.Count(chunk, []byte{'\n'}) >= maxWords {
				chunk = cutLines(chunk, maxWords-lines)
				eof = true
			}
			lines += bytes.Count(chunk, []byte{'\n'})
		}
		if len(chunk) > 0 {
			submit(chunk)
		}
		if eof {
			return nil
		}
	}
}

// joinParts concatenates the parts' words and vectors, or returns the
// first part's parse error.
func joinParts(path string, parts []*part, dim int) ([]string, []float32, int, error) {
	n := 0
	for _, p := range parts {
		if p.err != nil {
			return nil, nil, 0, fmt.Errorf("%w: wordvec: %s: %v", driver.ErrInvalid, path, p.err)
		}
		n += len(p.words)
	}
	if n == 0 {
		return nil, nil, 0, fmt.Errorf("%w: wordvec: %s has no word vectors", driver.ErrInvalid, path)
	}
	words := make([]string, 0, n)
	vecs := make([]float32, 0, n*dim)
	for _, p := range parts {
		words = append(words, p.words...)
		vecs = append(vecs, p.vecs...)
	}
	return words, vecs, dim, nil
}

// cutLines returns the first n lines of data.
func cutLines(data []byte, n int) []byte {
	end := 0
	for ; n > 0; n-- {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			return data
		}
		end += i + 1
	}
	return data[:end]
}

func isInt(b []byte) bool {
	_, err := strconv.Atoi(string(b))
	return err == nil
}

// parse parses lines "word v1 ... vdim".
func parse(data []byte, dim int) ([]string, []float32, error) {
	var words []string
	vecs := make([]float32, 0, bytes.Count(data, []byte{'\n'})*dim+dim)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimRight(line, "\r ")
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp <= 0 {
			return nil, nil, fmt.Errorf("line %q is not \"word v1 v2 ...\"", trunc(line))
		}
		word := string(line[:sp])
		rest := line[sp+1:]
		got := 0
		for len(rest) > 0 {
			j := bytes.IndexByte(rest, ' ')
			var field []byte
			if j < 0 {
				field, rest = rest, nil
			} else {
				field, rest = rest[:j], rest[j+1:]
			}
			if len(field) == 0 {
				continue
			}
			x, ok := parseFloat(field)
			if !ok {
				return nil, nil, fmt.Errorf("word %q: %q is not a number", word, field)
			}
			got++
			if got <= dim {
				vecs = append(vecs, x)
			}
		}
		if got != dim {
			return nil, nil, fmt.Errorf("word %q has %d numbers, the first line has %d", word, got, dim)
		}
		words = append(words, fold(word))
	}
	return words, vecs, nil
}

// fold maps a file's word to the token text.Tokenize makes of it (lower
// case, no diacritics), so that words match the way the keyword index
// matches. Words that are not one token (punctuation, "e-mail") are kept
// lower-cased; no text token ever matches them.
func fold(w string) string {
	plain := true
	for i := 0; i < len(w); i++ {
		if c := w[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return w
	}
	if toks := text.Tokenize(w); len(toks) == 1 {
		return toks[0]
	}
	return strings.ToLower(w)
}

func trunc(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat parses a decimal number. Plain decimals of up to 15 digits
// (all of GloVe's) take a fast path: an exact integer divided by an exact
// power of ten; anything else goes to strconv.
func parseFloat(b []byte) (float32, bool) {
	i, neg := 0, false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var mant uint64
	digits, frac := 0, 0
	seenDot := false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if seenDot {
				frac++
			}
		case c == '.' && !seenDot:
			seenDot = true
		default:
			digits = -1 // exponent or junk: let strconv decide
		}
		if digits < 0 || digits > 15 {
			break
		}
	}
	if digits <= 0 || digits > 15 {
		x, err := strconv.ParseFloat(string(b), 32)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return 0, false
		}
		return float32(x), true
	}
	x := float64(mant) / pow10[frac]
	if neg {
		x = -x
	}
	return float32(x), true
}
