package wordvec_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/embedders/wordvec"
)

// gloveFile is the shared 100k-word, 100-dimension GloVe file, relative to
// the repository root; tests run in the package directory.
const gloveFile = "../../../shared/data/glove/glove-6b-100d-top100k.txt.gz"

var glove struct {
	once sync.Once
	e    *wordvec.Embedder
	err  error
}

// shared loads the shared GloVe file once for all tests, or skips.
func shared(t testing.TB) *wordvec.Embedder {
	t.Helper()
	if _, err := os.Stat(gloveFile); err != nil {
		t.Skipf("the shared GloVe file is absent (%v); place glove-6b-100d-top100k.txt.gz in ../shared/data/glove/ next to the repository to run this test", err)
	}
	glove.once.Do(func() { glove.e, glove.err = wordvec.Open(context.Background(), wordvec.Config{Path: gloveFile}) })
	if glove.err != nil {
		t.Fatal(glove.err)
	}
	return glove.e
}

func cos(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

func TestSemanticRanking(t *testing.T) {
	e := shared(t)
	vs, err := e.Embed(t.Context(), []string{
		"The kitten slept on the rug",
		"A cat rested on the carpet",
		"Stock prices fell sharply",
	})
	if err != nil {
		t.Fatal(err)
	}
	near, far := cos(vs[0], vs[1]), cos(vs[0], vs[2])
	t.Logf("cos(kitten, cat) = %.3f, cos(kitten, stocks) = %.3f", near, far)
	if near <= far {
		t.Fatalf("the kitten sentence is closer to the stock sentence (%.3f) than to the cat sentence (%.3f)", far, near)
	}
}

func TestSharedFileInfoAndConformance(t *testing.T) {
	e := shared(t)
	mi, _ := e.Info(t.Context())
	if want := (driver.ModelInfo{ID: "wordvec-sif:glove-6b-100d-top100k.txt.gz:100", Dim: 100, Normalized: true}); mi != want {
		t.Fatalf("Info = %+v, want %+v", mi, want)
	}
	// 100,000 lines; a few words fold to the same token ("café", "cafe").
	if n := e.Words(); n > 100000 || n < 99900 {
		t.Fatalf("%d distinct words from 100,000 lines", n)
	}
	embedtest.Run(t, e)
}

// fixture writes a tiny GloVe file: frequent function words first, then
// content words in two topics.
func fixture(t *testing.T, gz bool, header bool) string {
	t.Helper()
	lines := []string{
		"the 0.9 0.1 0.1 0.1",
		"on 0.8 0.1 0.2 0.1",
		"a 0.9 0.2 0.1 0.1",
		"cat 0.1 0.9 0.1 0.0",
		"kitten 0.1 0.8 0.2 0.0",
		"rug 0.1 0.7 0.3 0.1",
		"stock 0.1 0.0 0.1 0.9",
		"prices 0.2 0.1 0.0 0.8",
		"Café 0.3 0.3 0.3 0.3",
	}
	if header {
		lines = append([]string{"9 4"}, lines...)
	}
	data := strings.Join(lines, "\n") + "\n"
	dir := t.TempDir()
	if !gz {
		p := filepath.Join(dir, "tiny.txt")
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := filepath.Join(dir, "tiny.txt.gz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte(data))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func open(t *testing.T, cfg wordvec.Config) *wordvec.Embedder {
	t.Helper()
	e, err := wordvec.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestFixtureConformance(t *testing.T) {
	embedtest.Run(t, open(t, wordvec.Config{Path: fixture(t, false, false)}))
}

func TestPlainGzipAndHeaderAgree(t *testing.T) {
	texts := []string{"the cat on a rug", "stock prices", "café", "nothing known here", ""}
	var got [][][]float32
	for _, p := range []string{fixture(t, false, false), fixture(t, true, false), fixture(t, false, true)} {
		vs, err := open(t, wordvec.Config{Path: p, Dim: 4}).Embed(t.Context(), texts)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, vs)
	}
	for i := range texts {
		if fmt.Sprint(got[0][i]) != fmt.Sprint(got[1][i]) || fmt.Sprint(got[0][i]) != fmt.Sprint(got[2][i]) {
			t.Fatalf("text %q embeds differently from the plain, gzipped and headed files", texts[i])
		}
	}
}

func TestFixtureSemantics(t *testing.T) {
	e := open(t, wordvec.Config{Path: fixture(t, true, false)})
	vs, err := e.Embed(t.Context(), []string{"The kitten on the rug", "a cat", "stock prices", "zzz qqq", "", "CAFE"})
	if err != nil {
		t.Fatal(err)
	}
	if cos(vs[0], vs[1]) <= cos(vs[0], vs[2]) {
		t.Fatalf("cat topic not closer: %.3f vs %.3f", cos(vs[0], vs[1]), cos(vs[0], vs[2]))
	}
	// No known word: the fixed vector, the same for every such text,
	// orthogonal to texts with known words.
	if fmt.Sprint(vs[3]) != fmt.Sprint(vs[4]) {
		t.Fatal("texts without known words embed differently")
	}
	for _, i := range []int{0, 1, 2} {
		if c := cos(vs[3], vs[i]); math.Abs(c) > 1e-5 {
			t.Fatalf("the no-known-word vector has cosine %.6f with text %d, want 0", c, i)
		}
	}
	// Case and diacritics are folded like the keyword index folds them.
	if c := cos(vs[5], vs[3]); c > 0.999 {
		t.Fatalf("CAFE did not match the word Café (cosine %.3f with the no-known-word vector)", c)
	}
}

func TestSIFDownweightsFrequentWords(t *testing.T) {
	p := fixture(t, false, false)
	freqs := filepath.Join(t.TempDir(), "counts.txt")
	os.WriteFile(freqs, []byte("the 5000000\non 3000000\na 4000000\ncat 900\nrug 300\nkitten 200\n"), 0o644)
	texts := []string{"cat rug", "the cat on the rug"}
	sif, _ := open(t, wordvec.Config{Path: p, Freqs: freqs}).Embed(t.Context(), texts)
	flat := filepath.Join(t.TempDir(), "flat.txt")
	os.WriteFile(flat, []byte("the 1\non 1\na 1\ncat 1\nrug 1\nkitten 1\n"), 0o644)
	even, _ := open(t, wordvec.Config{Path: p, Freqs: flat}).Embed(t.Context(), texts)
	// With real frequencies, adding frequent words barely moves the vector;
	// with equal frequencies they move it much more.
	if c := cos(sif[0], sif[1]); c < 0.99 {
		t.Fatalf("cos(cat rug, the cat on the rug) = %.4f; frequent words weigh too much", c)
	}
	if cos(even[0], even[1]) >= cos(sif[0], sif[1]) {
		t.Fatalf("SIF weighting had no effect: %.4f with equal counts vs %.4f", cos(even[0], even[1]), cos(sif[0], sif[1]))
	}
}

func TestIDAndOptions(t *testing.T) {
	p := fixture(t, false, false)
	mi, _ := open(t, wordvec.Config{Path: p, MaxWords: 5}).Info(t.Context())
	if mi.ID != "wordvec-sif:tiny.txt:4:max5" || mi.Dim != 4 {
		t.Fatalf("Info = %+v", mi)
	}
	e := open(t, wordvec.Config{Path: p, MaxWords: 5})
	if e.Words() != 5 {
		t.Fatalf("%d words with max_words 5", e.Words())
	}
	freqs := filepath.Join(t.TempDir(), "counts.txt")
	os.WriteFile(freqs, []byte("the 1000\non 800\ncat 3\n"), 0o644)
	fe := open(t, wordvec.Config{Path: p, Freqs: freqs})
	if mi, _ := fe.Info(t.Context()); !strings.HasSuffix(mi.ID, ":freqs=counts.txt") {
		t.Fatalf("ID %q does not name the counts file", mi.ID)
	}
	embedtest.Run(t, fe)
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	bad := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	for _, tc := range []struct {
		cfg  wordvec.Config
		want error
		msg  string
	}{
		{wordvec.Config{}, driver.ErrInvalid, "path is empty"},
		{wordvec.Config{Path: filepath.Join(dir, "missing.txt")}, driver.ErrInvalid, "no such file"},
		{wordvec.Config{Path: bad("ragged.txt", "a 1 2 3\nb 1 2\n")}, driver.ErrInvalid, `word "b" has 2 numbers`},
		{wordvec.Config{Path: bad("nan.txt", "a 1 2\nb 1 x\n")}, driver.ErrInvalid, `"x" is not a number`},
		{wordvec.Config{Path: bad("empty.txt", "")}, driver.ErrInvalid, "not \"word v1 v2"},
		{wordvec.Config{Path: bad("ok.txt", "a 1 2\n"), Dim: 3}, driver.ErrDimensionMismatch, "has 2 dimensions, the config says 3"},
		{wordvec.Config{Path: bad("ok2.txt", "a 1 2\n"), Freqs: bad("f.txt", "a b c\n")}, driver.ErrInvalid, "want \"word count\""},
	} {
		_, err := wordvec.Open(t.Context(), tc.cfg)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: got %v, want %v containing %q", tc.cfg, err, tc.want, tc.msg)
		}
	}
}

func TestRegistered(t *testing.T) {
	d, err := driver.LookupEmbedder(wordvec.Name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := d.NewConfig().(*wordvec.Config)
	cfg.Path = fixture(t, false, false)
	if _, err := d.Open(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkLoad(b *testing.B) {
	if _, err := os.Stat(gloveFile); err != nil {
		b.Skip("shared GloVe file absent")
	}
	for b.Loop() {
		if _, err := wordvec.Open(context.Background(), wordvec.Config{Path: gloveFile}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbed reports wordvec throughput in texts per second on short
// memory-like sentences, in batches of 64.
func BenchmarkEmbed(b *testing.B) {
	e := shared(b)
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = fmt.Sprintf("Alice told Bob on day %d that she prefers open-source tools for the project and hates meetings", i)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "texts/s")
}
