package text_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// words share stems and prefixes, so that stemming and prefixes matter.
var words = []string{"run", "runs", "running", "runner", "config", "configured", "configuration",
	"café", "cafe", "alpha", "beta", "node", "nodes", "agreed", "agree", "sky", "skies", "happy", "happiness", "the"}

var prefixes = []string{"r", "run", "runn", "conf", "configur", "caf", "no", "agre", "happ", "sk"}

func randomDoc(r *rand.Rand) string {
	ws := make([]string, 1+r.IntN(10))
	for i := range ws {
		ws[i] = words[r.IntN(len(words))]
	}
	return strings.Join(ws, []string{" ", ", ", "-", ". "}[r.IntN(4)])
}

func randomLeaf(r *rand.Rand) query.Node {
	switch r.IntN(4) {
	case 0:
		return &query.Term{Text: prefixes[r.IntN(len(prefixes))], Prefix: true}
	case 1:
		return &query.Phrase{Terms: []string{text.Tokenize(words[r.IntN(len(words))])[0], text.Tokenize(words[r.IntN(len(words))])[0]}}
	}
	return &query.Term{Text: text.Tokenize(words[r.IntN(len(words))])[0]}
}

func randomQuery(r *rand.Rand, depth int) query.Node {
	if depth == 0 || r.IntN(3) == 0 {
		return randomLeaf(r)
	}
	switch r.IntN(4) {
	case 0:
		return &query.And{Children: []query.Node{randomQuery(r, depth-1), randomQuery(r, depth-1)}}
	case 1:
		return &query.Or{Children: []query.Node{randomQuery(r, depth-1), randomQuery(r, depth-1)}}
	case 2:
		return &query.Not{Positive: randomQuery(r, depth-1), Negative: randomQuery(r, depth-1)}
	}
	return &query.Near{Groups: []query.Node{randomLeaf(r), randomLeaf(r)}, Distance: r.IntN(4)}
}

// TestMatchAgreesWithTheIndex checks Match against SQLite FTS5 (through the
// sqlite backend) on random documents and queries.
func TestMatchAgreesWithTheIndex(t *testing.T) {
	ctx := context.Background()
	b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "m.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := rand.New(rand.NewPCG(1, 2))
	docs := map[int64]*text.Doc{}
	texts := map[int64]string{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err = b.Update(ctx, func(tx core.Tx) error {
		for range 80 {
			m := &core.Memory{Version: 1, Namespace: "default", Pool: core.PoolMemory, Type: core.TypeFact, Content: randomDoc(r),
				Significance: 5, Trust: core.Trust{Level: core.TrustInferred, Score: 0.8}, Status: core.StatusActive, CreatedAt: now, UpdatedAt: now}
			if err := tx.Insert(m); err != nil {
				return err
			}
			docs[m.ID], texts[m.ID] = text.NewDoc(m.Content), m.Content
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		q := randomQuery(r, 3)
		if err := query.Validate(q); err != nil {
			continue
		}
		hits, err := b.SearchKeyword(ctx, q, core.Filter{}, 1000)
		if err != nil {
			t.Fatalf("query %d %s: %v", i, q, err)
		}
		var want []int64
		for _, h := range hits {
			want = append(want, h.ID)
		}
		slices.Sort(want)
		cq := compile(t, q)
		var got []int64
		for id, d := range docs {
			if cq.Match(d) {
				got = append(got, id)
			}
		}
		slices.Sort(got)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			for _, id := range symmetricDiff(got, want) {
				t.Logf("  %d %q: match %v", id, texts[id], cq.Match(docs[id]))
			}
			t.Fatalf("query %s: Match finds %d documents, the index %d", q, len(got), len(want))
		}
	}
}

func symmetricDiff(a, b []int64) []int64 {
	var out []int64
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestLeavesAndStems(t *testing.T) {
	d := text.NewDoc("Alice prefers open-source tools; she configured three nodes.")
	q := query.Natural("what does alice like about open-source preferences and configuration")
	if !compile(t, q).Match(d) {
		t.Fatalf("%s should match", q)
	}
	got := compile(t, q).Leaves(d)
	want := []string{`"alice"`, `"open source"`, `"preferences"`, `"configuration"`} // configuration ~ configured
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("leaves = %v, want %v", got, want)
	}
	if text.Stem("configured") != text.Stem("configuration") || text.Stem("running") != "run" {
		t.Fatalf("stems: configured %s, running %s", text.Stem("configured"), text.Stem("running"))
	}
	if compile(t, &query.Phrase{Terms: []string{"source", "open"}}).Match(d) {
		t.Fatal("a phrase must match in order")
	}
	if !compile(t, &query.Near{Groups: []query.Node{&query.Term{Text: "alice"}, &query.Term{Text: "tools"}}, Distance: 3}).Match(d) ||
		compile(t, &query.Near{Groups: []query.Node{&query.Term{Text: "alice"}, &query.Term{Text: "nodes"}}, Distance: 3}).Match(d) {
		t.Fatal("NEAR distance not respected")
	}
	if d.Len() != 9 {
		t.Fatalf("len = %d, want 9", d.Len())
	}
}

func compile(t *testing.T, n query.Node) *text.Query {
	t.Helper()
	q, err := query.Compile(n)
	if err != nil {
		t.Fatalf("Compile(%s): %v", n, err)
	}
	return q
}

// TestDocFunc checks that the Docs of Query.DocFunc, which hold the
// positions of the query's tokens only, evaluate, score and list leaves as
// NewDoc's do, on random queries without a prefix (with one, DocFunc is
// NewDoc) and random documents.
func TestDocFunc(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	tried := 0
	for tried < 2000 {
		n := randomQuery(r, 3)
		q := compile(t, n)
		if slices.ContainsFunc(q.Phrases(), func(p *text.Phrase) bool { return p.Prefix }) {
			continue
		}
		tried++
		mk := q.DocFunc()
		for range 20 {
			s := randomDoc(r)
			want, got := text.NewDoc(s), mk(s)
			wm, wf := q.Freq(want)
			gm, gf := q.Freq(got)
			if wm != gm || !slices.Equal(wf, gf) || got.Len() != want.Len() ||
				!slices.Equal(q.Leaves(got), q.Leaves(want)) || q.Match(got) != q.Match(want) ||
				q.Positioned(q.Root(), got) != q.Positioned(q.Root(), want) {
				t.Fatalf("%s on %q: DocFunc's doc gives match %v freq %v leaves %v; NewDoc's %v %v %v",
					n, s, gm, gf, q.Leaves(got), wm, wf, q.Leaves(want))
			}
		}
	}
}
