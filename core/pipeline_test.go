package core_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

func hitIDs(res *core.SearchResult) []int64 { return ids(res) }

func originOf(res *core.SearchResult, id int64) (string, bool) {
	for _, h := range res.Hits {
		if h.Memory.ID == id {
			return h.Origin, true
		}
	}
	return "", false
}

func TestSessionExpansionAddsNeighbouringTurns(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	turns := []string{"hello there", "I went to the zoo yesterday", "what did you see", "a big lion", "wow", "bye"}
	var ins []core.Input
	for _, s := range turns {
		ins = append(ins, core.Input{Content: s, Session: "chat-1", Type: core.TypeTurn})
	}
	ins = append(ins, core.Input{Content: "unrelated note in another session", Session: "chat-2", Type: core.TypeTurn})
	ms, err := e.RememberBatch(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(ctx, core.SearchRequest{Query: "zoo"})
	if err != nil {
		t.Fatal(err)
	}
	got := hitIDs(res)
	// The hit, then its neighbours, nearer and earlier first (session_window 2).
	want := []int64{ms[1].ID, ms[0].ID, ms[2].ID, ms[3].ID}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("expanded search = %v, want %v", got, want)
	}
	if o, _ := originOf(res, ms[2].ID); o != fmt.Sprintf("session neighbour of %d (+1)", ms[1].ID) {
		t.Fatalf("origin = %q", o)
	}
	res, err = e.Search(ctx, core.SearchRequest{Query: "zoo", NoExpand: true})
	if err != nil || fmt.Sprint(hitIDs(res)) != fmt.Sprint([]int64{ms[1].ID}) {
		t.Fatalf("unexpanded search = %v, %v", hitIDs(res), err)
	}
	// A turn written later joins its session in the index.
	late := remember(t, e, core.Input{Content: "the zoo had penguins", Session: "chat-2", Type: core.TypeTurn})
	res, err = e.Search(ctx, core.SearchRequest{Query: "penguins"})
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := originOf(res, ms[6].ID); !ok || !strings.Contains(o, fmt.Sprint(late.ID)) {
		t.Fatalf("the late turn's session neighbour is missing: %v", hitIDs(res))
	}
	// Forgotten turns leave the index.
	if _, err := e.Forget(ctx, ms[0].ID, ""); err != nil {
		t.Fatal(err)
	}
	res, _ = e.Search(ctx, core.SearchRequest{Query: "zoo yesterday"})
	if slices.Contains(hitIDs(res), ms[0].ID) {
		t.Fatal("a forgotten turn came back through session expansion")
	}
}

func TestGraphExpansionFollowsTypedEdges(t *testing.T) {
	ctx := context.Background()
	e := openAt(t, t.TempDir()+"/m.db", core.Options{Search: core.SearchConfig{ExpandBudget: 2,
		EdgeFactors: map[string]float64{"relates_to": 0}}})
	defer e.Close()
	seed := remember(t, e, core.Input{Content: "the payment service uses postgres"})
	sup := remember(t, e, core.Input{Content: "benchmarks from March back this choice"})
	rel := remember(t, e, core.Input{Content: "an unrelated thought"})
	con := remember(t, e, core.Input{Content: "one engineer argued for mongodb"})
	third := remember(t, e, core.Input{Content: "a third linked note"})
	for _, ed := range []core.Edge{{From: sup.ID, To: seed.ID, Type: core.EdgeSupports}, {From: seed.ID, To: rel.ID, Type: core.EdgeRelatesTo},
		{From: con.ID, To: seed.ID, Type: core.EdgeContradicts}, {From: seed.ID, To: third.ID, Type: core.EdgeDerivedFrom, Weight: 0.1}} {
		if _, err := e.Link(ctx, ed); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.Search(ctx, core.SearchRequest{Query: "payment postgres"})
	if err != nil {
		t.Fatal(err)
	}
	got := hitIDs(res)
	if fmt.Sprint(got) != fmt.Sprint([]int64{seed.ID, sup.ID, con.ID}) {
		t.Fatalf("graph expansion = %v, want seed, supporter, contradiction (budget 2, relates_to off)", got)
	}
	if o, _ := originOf(res, sup.ID); o != fmt.Sprintf("it supports %d", seed.ID) {
		t.Fatalf("origin %q", o)
	}
}

func TestPoolsPreferDistilledMemories(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	raw := remember(t, e, core.Input{Content: "Carol is allergic to peanuts", Type: core.TypeTurn})
	fact := remember(t, e, core.Input{Content: "Carol is allergic to peanuts", Type: core.TypeFact})
	res, err := e.Search(ctx, core.SearchRequest{Query: "carol allergic peanuts"})
	if err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(res); fmt.Sprint(got) != fmt.Sprint([]int64{fact.ID, raw.ID}) {
		t.Fatalf("equal relevance: %v, want the distilled memory %d first", got, fact.ID)
	}
	res, err = e.Search(ctx, core.SearchRequest{Query: "carol allergic peanuts", Pools: []core.Pool{core.PoolRaw}})
	if err != nil || fmt.Sprint(hitIDs(res)) != fmt.Sprint([]int64{raw.ID}) {
		t.Fatalf("raw pool only: %v %v", hitIDs(res), err)
	}
}

// storeOf opens a new SQLite store searched with cfg and remembers ins in
// it, returning the engine (closed when the test ends) and the memories.
func storeOf(t *testing.T, cfg core.SearchConfig, ins []core.Input) (*core.Engine, []*core.Memory) {
	t.Helper()
	e := openAt(t, filepath.Join(t.TempDir(), "m.db"), core.Options{Search: cfg})
	t.Cleanup(func() { e.Close() })
	ms, err := e.RememberBatch(context.Background(), ins)
	if err != nil {
		t.Fatal(err)
	}
	return e, ms
}

// TestKeywordGateDropsCommonWordMatches: thirty memories match only the
// common word of the query ("project"), far below the relative keyword
// threshold. With keep_keyword off a hybrid search drops them all; by
// default it spares the ones a keyword search alone would return within
// the limit, so that it never shows less than keyword search, and drops
// the rest.
func TestKeywordGateDropsCommonWordMatches(t *testing.T) {
	ctx := context.Background()
	var ins []core.Input
	for i := range 30 {
		ins = append(ins, core.Input{Content: fmt.Sprintf("status update %d on the project timeline and staffing for the quarter", i)})
	}
	ins = append(ins, core.Input{Content: "project kubernetes upgrade to 1.31 is blocked on the ingress controller"})
	req := core.SearchRequest{Query: "kubernetes ingress project", Limit: 5, NoExpand: true}
	open := func(cfg core.SearchConfig) (*core.Engine, []*core.Memory) { return storeOf(t, cfg, ins) }
	e, ms := open(core.SearchConfig{KeepKeyword: -1})
	res, err := e.Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(hitIDs(res)) != fmt.Sprint([]int64{ms[30].ID}) {
		t.Fatalf("keep_keyword off: hybrid search = %v, want only %d: memories matching only the common word pad the result", hitIDs(res), ms[30].ID)
	}

	e, _ = open(core.SearchConfig{})
	kwReq := req
	kwReq.Mode = core.ModeKeyword
	kw, err := e.Search(ctx, kwReq)
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.Explain(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	gate := map[int64]string{}
	dropped := 0
	for _, c := range x.Candidates {
		gate[c.ID] = c.Gate
		if strings.HasPrefix(c.Gate, "dropped: keyword score") {
			dropped++
		}
	}
	for i, id := range hitIDs(kw) {
		switch g := gate[id]; {
		case i == 0 && g != "kept": // the best keyword match passes on its own
			t.Errorf("keyword search's first hit (%d): gate %q in the hybrid search, want kept", id, g)
		case i > 0 && !(strings.HasPrefix(g, "kept: keyword search alone returns it (") && strings.Contains(g, "keyword score")):
			t.Errorf("keyword search's hit %d (%d): gate %q in the hybrid search, want kept as keyword search's own result, its keyword score below the threshold", i+1, id, g)
		}
	}
	if got := hitIDs(x.Result); len(got) != req.Limit || got[0] != ms[30].ID {
		t.Errorf("defaults: hybrid search = %v, want %d first and %d hits", got, ms[30].ID, req.Limit)
	}
	if dropped == 0 {
		t.Errorf("defaults: no common-word match past keyword search's result was dropped: %v", gate)
	}
}

// TestSparedKeywordHitTakesItsSeedsScore: the reply after the turn that
// answers (same session) matches only the common word of the question.
// The gate keeps it because keyword search alone would return it; it is
// also the answer's session neighbour, and expansion scores it as it
// scores the neighbours the gate dropped: the better of its own score and
// the seed's share, so it follows the answer instead of trailing at its
// own weak match behind the other sessions' turns.
func TestSparedKeywordHitTakesItsSeedsScore(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	ins := []core.Input{
		{Content: "Ann: guess what I did today", Session: "chat-1", Type: core.TypeTurn},
		{Content: "Ann: I booked the kayak tour in Norway for the fjords trip", Session: "chat-1", Type: core.TypeTurn},
		{Content: "Bob: the trip sounds great", Session: "chat-1", Type: core.TypeTurn},
	}
	for i, s := range []string{"the office trip", "a trip to the dentist", "the school trip is Friday", "our trip was rained out"} {
		ins = append(ins, core.Input{Content: "Cy: " + s, Session: fmt.Sprintf("chat-%d", i+2), Type: core.TypeTurn})
	}
	ms, err := e.RememberBatch(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}
	req := core.SearchRequest{Query: "kayak tour Norway fjords trip", Limit: 5}
	x, err := e.Explain(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	reply := ms[2].ID
	for _, c := range x.Candidates {
		if c.ID == reply && !strings.HasPrefix(c.Gate, "kept: keyword search alone returns it") {
			t.Fatalf("the reply's gate verdict %q: the case needs it spared as keyword search's own result", c.Gate)
		}
	}
	got := hitIDs(x.Result)
	if len(got) < 3 || got[0] != ms[1].ID {
		t.Fatalf("hits %v, want the answer %d first", got, ms[1].ID)
	}
	if o, _ := originOf(x.Result, reply); o != fmt.Sprintf("session neighbour of %d (+1)", ms[1].ID) || slices.Index(got, reply) > 2 {
		t.Errorf("the reply %d: origin %q, place %d in %v; want it scored as the answer's neighbour, next to it", reply, o, slices.Index(got, reply)+1, got)
	}
}

// TestKeptKeywordHitsRankAfterTheGatesOwn: "we talked about the tour"
// matches only a common word of the question and the gate keeps it only
// because keyword search alone returns it; in the week the question names,
// the time stage doubles its score above Bob's turn, which passed the gate
// on its own (a rare word of the question, last January). By default
// (keep_keyword_rank last) what passed ranks first and the kept memory
// only fills the place after it; by its own score it would push Bob down.
func TestKeptKeywordHitsRankAfterTheGatesOwn(t *testing.T) {
	ctx := context.Background()
	weekend := time.Date(2023, 3, 18, 10, 0, 0, 0, time.UTC)
	january := time.Date(2023, 1, 10, 10, 0, 0, 0, time.UTC)
	ins := []core.Input{
		{Content: "Ann: the kayak tour in Norway is booked for the fjords", Type: core.TypeTurn, ValidFrom: weekend},
		{Content: "Bob: what about the fjords", Type: core.TypeTurn, ValidFrom: january},
		{Content: "Cy: we talked about the tour for a while", Type: core.TypeTurn, ValidFrom: weekend},
		{Content: "Cy: the tour", Type: core.TypeTurn, ValidFrom: weekend},
	}
	for i := range 30 { // the question's words are rare among them
		ins = append(ins, core.Input{Content: fmt.Sprintf("Dee: lunch at noon on day %d", i), Type: core.TypeTurn, ValidFrom: january})
	}
	req := core.SearchRequest{Query: "kayak tour Norway fjords last weekend", Limit: 5,
		ReferenceTime: time.Date(2023, 3, 21, 12, 0, 0, 0, time.UTC)}
	explain := func(cfg core.SearchConfig) (*core.Explanation, []*core.Memory) {
		e, ms := storeOf(t, cfg, ins)
		x, err := e.Explain(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return x, ms
	}
	x, ms := explain(core.SearchConfig{KeepKeywordRank: "score"})
	bob, kept := ms[1].ID, ms[2].ID
	got := hitIDs(x.Result)
	if i, j := slices.Index(got, kept), slices.Index(got, bob); i < 0 || j < 0 || i > j {
		t.Fatalf("keep_keyword_rank score: hits %v, want %d (kept) above %d (passed): the case is not testing anything", got, kept, bob)
	}
	x, _ = explain(core.SearchConfig{})
	got = hitIDs(x.Result)
	if i, j := slices.Index(got, kept), slices.Index(got, bob); i < 0 || j < 0 || i < j {
		t.Errorf("defaults: hits %v, want %d (passed the gate) above %d (kept only as keyword search's result), both returned", got, bob, kept)
	}
	for _, c := range x.Candidates {
		if c.ID == kept && !(strings.HasPrefix(c.Gate, "kept: keyword search alone returns it") && strings.HasSuffix(c.Gate, "; ranked after the others")) {
			t.Errorf("the kept memory's gate %q, want kept as keyword search's result, ranked after the others", c.Gate)
		}
	}
}

func TestExplainListsEveryCandidate(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	a := remember(t, e, core.Input{Content: "Alice prefers open-source tools", Significance: 8})
	b := remember(t, e, core.Input{Content: "Alice's home lab runs Proxmox", ValidTo: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)})
	c := remember(t, e, core.Input{Content: "Bob drinks his coffee black"})
	x, err := e.Explain(ctx, core.SearchRequest{Query: "alice tools"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(ctx, core.SearchRequest{Query: "alice tools"})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Result.Hits) != len(res.Hits) || x.Result.Hits[0].Memory.ID != res.Hits[0].Memory.ID {
		t.Fatalf("explain's result differs from search: %v vs %v", hitIDs(x.Result), hitIDs(res))
	}
	by := map[int64]core.CandidateExplanation{}
	for _, ce := range x.Candidates {
		by[ce.ID] = ce
	}
	ca := by[a.ID]
	if ca.Rank != 1 || ca.KeywordRank != 1 || ca.VectorRank == 0 || ca.Gate != "kept" || ca.Fused <= 0 ||
		ca.Significance <= 1 || ca.Score <= 0 || x.Candidates[0].ID != a.ID {
		t.Fatalf("explained hit: %+v", ca)
	}
	if cb := by[b.ID]; !strings.Contains(cb.Filtered, "not valid at") || cb.Rank != 0 {
		t.Fatalf("expired memory: %+v", cb)
	}
	if cc, ok := by[c.ID]; ok && cc.Rank == 0 && cc.Gate == "kept" && cc.Origin == "" {
		t.Fatalf("an unreturned kept candidate must have been cut by the limit: %+v", cc)
	}
	m, _ := e.Get(ctx, a.ID)
	if m.AccessCount != 1 {
		t.Fatalf("access count %d: explain must not count as an access, search must", m.AccessCount)
	}
	x, err = e.Explain(ctx, core.SearchRequest{Query: "alice tools", MMR: true})
	if err != nil || !strings.HasPrefix(x.Candidates[0].MMR, "chosen 1") {
		t.Fatalf("mmr decision: %+v %v", x.Candidates[0], err)
	}
}

func TestMMRSpreadsParaphrases(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	p1 := remember(t, e, core.Input{Content: "the deploy pipeline caches docker layers"})
	remember(t, e, core.Input{Content: "the deploy pipeline caches docker layers too"})
	remember(t, e, core.Input{Content: "the deploy pipeline caches the docker layers"})
	other := remember(t, e, core.Input{Content: "deploy pipeline secrets live in vault"})
	plain, err := e.Search(ctx, core.SearchRequest{Query: "deploy pipeline docker", Limit: 2, NoExpand: true})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(hitIDs(plain), other.ID) {
		t.Fatalf("without MMR the paraphrases should fill the top 2: %v", hitIDs(plain))
	}
	div, err := e.Search(ctx, core.SearchRequest{Query: "deploy pipeline docker", Limit: 2, MMR: true, MMRLambda: 0.5, NoExpand: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := hitIDs(div); len(got) != 2 || got[0] != p1.ID || got[1] != other.ID {
		t.Fatalf("MMR = %v, want [%d %d]", got, p1.ID, other.ID)
	}
}

// A short turn that states the fact outranks a long turn that matches more
// of the question's words because it says a lot; with the long-turn factor
// off, the long one wins.
func TestLongTurnsDoNotCrowdOutShortOnes(t *testing.T) {
	ctx := context.Background()
	long := "Here are some ideas: tomatoes grow well in pots, and what you plant next to them matters. " +
		strings.Repeat("Water the plants in the morning, check the soil, add compost to the beds, keep the pots in the sun. ", 12) +
		"In a small garden, plant basil beside the tomatoes."
	ins := []core.Input{
		{Content: "I grow tomatoes in my garden now.", Session: "chat-1", Type: core.TypeTurn},
		{Content: long, Session: "chat-2", Type: core.TypeTurn},
	}
	for i, s := range []string{"the train was late again", "we watched a film", "my sister called", "lunch was pasta", "the meeting moved to Friday"} {
		ins = append(ins, core.Input{Content: s, Session: fmt.Sprintf("chat-%d", i+3), Type: core.TypeTurn})
	}
	query := "which tomatoes should I plant in my garden?"
	first := func(cfg core.SearchConfig) (string, float64) {
		e := openAt(t, filepath.Join(t.TempDir(), "m.db"), core.Options{Search: cfg})
		defer e.Close()
		if _, err := e.RememberBatch(ctx, ins); err != nil {
			t.Fatal(err)
		}
		res, err := e.Search(ctx, core.SearchRequest{Query: query, Mode: core.ModeKeyword, NoExpand: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 2 {
			t.Fatalf("%d hits, want 2", len(res.Hits))
		}
		x, err := e.Explain(ctx, core.SearchRequest{Query: query, Mode: core.ModeKeyword, NoExpand: true})
		if err != nil {
			t.Fatal(err)
		}
		lf := 0.0
		for _, c := range x.Candidates {
			if c.Content == long {
				lf = c.LengthFactor
			}
		}
		return res.Hits[0].Memory.Content, lf
	}
	if got, lf := first(core.SearchConfig{TurnLengthWeight: -1}); got != long || lf != 1 {
		t.Fatalf("long-turn factor off: first hit %.40q (length factor %v), want the long turn, factor 1", got, lf)
	}
	if got, lf := first(core.SearchConfig{}); got != ins[0].Content || lf >= 0.6 || lf <= 0.4 {
		t.Fatalf("defaults: first hit %.40q (length factor of the long turn %v), want the short turn and a factor near 0.5", got, lf)
	}
}
