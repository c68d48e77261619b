package hash_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/embedtest"
	"github.com/memos-go/memos/embedders/hash"
)

func open(t testing.TB, dim int) *hash.Embedder {
	t.Helper()
	e, err := hash.Open(context.Background(), hash.Config{Dim: dim})
	if err != nil {
		t.Fatalf("Open(dim=%d): %v", dim, err)
	}
	return e
}

func embed(t testing.TB, e *hash.Embedder, texts ...string) [][]float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	return vs
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestConformance(t *testing.T) {
	for _, dim := range []int{0, hash.MinDim, 1024} {
		t.Run(fmt.Sprint("dim=", dim), func(t *testing.T) { embedtest.Run(t, open(t, dim)) })
	}
}

func TestOpenConfig(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		dim    int
		wantID string
	}{
		{0, "hash-v1-256"},
		{16, "hash-v1-16"},
		{384, "hash-v1-384"},
		{4096, "hash-v1-4096"},
	} {
		e, err := hash.Open(ctx, hash.Config{Dim: c.dim})
		if err != nil {
			t.Fatalf("Open(dim=%d): %v", c.dim, err)
		}
		info, err := e.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := driver.ModelInfo{ID: c.wantID, Dim: max(c.dim, 0), MaxBatch: 0, Normalized: true}
		if c.dim == 0 {
			want.Dim = hash.DefaultDim
		}
		if info != want {
			t.Fatalf("Open(dim=%d).Info() = %+v, want %+v", c.dim, info, want)
		}
		if v := embed(t, e, "hello world")[0]; len(v) != want.Dim {
			t.Fatalf("dim %d: vector has %d components", want.Dim, len(v))
		}
	}
	for _, dim := range []int{-1, 1, 15, 4097, 1 << 20} {
		_, err := hash.Open(ctx, hash.Config{Dim: dim})
		if !errors.Is(err, driver.ErrInvalid) {
			t.Fatalf("Open(dim=%d): error %v, want one wrapping driver.ErrInvalid", dim, err)
		}
		if !strings.Contains(err.Error(), fmt.Sprint(dim)) || !strings.Contains(err.Error(), "16–4096") {
			t.Fatalf("Open(dim=%d): message %q should name the dimension and the allowed range", dim, err)
		}
	}
	if _, err := hash.New(hash.Config{}); err != nil {
		t.Fatalf("New(zero Config): %v", err)
	}
}

// fingerprint is a digest of the float32 bits of vectors.
func fingerprint(vs [][]float32) string {
	h := sha256.New()
	for _, v := range vs {
		for _, x := range v {
			binary.Write(h, binary.LittleEndian, math.Float32bits(x))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// TestGolden pins the vectors of hash-v1: the same text must give the same
// vector in every process, on every platform, in every release. If this
// test fails after a deliberate change to features, weights, hashing or the
// tokenizer, bump hash.Version (so stores re-embed) and update the digest.
func TestGolden(t *testing.T) {
	e := open(t, 0)
	texts := []string{
		"",
		"Alice prefers open-source tools",
		"The kittens chased the red ball across the garden; the kitten won.",
		"Café au lait, naïve résumé — 東京 2024!",
	}
	got := fingerprint(embed(t, e, texts...))
	const want = "75f36e6f59ec6f4c"
	if got != want {
		t.Fatalf("hash-v1 vectors changed: digest %s, want %s (bump hash.Version if the change is deliberate)", got, want)
	}
}

// TestGoldenScripts pins hash-v1's vectors of text whose tokens FTS5 and
// Go's Unicode tables make differently (Hangul syllables, kana with dakuten,
// Cyrillic ё, Hebrew points, Devanagari signs, an emoji newer than SQLite's
// tables): the keyword tokenizer follows FTS5 since, hash-v1 does not.
func TestGoldenScripts(t *testing.T) {
	e := open(t, 0)
	texts := []string{
		"서울에서 한국 음식을 먹었다",
		"昨日は学校がありました",
		"Маша ела ёлку на Новый год",
		"שָׁלוֹם עוֹלָם",
		"हिन्दी भाषा",
		"hmm🤔 maybe",
	}
	got := fingerprint(embed(t, e, texts...))
	const want = "24cdb0c7b64ef5c8"
	if got != want {
		t.Fatalf("hash-v1 vectors changed: digest %s, want %s (bump hash.Version if the change is deliberate)", got, want)
	}
}

func TestDeterministicAloneAndInBatch(t *testing.T) {
	e := open(t, 0)
	texts := []string{
		"Alice prefers open-source tools",
		"",
		"stock prices fell",
		"Alice prefers open-source tools",
		strings.Repeat("a long memory about deployments and rollbacks ", 200),
		"日本語のテキスト",
		"!!! ???",
	}
	batch := embed(t, e, texts...)
	again := embed(t, e, texts...)
	other := open(t, 0) // another instance behaves the same
	for i, s := range texts {
		alone := embed(t, other, s)[0]
		if !slices.Equal(alone, batch[i]) || !slices.Equal(again[i], batch[i]) {
			t.Fatalf("text %d (%.30q): vector differs alone, in a batch, or on a second call", i, s)
		}
	}
}

func TestUnitLength(t *testing.T) {
	for _, dim := range []int{16, 256, 4096} {
		e := open(t, dim)
		texts := []string{"", " ", "-", "a", "the the the", "Alice prefers open-source tools",
			strings.Repeat("word ", 10000), "Ünïcödé façade", "ℌ𝔢𝔩𝔩𝔬 🙂 𝟙𝟚𝟛", "\xff\xfe invalid utf8"}
		for i, v := range embed(t, e, texts...) {
			if len(v) != dim {
				t.Fatalf("dim %d, text %d: %d components", dim, i, len(v))
			}
			var ss float64
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("dim %d, text %d: non-finite component %v", dim, i, x)
				}
				ss += float64(x) * float64(x)
			}
			if math.Abs(ss-1) > 1e-5 {
				t.Fatalf("dim %d, text %d (%.20q): squared length %v, want 1", dim, i, texts[i], ss)
			}
		}
	}
}

func TestTextsWithoutTokens(t *testing.T) {
	e := open(t, 0)
	vs := embed(t, e, "", "   ", "?!.,;", "— …", "Alice")
	for i := 1; i < 4; i++ {
		if !slices.Equal(vs[i], vs[0]) {
			t.Fatalf("text %d has no tokens but embeds differently from the empty string", i)
		}
	}
	if math.Abs(dot(vs[0], vs[0])-1) > 1e-6 {
		t.Fatalf("empty text: not unit length")
	}
	if d := dot(vs[0], vs[4]); math.Abs(d) > 0.5 {
		t.Fatalf("empty text and \"Alice\": similarity %v, want near 0", d)
	}
}

func TestLexicalSimilarity(t *testing.T) {
	e := open(t, 0)
	cases := []struct {
		a, near, far string
	}{
		{"Alice prefers open-source tools", "alice likes open source software", "stock prices fell"},
		{"kitten", "kittens", "garden"},
		{"I will receive the package tomorrow", "I will recieve the package tomorrow", "I will send the letter today"},
		{"deploy the service with docker compose", "deploying services using docker-compose", "the cat sat on the mat"},
		{"Bob's favourite colour is blue", "what is bob's favourite colour", "the build failed on arm64"},
		{"the meeting moved to Thursday", "the meeting was moved to thursday afternoon", "the is to was on a of"},
	}
	for _, c := range cases {
		vs := embed(t, e, c.a, c.near, c.far)
		near, far := dot(vs[0], vs[1]), dot(vs[0], vs[2])
		if near <= far+0.1 {
			t.Errorf("sim(%q, %q) = %.3f should clearly exceed sim(%q, %q) = %.3f", c.a, c.near, near, c.a, c.far, far)
		}
	}
}

// TestNotSemantic documents the limit of a lexical embedder: texts that
// mean the same in different words are not similar.
func TestNotSemantic(t *testing.T) {
	e := open(t, 1024) // few collisions, so unrelated texts score near 0
	vs := embed(t, e, "Alice prefers open-source tools", "Bob enjoys free software licences")
	if d := dot(vs[0], vs[1]); d > 0.15 {
		t.Fatalf("paraphrase without shared words scored %.3f; the package doc says such texts are not close", d)
	}
}

// corpus and queries are a small retrieval fixture in the style of agent
// memories. Each query shares some words, word forms or misspellings with
// its answer, since this embedder is lexical.
var corpus = []string{
	"Alice prefers open-source tools over proprietary software",
	"Bob is allergic to peanuts and shellfish",
	"The production database runs PostgreSQL 16 on a dedicated server",
	"Deployments happen every Tuesday after the standup meeting",
	"Carol's daughter started kindergarten in September",
	"The team decided to migrate the frontend from React to Svelte",
	"Use the staging environment before releasing to customers",
	"The API rate limit is 100 requests per minute per key",
	"Dave likes hiking in the Alps during summer holidays",
	"The quarterly report is due on the last Friday of March",
	"Stock prices fell sharply after the earnings call",
	"Eve's cat is called Whiskers and sleeps on the keyboard",
	"Backups are written to an S3 bucket every night at 2am",
	"The build failed because the Go toolchain was outdated",
	"Frank prefers tea to coffee in the morning",
	"Security keys must be rotated every ninety days",
	"The office wifi password changed last week",
	"Grace is learning Japanese and practises kanji daily",
	"Customer support tickets are triaged by severity",
	"The kitten knocked a glass of water off the table",
	"Henry runs a marathon every spring in Boston",
	"Logs are kept for thirty days and then deleted",
	"The mobile app crashes when the network drops",
	"Ivy recommended the book Thinking, Fast and Slow",
	"Never push directly to the main branch; open a pull request",
}

var queries = []struct {
	q    string
	want int
}{
	{"which tools does alice prefer", 0},
	{"what allergies does bob have", 1},
	{"what database version is production running", 2},
	{"when do we deploy", 3},
	{"carol daughter school", 4},
	{"frontend migration svelte", 5},
	{"test on staging before release", 6},
	{"api rate limits", 7},
	{"dave hiking", 8},
	{"quartely reprot deadline", 9}, // typos
	{"stocks falling", 10},
	{"name of eve's cat", 11},
	{"nightly backups s3", 12},
	{"why did the build fail", 13},
	{"does frank drink coffee", 14},
	{"rotating security keys", 15},
	{"wifi password", 16},
	{"grace studying japanese", 17},
	{"triage of support tickets", 18},
	{"kittens knocking glasses", 19},
	{"henry marathons", 20},
	{"log retention days", 21},
	{"app crashing on network loss", 22},
	{"book recommendations from ivy", 23},
	{"pushing to main branch", 24},
}

// retrieval returns the hit@1 rate and the mean reciprocal rank of the
// fixture queries.
func retrieval(t testing.TB, e *hash.Embedder) (hit1, mrr float64) {
	docs := embed(t, e, corpus...)
	for _, q := range queries {
		qv := embed(t, e, q.q)[0]
		target := dot(qv, docs[q.want])
		rank := 1
		for i, d := range docs {
			if s := dot(qv, d); i != q.want && (s > target || (s == target && i < q.want)) {
				rank++
			}
		}
		if rank == 1 {
			hit1++
		}
		mrr += 1 / float64(rank)
	}
	n := float64(len(queries))
	return hit1 / n, mrr / n
}

func TestRetrievalFixture(t *testing.T) {
	hit1, mrr := retrieval(t, open(t, 0))
	t.Logf("hit@1 %.2f, MRR %.3f", hit1, mrr)
	if hit1 < 0.8 || mrr < 0.85 {
		t.Fatalf("retrieval fixture: hit@1 %.2f (want ≥ 0.88), MRR %.3f (want ≥ 0.92)", hit1, mrr)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := hash.Open(ctx, hash.Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with a cancelled context: %v, want context.Canceled", err)
	}
	e := open(t, 0)
	if _, err := e.Embed(ctx, []string{"a", "b"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Embed with a cancelled context: %v, want context.Canceled", err)
	}
	// An empty batch returns an empty result.
	if vs, err := e.Embed(context.Background(), nil); err != nil || len(vs) != 0 {
		t.Fatalf("Embed(nil) = %d vectors, %v; want none, nil", len(vs), err)
	}
}

func TestRegistered(t *testing.T) {
	ctx := context.Background()
	d, err := driver.LookupEmbedder(hash.Name)
	if err != nil {
		t.Fatalf("LookupEmbedder(%q): %v", hash.Name, err)
	}
	cfg, ok := d.NewConfig().(*hash.Config)
	if !ok || *cfg != (hash.Config{}) {
		t.Fatalf("NewConfig() = %#v, want a new zero *hash.Config", d.NewConfig())
	}
	cfg.Dim = 64
	e, err := d.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("driver Open: %v", err)
	}
	if info, _ := e.Info(ctx); info.ID != "hash-v1-64" || info.Dim != 64 {
		t.Fatalf("driver-opened embedder: %+v, want hash-v1-64", info)
	}
	if _, err := d.Open(ctx, "dim: 64"); !errors.Is(err, driver.ErrInvalid) {
		t.Fatalf("driver Open with a string config: %v, want driver.ErrInvalid", err)
	}
	if _, err := d.Open(ctx, (*hash.Config)(nil)); !errors.Is(err, driver.ErrInvalid) {
		t.Fatalf("driver Open with a nil *hash.Config: %v, want driver.ErrInvalid", err)
	}
	if _, err := d.Open(ctx, &hash.Config{Dim: 3}); !errors.Is(err, driver.ErrInvalid) {
		t.Fatalf("driver Open with dim 3: %v, want driver.ErrInvalid", err)
	}
}

// sentences are ~30-word texts for the benchmark.
var sentences = []string{
	"During the planning meeting on Tuesday the team agreed that Alice will own the migration of the billing service to the new cluster while Bob reviews every database schema change before release.",
	"The user mentioned that they prefer concise answers with code examples, dislike long introductions, usually work in Go and TypeScript, and want links to official documentation rather than blog posts.",
	"After the outage last Friday we learned that the health checks only covered the web tier, so the queue workers silently stopped processing jobs for almost three hours before anyone noticed it.",
	"Carol's daughter started kindergarten in September; Carol now leaves at four on weekdays and asked that meetings be scheduled in the morning whenever possible, especially the weekly product review.",
}

func BenchmarkEmbed(b *testing.B) {
	for _, dim := range []int{256, 384} {
		e := open(b, dim)
		ctx := context.Background()
		for _, batch := range []int{1, 64} {
			texts := make([]string, batch)
			for i := range texts {
				texts[i] = sentences[i%len(sentences)]
			}
			b.Run(fmt.Sprintf("dim=%d/batch=%d", dim, batch), func(b *testing.B) {
				for b.Loop() {
					if _, err := e.Embed(ctx, texts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "texts/s")
			})
		}
	}
}
