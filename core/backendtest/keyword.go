package backendtest

import (
	"context"
	"slices"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// searchCase is a query and the corpus documents it must match, in any order.
type searchCase struct {
	q    query.Node
	flt  driver.Filter
	want []string
}

// runSearchCases checks each case against the corpus with a generous limit.
func runSearchCases(t *testing.T, f *fixture, ids map[string]int64, cs []searchCase) {
	t.Helper()
	for _, c := range cs {
		got := f.searchIDs(t, c.q, c.flt, 100)
		if want := idsOf(ids, c.want...); !sameSet(got, want) {
			t.Errorf("SearchKeyword(%s, %+v) = %v, want %v (%v)", describe(c.q), c.flt, names(ids, got), c.want, want)
		}
	}
}

// names maps ids back to corpus document names for messages.
func names(ids map[string]int64, got []int64) []string {
	out := make([]string, len(got))
	for i, id := range got {
		out[i] = "?"
		for n, x := range ids {
			if x == id {
				out[i] = n
			}
		}
	}
	return out
}

func near(dist int, groups ...query.Node) *query.Near {
	return &query.Near{Groups: groups, Distance: dist}
}
func and(cs ...query.Node) *query.And { return &query.And{Children: cs} }
func or(cs ...query.Node) *query.Or   { return &query.Or{Children: cs} }
func not(p, n query.Node) *query.Not  { return &query.Not{Positive: p, Negative: n} }

func testKeywordOperators(t *testing.T, f *fixture) {
	ids := seedCorpus(t, f)
	quokkas := []string{"quokka1", "quokka2", "quokka3"}
	runSearchCases(t, f, ids, []searchCase{
		{q: term("vector"), want: []string{"alice", "cosine"}},
		{q: term("label"), want: []string{"graph"}},
		{q: term("nonexistentword"), want: []string{}},

		{q: phrase("vector", "search"), want: []string{"alice"}},
		{q: phrase("search", "vector"), want: []string{"cosine"}},
		{q: phrase("open", "source", "tools"), want: []string{"alice"}},
		{q: phrase("habitat", "quokka"), want: []string{}},

		{q: and(term("alpha"), term("beta")), want: []string{"far", "close"}},
		{q: and(term("vector"), term("cosine")), want: []string{"cosine"}},
		{q: and(or(term("alice"), term("bob")), term("nightly")), want: []string{"bob"}},
		{q: and(term("vector"), term("zebra")), want: []string{}},

		{q: or(term("quokka"), term("zebra")), want: append([]string{"zebra3", "zebra1"}, quokkas...)},
		{q: or(phrase("vector", "search"), term("label")), want: []string{"alice", "graph"}},
		{q: or(term("nonexistentword"), term("label")), want: []string{"graph"}},

		{q: not(term("vector"), term("cosine")), want: []string{"alice"}},
		{q: not(or(term("vector"), term("zebra")), or(term("cosine"), term("crossing"))), want: []string{"alice", "zebra3"}},
		{q: not(term("habitat"), phrase("habitat", "quokka")), want: quokkas},
		{q: and(term("zebra"), not(term("zebra"), term("crossing"))), want: []string{"zebra3"}},

		// NEAR: at most Distance tokens between the groups, in any order.
		{q: near(3, term("alpha"), term("beta")), want: []string{"far", "close"}},
		{q: near(2, term("alpha"), term("beta")), want: []string{"close"}},
		{q: near(0, term("alpha"), term("beta")), want: []string{"close"}},
		{q: near(0, term("beta"), term("alpha")), want: []string{"close"}},
		{q: near(3, phrase("open", "source"), term("search")), want: []string{"alice"}},
		{q: near(2, phrase("open", "source"), term("search")), want: []string{}},
		{q: near(query.DefaultNearDistance, term("zebra"), term("walking")), want: []string{"zebra1"}},
		// Three groups: only distances where "between consecutive groups"
		// and FTS5's "between the first and the last group" agree.
		{q: near(1, term("crimson"), term("emerald"), term("sapphire")), want: []string{"gems"}},
		{q: near(7, term("crimson"), term("emerald"), term("sapphire")), want: []string{"gems", "pebbles"}},
	})
}

func testKeywordNormalization(t *testing.T, f *fixture) {
	ids := seedCorpus(t, f)
	runSearchCases(t, f, ids, []searchCase{
		// Case-insensitive.
		{q: term("postgresql"), want: []string{"bench"}},
		{q: term("alice"), want: []string{"alice"}},
		{q: phrase("postgresql", "cluster"), want: []string{"bench"}},
		// Porter stemming on both sides.
		{q: term("node"), want: []string{"graph"}},
		{q: term("nodes"), want: []string{"graph"}},
		{q: term("edge"), want: []string{"graph"}},
		{q: term("running"), want: []string{"bob", "bench"}},
		{q: term("runs"), want: []string{"bob", "bench"}},
		{q: term("run"), want: []string{"bob", "bench"}},
		{q: phrase("graph", "node"), want: []string{"graph"}},
		{q: phrase("typed", "edge"), want: []string{"graph"}},
		// Diacritics removed.
		{q: term("cafe"), want: []string{"cafe"}},
		{q: term("muller"), want: []string{"cafe"}},
		// Prefixes.
		{q: prefix("config"), want: []string{"config"}},
		{q: prefix("conf"), want: []string{"config", "conference"}},
		{q: prefix("zeb"), want: []string{"zebra3", "zebra1"}},
		{q: prefix("pedestrian"), want: []string{"zebra1"}},
		{q: prefix("alpha"), want: []string{"far", "close"}},
		{q: prefix("xylo"), want: []string{}},
		{q: and(prefix("quok"), prefix("surv")), want: []string{"quokka1", "quokka2", "quokka3"}},
	})
}

func testKeywordFilter(t *testing.T, f *fixture) {
	ids := seedCorpus(t, f)
	q := or(term("quokka"), term("zebra"), term("alpha"))
	runSearchCases(t, f, ids, []searchCase{
		{q: q, want: []string{"zebra3", "zebra1", "quokka1", "quokka2", "quokka3", "far", "close"}},
		{q: q, flt: driver.Filter{Namespaces: []string{"user:bob"}}, want: []string{"quokka2"}},
		{q: q, flt: driver.Filter{Namespaces: []string{"default", "user:bob"}}, want: []string{"zebra3", "zebra1", "quokka1", "quokka2", "quokka3", "far", "close"}},
		{q: q, flt: driver.Filter{Pools: []driver.Pool{driver.PoolKnowledge}}, want: []string{"quokka3"}},
		{q: q, flt: driver.Filter{Pools: []driver.Pool{driver.PoolRaw}}, want: []string{"zebra1"}},
		{q: q, flt: driver.Filter{Statuses: []driver.Status{driver.StatusActive}}, want: []string{"zebra3", "zebra1", "quokka1"}},
		{q: q, flt: driver.Filter{Statuses: []driver.Status{driver.StatusArchived}}, want: []string{"far", "quokka2"}},
		{q: q, flt: driver.Filter{Types: []driver.Type{driver.TypeDocument}}, want: []string{"zebra1"}},
		{q: q, flt: driver.Filter{Types: []driver.Type{driver.TypeFact, driver.TypeKnowledge}}, want: []string{"zebra3", "quokka1", "quokka2", "quokka3", "far", "close"}},
		{q: q, flt: driver.Filter{
			Namespaces: []string{"default"},
			Pools:      []driver.Pool{driver.PoolMemory},
			Statuses:   []driver.Status{driver.StatusActive, driver.StatusQuarantined},
		}, want: []string{"zebra3", "quokka1", "close"}},
		{q: q, flt: driver.Filter{Namespaces: []string{}}, want: []string{}},
		{q: q, flt: driver.Filter{Namespaces: []string{"user:nobody"}}, want: []string{}},
	})
	// The limit applies after the filter.
	got := f.searchIDs(t, q, driver.Filter{Statuses: []driver.Status{driver.StatusArchived}}, 1)
	if len(got) != 1 || (got[0] != ids["far"] && got[0] != ids["quokka2"]) {
		t.Errorf("filtered search with limit 1 = %v, want one of far, quokka2", names(ids, got))
	}
}

func testKeywordRanking(t *testing.T, f *fixture) {
	ids := seedCorpus(t, f)
	// Three occurrences in a short text beat one in a long text.
	if got := f.searchIDs(t, term("zebra"), driver.Filter{}, 10); !slices.Equal(got, idsOf(ids, "zebra3", "zebra1")) {
		t.Errorf("search \"zebra\" = %v, want [zebra3 zebra1]: best match first", names(ids, got))
	}
	// Identical documents tie and come in ascending id order.
	hits := f.search(t, term("quokka"), driver.Filter{}, 10)
	if got := hitIDs(hits); !slices.Equal(got, idsOf(ids, "quokka1", "quokka2", "quokka3")) {
		t.Errorf("search \"quokka\" over identical documents = %v, want them in ascending id order", names(ids, got))
	} else if hits[0].Score != hits[1].Score || hits[1].Score != hits[2].Score {
		t.Errorf("identical documents scored differently: %v", hits)
	}
	// Every limit returns the best hits of the unlimited search.
	q := or(term("quokka"), term("zebra"), term("alpha"), term("vector"))
	full := f.searchIDs(t, q, driver.Filter{}, 100)
	if len(full) != 9 {
		t.Fatalf("search %s returned %d hits, want 9", describe(q), len(full))
	}
	for limit := 1; limit <= len(full)+1; limit++ {
		got := f.searchIDs(t, q, driver.Filter{}, limit)
		if want := full[:min(limit, len(full))]; !slices.Equal(got, want) {
			t.Errorf("search with limit %d = %v, want the first %d of %v", limit, got, len(want), full)
		}
	}
}

func testKeywordCurrentVersion(t *testing.T, f *fixture) {
	m := newMemory("the standup meeting is on Monday")
	other := newMemory("lunch is on Monday")
	f.insert(t, m, other)
	v2 := nextVersion(m, "the standup meeting moved to Wednesday")
	v2.Status = driver.StatusArchived
	v2.Namespace = "project:standup"
	f.put(t, v2)

	check := func(q query.Node, flt driver.Filter, want ...int64) {
		t.Helper()
		if got := f.searchIDs(t, q, flt, 10); !sameSet(got, want) {
			t.Errorf("after Put: SearchKeyword(%s, %+v) = %v, want %v", describe(q), flt, got, want)
		}
	}
	check(term("monday"), driver.Filter{}, other.ID)
	check(term("wednesday"), driver.Filter{}, m.ID)
	check(term("standup"), driver.Filter{Statuses: []driver.Status{driver.StatusActive}})
	check(term("standup"), driver.Filter{Statuses: []driver.Status{driver.StatusArchived}}, m.ID)
	check(term("standup"), driver.Filter{Namespaces: []string{driver.DefaultNamespace}})
	check(term("standup"), driver.Filter{Namespaces: []string{"project:standup"}}, m.ID)

	v3 := nextVersion(v2, "the standup meeting is on Thursday")
	v3.Status = driver.StatusActive
	f.put(t, v3)
	check(term("wednesday"), driver.Filter{})
	check(term("thursday"), driver.Filter{Statuses: []driver.Status{driver.StatusActive}}, m.ID)
	check(phrase("standup", "meeting"), driver.Filter{}, m.ID)
}

func testKeywordInvalid(t *testing.T, f *fixture) {
	seedCorpus(t, f)
	_, err := f.b.SearchKeyword(context.Background(), nil, driver.Filter{}, 10)
	wantErr(t, "SearchKeyword with a nil query", err, driver.ErrInvalid)
	// A query without matches is not an error.
	hits, err := f.b.SearchKeyword(context.Background(), term("nonexistentword"), driver.Filter{}, 10)
	if err != nil || len(hits) != 0 {
		t.Errorf("SearchKeyword without matches = %v, %v; want no hits and no error", hits, err)
	}
}

// testKeywordScripts checks that text in other scripts is found by a
// natural-language query of its words: the query's tokens are core/text's
// and the index's are the backend's, and the two must agree with FTS5's
// tokenizer (Hangul syllables stay whole, が keeps its dakuten, ё is not
// е, Hindi and Hebrew split at their marks, an emoji newer than SQLite's
// Unicode tables is a token character).
func testKeywordScripts(t *testing.T, f *fixture) {
	docs := []corpusDoc{
		{"korean", newMemory("서울에서 한국 음식을 먹었다")},
		{"japanese", newMemory("学校が 休み です")},
		{"russian", newMemory("Маша ела ёлку на Новый год")},
		{"hindi", newMemory("मुझे हिन्दी भाषा पसंद है")},
		{"hebrew", newMemory("שָׁלוֹם עוֹלָם")},
		{"emoji", newMemory("thinking🤔 about lunch")},
		{"latin", newMemory("Ǡ µ ſ: rare Latin letters")},
	}
	ids := insertDocs(t, f, docs)
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"한국", []string{"korean"}},
		{"한국 음식을", []string{"korean"}},
		{"学校が", []string{"japanese"}},
		{"ёлку", []string{"russian"}},
		{"ЁЛКУ", []string{"russian"}},
		{"हिन्दी", []string{"hindi"}},
		{"שָׁלוֹם", []string{"hebrew"}},
		{"thinking🤔", []string{"emoji"}},
		{"ǡ μ s", []string{"latin"}},
	} {
		q := query.Natural(c.q)
		if q == nil {
			t.Errorf("query.Natural(%q) has no words", c.q)
			continue
		}
		got := f.searchIDs(t, q, driver.Filter{}, 10)
		if want := idsOf(ids, c.want...); !sameSet(got, want) {
			t.Errorf("SearchKeyword(Natural(%q) = %s) = %v, want %v", c.q, describe(q), names(ids, got), c.want)
		}
	}
}
