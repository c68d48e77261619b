package dataset

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/corpus"
)

// locomoFixture is a two-conversation LoCoMo file in the real layout, with
// the evidence problems the real data has.
const locomoFixture = `[
 {"sample_id": "conv-1",
  "conversation": {
   "speaker_a": "Ann", "speaker_b": "Bo",
   "session_2_date_time": "10:04 am on 19 June, 2023",
   "session_2": [
     {"speaker": "Bo", "dia_id": "D2:1", "text": "I adopted a puppy named Rex."},
     {"speaker": "Ann", "dia_id": "D2:2", "text": "", "img_url": ["http://x/y.jpg"], "blip_caption": "a photo of a small dog", "query": "puppy"}
   ],
   "session_1_date_time": "1:56 pm on 8 May, 2023",
   "session_1": [
     {"speaker": "Ann", "dia_id": "D1:1", "text": "I went to a pottery class yesterday."},
     {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice! I am training for a marathon."},
     {"speaker": "Ann", "dia_id": "D1:3", "text": "Good luck with the training."}
   ]
  },
  "qa": [
   {"question": "What class did Ann take?", "answer": "pottery", "evidence": ["D1:1"], "category": 4},
   {"question": "What pets and sports does Bo have?", "answer": "a puppy; marathon", "evidence": ["D2:1; D1:2"], "category": 1},
   {"question": "When did Ann take the class?", "answer": 2023, "evidence": ["D1:1", "D", "D:11:26", "D9:9"], "category": 2},
   {"question": "What is Bo's favourite colour?", "adversarial_answer": "blue", "evidence": ["D1:2"], "category": 5},
   {"question": "What did Ann say about nothing?", "answer": "-", "evidence": ["D7:1"], "category": 3}
  ]},
 {"sample_id": "conv-2",
  "conversation": {"session_1_date_time": "garbled", "session_1": [{"speaker": "Cy", "dia_id": "D1:1", "text": "Hello."}]},
  "qa": [{"question": "Who said hello?", "answer": "Cy", "evidence": ["D1:1"], "category": 4}]}
]`

func TestReadLoCoMo(t *testing.T) {
	d, err := ReadLoCoMo(strings.NewReader(locomoFixture), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "locomo" || len(d.Corpora) != 2 {
		t.Fatalf("got %q with %d corpora, want locomo with 2", d.Name, len(d.Corpora))
	}
	c := d.Corpora[0]
	var keys []string
	for _, doc := range c.Docs {
		keys = append(keys, doc.Key)
	}
	// Sessions in numeric order, turns in order.
	if want := []string{"D1:1", "D1:2", "D1:3", "D2:1", "D2:2"}; !slices.Equal(keys, want) {
		t.Fatalf("doc keys %v, want %v", keys, want)
	}
	first := c.Docs[0].Input
	if first.Content != "Ann: I went to a pottery class yesterday." || first.Type != core.TypeTurn ||
		first.Source != "locomo:conv-1#D1:1" || first.Session != "conv-1/session_1" || !slices.Equal(first.Entities, []string{"Ann"}) {
		t.Errorf("first turn %+v", first)
	}
	if want := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC); !first.ValidFrom.Equal(want) {
		t.Errorf("event time %v, want %v", first.ValidFrom, want)
	}
	if got := c.Docs[4].Input.Content; got != "[shares a photo: a photo of a small dog]" {
		t.Errorf("image-only turn content %q", got)
	}
	if got := c.Docs[3].Input.ValidFrom; !got.Equal(time.Date(2023, 6, 19, 10, 4, 0, 0, time.UTC)) {
		t.Errorf("session 2 time %v", got)
	}

	rel := func(q Query) []string { return slices.Sorted(maps.Keys(q.Relevant)) }
	if len(c.Queries) != 5 {
		t.Fatalf("%d queries, want 5", len(c.Queries))
	}
	if got := rel(c.Queries[0]); !slices.Equal(got, []string{"D1:1"}) || c.Queries[0].Category != "single-hop" {
		t.Errorf("q0 %v %q", got, c.Queries[0].Category)
	}
	// "D8:6; D9:17"-style joined ids are split.
	if got := rel(c.Queries[1]); !slices.Equal(got, []string{"D1:2", "D2:1"}) {
		t.Errorf("joined evidence gave %v", got)
	}
	// Malformed ids and ids of missing turns are dropped.
	if got := rel(c.Queries[2]); !slices.Equal(got, []string{"D1:1"}) {
		t.Errorf("malformed evidence gave %v", got)
	}
	// Adversarial: kept for timing, never labelled.
	if q := c.Queries[3]; q.Labelled() || q.Category != "adversarial" {
		t.Errorf("adversarial question labelled %v, category %q", q.Relevant, q.Category)
	}
	// Evidence pointing only at a missing turn: unlabelled.
	if c.Queries[4].Labelled() {
		t.Errorf("question with only missing evidence is labelled: %v", c.Queries[4].Relevant)
	}
	// An unreadable session date leaves the event time zero.
	if c2 := d.Corpora[1]; !c2.Docs[0].Input.ValidFrom.IsZero() {
		t.Errorf("garbled date parsed as %v", c2.Docs[0].Input.ValidFrom)
	}
	notes := strings.Join(d.Notes, "\n")
	for _, want := range []string{"1 adversarial", "2 evidence ids dropped", "1 questions left without evidence", "1 session dates unreadable"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	all, labelled := d.Queries()
	if all != 6 || labelled != 4 || d.Docs() != 6 {
		t.Errorf("counts: %d queries, %d labelled, %d docs; want 6, 4, 6", all, labelled, d.Docs())
	}
	for _, c := range d.Corpora {
		checkInputs(t, c)
	}
}

func TestReadLoCoMoLimits(t *testing.T) {
	d, err := ReadLoCoMo(strings.NewReader(locomoFixture), Options{MaxCorpora: 1, MaxQueries: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Corpora) != 1 {
		t.Fatalf("%d corpora, want 1", len(d.Corpora))
	}
	_, labelled := d.Queries()
	if labelled != 2 {
		t.Errorf("%d labelled queries, want 2", labelled)
	}
}

func TestReadLoCoMoRejectsGarbage(t *testing.T) {
	for _, in := range []string{`{"not": "a list"}`, `[]`, `[{"sample_id": "x", "conversation": {"session_1": "oops"}}]`} {
		if _, err := ReadLoCoMo(strings.NewReader(in), Options{}); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("ReadLoCoMo(%s) = %v, want ErrInvalid", in, err)
		}
	}
}

func TestNormalizeEvidence(t *testing.T) {
	turns := map[string]bool{"D8:6": true, "D9:17": true, "D1:18": true, "D1:20": true}
	ids, dropped := NormalizeEvidence([]string{"D8:6; D9:17", "D1:18", "D", "D1:20", "D8:6", "D:11:26", "D30:1"}, turns)
	if want := []string{"D8:6", "D9:17", "D1:18", "D1:20"}; !slices.Equal(ids, want) || dropped != 1 {
		t.Errorf("got %v (dropped %d), want %v (dropped 1)", ids, dropped, want)
	}
}

const lmeFixture = `[
 {"question_id": "q1", "question_type": "single-session-user", "question": "What did I buy?", "answer": "a kettle",
  "question_date": "2023/05/30 (Tue) 22:16",
  "haystack_session_ids": ["s_a", "s_b"],
  "haystack_dates": ["2023/05/20 (Sat) 16:16", "2023/05/21 (Sun) 09:00"],
  "haystack_sessions": [
    [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello!"}],
    [{"role": "user", "content": "   "}, {"role": "user", "content": "I bought a kettle.", "has_answer": true}, {"role": "assistant", "content": "Nice kettle."}]
  ],
  "answer_session_ids": ["s_b"]},
 {"question_id": "q2_abs", "question_type": "temporal-reasoning", "question": "When did I visit Mars?", "answer": 7,
  "question_date": "2023/05/30 (Tue) 22:16",
  "haystack_session_ids": ["s_c"], "haystack_dates": ["2023/05/22 (Mon) 10:00"],
  "haystack_sessions": [[{"role": "user", "content": "I like space.", "has_answer": true}]],
  "answer_session_ids": []},
 {"question_id": "q3", "question_type": "multi-session", "question": "Third?", "answer": "x",
  "haystack_session_ids": [], "haystack_dates": [], "haystack_sessions": [], "answer_session_ids": []}
]`

func TestReadLongMemEval(t *testing.T) {
	d, err := ReadLongMemEval(strings.NewReader(lmeFixture), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Corpora) != 3 {
		t.Fatalf("%d corpora, want one per question (3)", len(d.Corpora))
	}
	c := d.Corpora[0]
	var keys []string
	for _, doc := range c.Docs {
		keys = append(keys, doc.Key)
	}
	// The empty turn is skipped but still counted in the numbering.
	if want := []string{"s_a_1", "s_a_2", "s_b_2", "s_b_3"}; !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	in := c.Docs[2].Input
	if in.Content != "I bought a kettle." || in.Session != "s_b" || in.Source != "longmemeval:q1#s_b_2" ||
		in.Metadata["role"] != "user" || !in.ValidFrom.Equal(time.Date(2023, 5, 21, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("turn %+v", in)
	}
	if len(c.Queries) != 1 || !reflect.DeepEqual(c.Queries[0].Relevant, map[string]float64{"s_b_2": 1}) ||
		c.Queries[0].Category != "single-session-user" || !c.Queries[0].Time.Equal(time.Date(2023, 5, 30, 22, 16, 0, 0, time.UTC)) {
		t.Errorf("query %+v", c.Queries)
	}
	if q := d.Corpora[1].Queries[0]; q.Labelled() {
		t.Errorf("abstention question labelled: %v", q.Relevant)
	}
	if q := d.Corpora[2].Queries[0]; q.Labelled() || len(d.Corpora[2].Docs) != 0 || !q.Time.IsZero() {
		t.Errorf("empty haystack: %+v", d.Corpora[2])
	}
	if notes := strings.Join(d.Notes, "\n"); !strings.Contains(notes, "1 abstention") || !strings.Contains(notes, "1 questions have no turn") {
		t.Errorf("notes %q", notes)
	}
	checkInputs(t, c)

	lim, err := ReadLongMemEval(strings.NewReader(lmeFixture), Options{MaxCorpora: 2})
	if err != nil || len(lim.Corpora) != 2 {
		t.Fatalf("MaxCorpora 2: %v, %d corpora", err, len(lim.Corpora))
	}
}

func TestLoadLongMemEvalGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(lmeFixture))
	zw.Close()
	path := filepath.Join(t.TempDir(), "lme.json.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Load("longmemeval:"+path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Docs() != 5 {
		t.Errorf("%d docs, want 5", d.Docs())
	}
	if _, err := ReadLongMemEval(strings.NewReader(`[{"question_id": "x", "haystack_session_ids": ["a"], "haystack_sessions": []}]`), Options{}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("mismatched haystack: %v, want ErrInvalid", err)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadBEIR(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	writeFiles(t, dir, map[string]string{
		"corpus.jsonl": `{"_id": "d1", "title": "Aspirin", "text": "Aspirin reduces fever."}
{"_id": 2, "title": "", "text": "Statins lower cholesterol."}

{"_id": "d3", "title": "Empty", "text": ""}
{"_id": "d4", "title": "", "text": "   "}
`,
		"queries.jsonl": `{"_id": "q1", "text": "does aspirin reduce fever"}
{"_id": "q2", "text": "cholesterol drugs"}
{"_id": "q3", "text": "not judged"}
`,
		"qrels/test.tsv":  "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\t2\t1\nq2\td9\t1\nq3\td1\t0\nq4\td1\t1\n",
		"qrels/train.tsv": "query-id\tcorpus-id\tscore\nq3\td1\t1\n",
	})
	d, err := LoadBEIR(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "beir:tiny" || !slices.Equal(d.ExtraK, []int{100}) || len(d.Corpora) != 1 {
		t.Fatalf("dataset %q ExtraK %v corpora %d", d.Name, d.ExtraK, len(d.Corpora))
	}
	c := d.Corpora[0]
	if len(c.Docs) != 3 || c.Docs[0].Input.Content != "Aspirin\n\nAspirin reduces fever." || c.Docs[1].Key != "2" ||
		c.Docs[2].Input.Content != "Empty" || c.Docs[0].Input.Source != "beir:tiny#d1" {
		t.Errorf("docs %+v", c.Docs)
	}
	want := []Query{
		{ID: "q1", Text: "does aspirin reduce fever", Relevant: map[string]float64{"d1": 2}},
		{ID: "q2", Text: "cholesterol drugs", Relevant: map[string]float64{"2": 1}},
	}
	if !reflect.DeepEqual(c.Queries, want) {
		t.Errorf("queries %+v, want %+v", c.Queries, want)
	}
	if notes := strings.Join(d.Notes, "\n"); !strings.Contains(notes, "split test") || !strings.Contains(notes, "1 judged queries missing") || !strings.Contains(notes, "1 judgements of documents not in the corpus") {
		t.Errorf("notes %q", notes)
	}
	checkInputs(t, c)

	tr, err := LoadBEIR(dir, Options{Split: "train"})
	if err != nil || len(tr.Corpora[0].Queries) != 1 || tr.Corpora[0].Queries[0].ID != "q3" {
		t.Errorf("train split: %v %+v", err, tr)
	}
}

func TestLoadBEIRErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadBEIR(filepath.Join(dir, "absent"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent dir: %v, want fs.ErrNotExist", err)
	}
	writeFiles(t, dir, map[string]string{"corpus.jsonl": `{"_id": "a", "text": "x"}`})
	if _, err := LoadBEIR(dir, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no qrels: %v, want fs.ErrNotExist", err)
	}
	writeFiles(t, dir, map[string]string{"qrels/test.tsv": "q1 a\n", "queries.jsonl": `{"_id": "q1", "text": "x"}`})
	if _, err := LoadBEIR(dir, Options{}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("bad qrels: %v, want ErrInvalid", err)
	}
	writeFiles(t, dir, map[string]string{"qrels/test.tsv": "q1\ta\t1\n", "corpus.jsonl": `{"_id": "a", "text": `})
	if _, err := LoadBEIR(dir, Options{}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("bad corpus line: %v, want ErrInvalid", err)
	}
}

func TestLoadSpecs(t *testing.T) {
	for _, spec := range []string{"locomo", "locomo:", "nope:x", "synthetic:ten"} {
		if _, err := Load(spec, Options{}); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("Load(%q) = %v, want ErrInvalid", spec, err)
		}
	}
	missing := filepath.Join(t.TempDir(), "missing.json")
	for _, spec := range []string{"locomo:" + missing, "longmemeval:" + missing, "beir:" + missing} {
		if _, err := Load(spec, Options{}); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Load(%q) = %v, want fs.ErrNotExist", spec, err)
		}
	}
	d, err := Load("synthetic:300", Options{Seed: 3, SyntheticQueries: 7})
	if err != nil || d.Docs() != 300 || len(d.Corpora[0].Queries) != 7 {
		t.Errorf("synthetic:300: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{"200": 200, "10k": 10000, "10K": 10000, "1.5k": 1500, "1m": 1000000, " 3 ": 3} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "1.5", "k", "ten", "1e9", "NaN", "inf", "0.0001k"} {
		if _, err := ParseSize(in); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("ParseSize(%q) = %v, want ErrInvalid", in, err)
		}
	}
	for n, want := range map[int]string{200: "200", 10000: "10k", 1500: "1500", 2000000: "2m"} {
		if got := corpus.FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSynthetic(t *testing.T) {
	d, err := Synthetic(SyntheticOptions{Docs: 1000, Queries: 50, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Synthetic(SyntheticOptions{Docs: 1000, Queries: 50, Seed: 7})
	if !reflect.DeepEqual(d, again) {
		t.Fatal("the same seed gave different data sets")
	}
	other, _ := Synthetic(SyntheticOptions{Docs: 1000, Queries: 50, Seed: 8})
	if reflect.DeepEqual(d.Corpora[0].Docs, other.Corpora[0].Docs) {
		t.Fatal("different seeds gave the same documents")
	}
	c := d.Corpora[0]
	if len(c.Docs) != 1000 || len(c.Queries) != 50 {
		t.Fatalf("%d docs, %d queries", len(c.Docs), len(c.Queries))
	}
	checkInputs(t, c)
	byKey := map[string]*Doc{}
	namespaces := map[string]int{}
	var words int
	for i := range c.Docs {
		doc := &c.Docs[i]
		byKey[doc.Key] = doc
		namespaces[doc.Input.Namespace]++
		words += len(strings.Fields(doc.Input.Content))
	}
	if len(namespaces) != 4 { // the corpus's four namespaces
		t.Errorf("namespaces %v", namespaces)
	}
	if avg := float64(words) / 1000; avg < 12 || avg > 26 {
		t.Errorf("average length %.1f words, want a median-16 log-normal's mean", avg)
	}
	for _, q := range c.Queries {
		if !q.Labelled() {
			t.Fatalf("query %s has no relevant memories", q.ID)
		}
		shared := false
		for key := range q.Relevant {
			doc := byKey[key]
			if doc == nil {
				t.Fatalf("query %s names unknown memory %s", q.ID, key)
			}
			if doc.Input.Namespace != q.Namespace {
				t.Errorf("query %s in %s, relevant %s in %s", q.ID, q.Namespace, key, doc.Input.Namespace)
			}
			for _, w := range strings.Fields(strings.TrimPrefix(q.Text, "what do we know about ")) {
				if strings.Contains(strings.ToLower(doc.Input.Content), w) {
					shared = true
				}
			}
		}
		if !shared {
			t.Errorf("query %q shares no word with any of its relevant memories", q.Text)
		}
	}
	if _, err := Synthetic(SyntheticOptions{}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("zero docs: %v", err)
	}
}

// checkInputs asserts that every document would pass the engine's validation.
func checkInputs(t *testing.T, c Corpus) {
	t.Helper()
	keys := map[string]bool{}
	for _, doc := range c.Docs {
		if keys[doc.Key] {
			t.Errorf("corpus %s: key %s twice", c.Name, doc.Key)
		}
		keys[doc.Key] = true
		m := core.Memory{Content: doc.Input.Content, Namespace: doc.Input.Namespace, Pool: doc.Input.Type.DefaultPool(),
			Type: doc.Input.Type, Status: core.StatusActive, Significance: max(doc.Input.Significance, 1),
			Trust: core.Trust{Level: core.TrustInferred, Score: 0.8}, Source: doc.Input.Source, Session: doc.Input.Session}
		if m.Namespace == "" {
			m.Namespace = core.DefaultNamespace
		}
		if m.Type == "" {
			m.Type, m.Pool = core.TypeFact, core.PoolMemory
		}
		if err := m.Validate(); err != nil {
			t.Errorf("corpus %s doc %s: %v", c.Name, doc.Key, err)
		}
	}
	for _, q := range c.Queries {
		for key := range q.Relevant {
			if !keys[key] {
				t.Errorf("corpus %s query %s: relevant %s is not a document", c.Name, q.ID, key)
			}
		}
	}
}

func TestVary(t *testing.T) {
	turns := []Turn{{Content: "Caroline: I went to the LGBTQ support group with Mel on 7 May 2023."},
		{Content: "Thanks, Caroline! The group sounds great."}}
	v := newVarier(1, turns, []string{"When did Caroline go to the support group?"})
	for _, w := range []string{"Caroline", "Mel", "LGBTQ"} {
		if !v.isName[w] {
			t.Errorf("%q is not taken for a name", w)
		}
	}
	for _, w := range []string{"Thanks", "The", "I", "When"} {
		if v.isName[w] {
			t.Errorf("%q is taken for a name", w)
		}
	}
	if got := v.vary(turns[0].Content, 0); got != turns[0].Content {
		t.Errorf("repetition 0 changed the text: %q", got)
	}
	a, b := v.vary(turns[0].Content, 1), v.vary(turns[0].Content, 2)
	if a == turns[0].Content || a == b {
		t.Fatalf("repetitions 1 and 2 are not other texts: %q, %q", a, b)
	}
	// The same name becomes the same other name within a repetition, and
	// the words around the names and numbers stay.
	q := v.vary("When did Caroline go to the support group?", 1)
	name, _, _ := strings.Cut(a, ":")
	if name == "Caroline" || !strings.Contains(q, " "+name+" ") {
		t.Errorf("repetition 1 calls Caroline %q in a turn and not in the question %q", name, q)
	}
	if !strings.Contains(a, ": I went to the ") || !strings.Contains(a, " support group with ") || strings.Contains(a, "2023") && strings.Contains(a, " 7 May") {
		t.Errorf("repetition 1 changed the wrong words: %q", a)
	}
	if got := eachWord(a, func(w string, _ bool) string { return w }); got != a {
		t.Errorf("eachWord does not copy: %q", got)
	}
}

func TestTurns(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "shared", "data")
	turns, _, err := DevTurns(dir)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("the dev data is not in %s: %v", dir, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	n := len(turns) + 1000
	d, err := Turns(TurnsOptions{Dir: dir, Docs: n, Queries: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Docs() != n || len(d.Corpora) != 1 || len(d.Corpora[0].Queries) != 50 {
		t.Fatalf("%d docs in %d corpora, %d queries; want %d in 1, 50", d.Docs(), len(d.Corpora), len(d.Corpora[0].Queries), n)
	}
	docs := d.Corpora[0].Docs
	kept := slices.DeleteFunc(slices.Clone(turns), func(t Turn) bool { return !hasText(t.Content) })
	if docs[0].Input.Content != kept[0].Content || docs[0].Input.Session != kept[0].Session {
		t.Errorf("the first repetition is not the dev text: %+v", docs[0].Input)
	}
	second := docs[len(kept):]
	changed := 0
	for i, doc := range second {
		orig := kept[i]
		if doc.Input.Session != orig.Session+"#1" {
			t.Fatalf("doc %d: session %q; want %q", len(kept)+i, doc.Input.Session, orig.Session+"#1")
		}
		if doc.Input.Content != orig.Content {
			changed++
		}
	}
	if changed < len(second)/10 {
		t.Errorf("only %d of %d turns of the second repetition differ from the dev text", changed, len(second))
	}
	checkTurnLabels(t, dir, d, len(kept))
	again, err := Turns(TurnsOptions{Dir: dir, Docs: n, Queries: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, d) {
		t.Error("the same options gave another data set")
	}
	if _, err := Turns(TurnsOptions{Dir: dir}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("0 docs: %v; want ErrInvalid", err)
	}
	if _, err := Load("turns:10k", Options{}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("turns without a directory: %v; want ErrInvalid", err)
	}
	if _, err := Load("turns:10k:"+t.TempDir(), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("turns from an empty directory: %v; want fs.ErrNotExist", err)
	}
}

// checkTurnLabels checks the labels of a Turns data set over dev turns of
// which per are kept (one repetition): a good share of the queries are
// labelled; every query's relevant documents lie in the store and in one
// repetition; and a query of the first repetition, which is the dev text,
// is a dev question whose evidence is exactly its relevant documents.
func checkTurnLabels(t *testing.T, dir string, d *Dataset, per int) {
	t.Helper()
	all, questions, err := DevSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[Turn]int{} // turn → its index among the kept ones
	for _, tu := range all {
		if hasText(tu.Content) {
			kept[tu] = len(kept)
		}
	}
	c := d.Corpora[0]
	labelled, first := 0, 0
	for _, q := range c.Queries {
		if q.Text == "" {
			t.Fatalf("query %s is empty", q.ID)
		}
		if !q.Labelled() {
			continue
		}
		labelled++
		rep := -1
		var got []int // the relevant turns, as indexes into one repetition
		for k := range q.Relevant {
			var i int
			if _, err := fmt.Sscanf(k, "t%d", &i); err != nil || i < 0 || i >= len(c.Docs) {
				t.Fatalf("query %s: relevant %q is not a document of the store", q.ID, k)
			}
			if rep >= 0 && i/per != rep {
				t.Fatalf("query %s: relevant documents in repetitions %d and %d", q.ID, rep, i/per)
			}
			rep = i / per
			got = append(got, i%per)
		}
		if rep != 0 {
			continue
		}
		first++
		slices.Sort(got)
		match := false
		for _, dq := range questions {
			var want []int
			for _, e := range dq.Evidence {
				if j, ok := kept[all[e]]; ok {
					want = append(want, j)
				}
			}
			slices.Sort(want)
			if dq.Text == q.Text && slices.Equal(want, got) {
				match = true
				break
			}
		}
		if !match {
			t.Errorf("query %s %q of the dev text: relevant turns %v are no dev question's evidence", q.ID, q.Text, got)
		}
	}
	if labelled < len(c.Queries)/2 {
		t.Errorf("%d of %d queries labelled", labelled, len(c.Queries))
	}
	if first == 0 {
		t.Errorf("no labelled query of the dev text among %d", labelled)
	}
}
