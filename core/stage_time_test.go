package core_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

// asked is a Tuesday: "last weekend" is 18–19 March 2023.
var asked = time.Date(2023, 3, 21, 20, 0, 0, 0, time.UTC)

// purchases stores the same kind of event on several dates.
func purchases(t *testing.T, e *core.Engine) []*core.Memory {
	t.Helper()
	var ms []*core.Memory
	for _, in := range []core.Input{
		{Content: "went shopping for a new kettle for the kitchen", ValidFrom: day(2023, 3, 4)},
		{Content: "went shopping for running shoes at the mall", ValidFrom: day(2023, 3, 18).Add(15 * time.Hour)},
		{Content: "went shopping for a lamp and a rug", ValidFrom: day(2023, 2, 11)},
		{Content: "we talked about the weekend weather last week", ValidFrom: day(2023, 3, 10)},
	} {
		ms = append(ms, remember(t, e, in))
	}
	return ms
}

func TestSearchReadsTimeInTheQuestion(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	ms := purchases(t, e)
	res, err := e.Search(ctx, core.SearchRequest{Query: "what shopping did I do last weekend?", ReferenceTime: asked})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Memory.ID != ms[1].ID {
		t.Fatalf("hits %v, want the purchase of 18 March (%d) first", ids(res), ms[1].ID)
	}
	// The time words are not keyword terms: the memory that says "weekend"
	// and "last week" does not match through them.
	if strings.Contains(res.Keyword, "weekend") || strings.Contains(res.Keyword, "last") {
		t.Errorf("keyword query %q still has the time words", res.Keyword)
	}
	x, err := e.Explain(ctx, core.SearchRequest{Query: "what shopping did I do last weekend?", ReferenceTime: asked})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range x.Candidates {
		if c.ID == ms[3].ID && c.KeywordRank > 0 {
			t.Errorf("the memory that only shares the time words matched the keyword query: %+v", c)
		}
	}
	qt := res.Time
	if qt == nil || len(qt.Expressions) != 1 || qt.Expressions[0].Text != "last weekend" ||
		!qt.Expressions[0].From.Equal(day(2023, 3, 18)) || !qt.Expressions[0].To.Equal(day(2023, 3, 20)) || !qt.ReferenceTime.Equal(asked) {
		t.Fatalf("time %+v", qt)
	}

	// Another reference time moves "last weekend": 4 and 5 March.
	res, err = e.Search(ctx, core.SearchRequest{Query: "what shopping did I do last weekend?", ReferenceTime: day(2023, 3, 7)})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Memory.ID != ms[0].ID {
		t.Fatalf("asked on 7 March: %v, %v; want the kettle (%d) first", ids(res), err, ms[0].ID)
	}

	// Off: the query is searched as written.
	off := openAt(t, t.TempDir()+"/off.db", core.Options{Search: core.SearchConfig{TimeBoost: -1}})
	defer off.Close()
	purchases(t, off)
	res, err = off.Search(ctx, core.SearchRequest{Query: "what shopping did I do last weekend?", ReferenceTime: asked})
	if err != nil || res.Time != nil || !strings.Contains(res.Keyword, "weekend") {
		t.Fatalf("time_boost -1: keyword %q, time %+v, %v", res.Keyword, res.Time, err)
	}
	// FTS queries are exact: never rewritten.
	res, err = e.Search(ctx, core.SearchRequest{Query: "weekend", Mode: core.ModeFTS, ReferenceTime: asked})
	if err != nil || res.Time != nil || len(res.Hits) != 1 {
		t.Fatalf("fts: %v, time %+v, %v", ids(res), res.Time, err)
	}
}

func TestSearchTimeBringsDeepCandidates(t *testing.T) {
	ctx := context.Background()
	// One candidate per retriever: the purchase last weekend ranks below
	// the others by keyword, and only the deeper reading finds it.
	e := openAt(t, t.TempDir()+"/m.db", core.Options{Search: core.SearchConfig{Candidates: 1, TimeCandidates: 50}})
	defer e.Close()
	var last *core.Memory
	for i := range 6 {
		in := core.Input{Content: "shop, shop, shop: groceries at the shop", ValidFrom: day(2023, 1, 2+i)}
		if i == 5 {
			in = core.Input{Content: "a phone case from the shop and other things", ValidFrom: day(2023, 3, 19)}
		}
		m := remember(t, e, in)
		if i == 5 {
			last = m
		}
	}
	res, err := e.Search(ctx, core.SearchRequest{Query: "what shopping did I do last weekend", ReferenceTime: asked, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids(res), last.ID) {
		t.Fatalf("hits %v: the purchase of last weekend (%d) is missing", ids(res), last.ID)
	}
	x, err := e.Explain(ctx, core.SearchRequest{Query: "what shopping did I do last weekend", ReferenceTime: asked, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range x.Candidates {
		if c.ID == last.ID && (c.TimeFactor != 2 || !c.EventTime.Equal(day(2023, 3, 19))) {
			t.Errorf("explain: time factor %v, event time %v; want 2 and 19 March", c.TimeFactor, c.EventTime)
		}
		// Deep candidates outside the time are not candidates at all.
		if c.KeywordRank > 1 && c.VectorRank == 0 && c.ID != last.ID {
			t.Errorf("deep candidate %d outside the time kept: %+v", c.ID, c)
		}
	}
}

func TestWhenQuestionShowsDates(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	went := remember(t, e, core.Input{Content: "Caroline: I went to the LGBTQ support group yesterday", ValidFrom: day(2023, 5, 8).Add(13 * time.Hour)})
	remember(t, e, core.Input{Content: "Caroline: I went to the LGBTQ support group", ValidFrom: day(2023, 5, 8).Add(14 * time.Hour)})
	res, err := e.Search(ctx, core.SearchRequest{Query: "When did Caroline go to the LGBTQ support group?"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Time == nil || res.Time.Ask != "when" {
		t.Fatalf("time %+v, want a when question", res.Time)
	}
	if len(res.Hits) == 0 || res.Hits[0].Memory.ID != went.ID {
		t.Fatalf("hits %v, want the dated turn %d first", ids(res), went.ID)
	}
	if !res.Hits[0].EventTime.Equal(day(2023, 5, 8).Add(13 * time.Hour)) {
		t.Errorf("event time %v, want the turn's valid_from", res.Hits[0].EventTime)
	}
	m := res.Hits[0].Mentions
	if len(m) != 1 || m[0].Text != "yesterday" || !m[0].From.Equal(day(2023, 5, 7)) {
		t.Fatalf("mentions %+v, want yesterday = 7 May 2023", m)
	}

	pk, err := e.ContextPack(ctx, core.PackRequest{Query: "When did Caroline go to the LGBTQ support group?"})
	if err != nil {
		t.Fatal(err)
	}
	md := pk.Markdown()
	if !strings.Contains(md, `"yesterday" = 2023-05-07`) || !strings.Contains(md, "valid since 2023-05-08 13:00Z") {
		t.Fatalf("the pack does not show the dates:\n%s", md)
	}
	pk, err = e.ContextPack(ctx, core.PackRequest{Query: "what happened with the support group in May 2023", ReferenceTime: asked})
	if err != nil {
		t.Fatal(err)
	}
	if md := pk.Markdown(); !strings.Contains(md, `Time: "in May 2023" = 2023-05-01 to 2023-05-31 (asked 2023-03-21)`) {
		t.Fatalf("the pack header does not state the time:\n%s", md)
	}
}
