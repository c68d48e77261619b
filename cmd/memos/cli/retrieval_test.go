package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/provider/rerank/reranktest"
)

func TestExplainCommand(t *testing.T) {
	e := newEnv(t)
	a := e.add("Alice prefers open-source tools", "--type", "preference")
	e.add("Bob drinks his coffee black")
	old := e.add("Alice used Windows", "--valid-to", "2020-01-01")
	out := e.ok("explain", "what does alice like")
	for _, want := range []string{"hybrid search", "RANK", "KW SCORE", "VERDICT", "kept", fmt.Sprintf("filtered: not valid at"), "Alice prefers"} {
		if !strings.Contains(out, want) {
			t.Fatalf("explain output lacks %q:\n%s", want, out)
		}
	}
	var x api.ExplainOut
	e.json(&x, "explain", "what does alice like", "--valid-at", "2019-06-01")
	var found bool
	for _, c := range x.Candidates {
		if c.ID == old.ID && c.Rank > 0 {
			found = true
		}
		if c.ID == a.ID && c.Filtered != "" {
			t.Fatalf("memory %d is valid in 2019 too (no interval): %+v", a.ID, c)
		}
	}
	if !found || x.ValidAt.Year() != 2019 {
		t.Fatalf("explain --valid-at 2019: %+v", x.Candidates)
	}
	if r := e.run("explain", "x", "--as-of", "yesterday"); r.code != 2 || !strings.Contains(r.stderr, `as_of "yesterday"`) {
		t.Fatalf("bad --as-of: %d %s", r.code, r.stderr)
	}
}

func TestPackCommand(t *testing.T) {
	e := newEnv(t)
	e.add("Alice prefers open-source tools", "--type", "preference", "--significance", "7", "--source", "conversation:1#turn-2")
	e.add("When a user asks about tools, prefer open-source ones", "--type", "lesson")
	e.add("Bob drinks his coffee black", "--significance", "2")
	md := e.ok("pack", "which tools does alice like", "--budget", "200")
	if !strings.HasPrefix(md, "# Context from memory\nQuery: which tools does alice like\n") || !strings.Contains(md, "source conversation:1#turn-2") ||
		!strings.Contains(md, "## Lessons") {
		t.Fatalf("pack markdown:\n%s", md)
	}
	if again := e.ok("pack", "which tools does alice like", "--budget", "200"); again != md {
		t.Fatalf("two packs differ:\n%s\n%s", md, again)
	}
	var pk core.Pack
	out := e.ok("pack", "which tools does alice like", "--format", "json", "--budget", "200")
	if err := json.Unmarshal([]byte(out), &pk); err != nil {
		t.Fatal(err)
	}
	if pk.Tokens > 200 || pk.Tokens == 0 || pk.Tokenizer != "cl100k_base" || len(pk.Memories) == 0 {
		t.Fatalf("pack json: %+v", pk)
	}
	boot := e.ok("pack", "--bootstrap", "--budget", "60")
	if !strings.Contains(boot, "Session start") || !strings.Contains(boot, "Alice prefers") || strings.Contains(boot, "coffee") {
		t.Fatalf("bootstrap pack with a small budget must hold the significant memory only:\n%s", boot)
	}
	for _, args := range [][]string{{"pack"}, {"pack", "x", "--format", "xml"}, {"pack", "--bootstrap", "x"}, {"pack", "x", "--budget", "0"}} {
		if r := e.run(args...); r.code != 2 {
			t.Fatalf("memos %v: exit %d (%s), want 2", args, r.code, r.stderr)
		}
	}
}

func TestValidityAndSupersedeCommands(t *testing.T) {
	e := newEnv(t)
	berlin := e.add("Bob lives in Berlin", "--valid-from", "2020-01-01")
	out := e.ok("supersede", fmt.Sprint(berlin.ID), "Bob lives in Lisbon", "--valid-from", "2024-02-01")
	if !strings.Contains(out, fmt.Sprintf("supersedes memory %d", berlin.ID)) {
		t.Fatalf("supersede: %s", out)
	}
	var res core.SearchResult
	e.json(&res, "search", "where does bob live")
	if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Memory.Content, "Lisbon") {
		t.Fatalf("search now: %v", hitIDs(res))
	}
	res = core.SearchResult{}
	e.json(&res, "search", "where does bob live", "--valid-at", "2022-05-01")
	if len(res.Hits) != 1 || res.Hits[0].Memory.ID != berlin.ID {
		t.Fatalf("search --valid-at 2022: %v", hitIDs(res))
	}
	var m core.Memory
	e.json(&m, "set-validity", fmt.Sprint(berlin.ID), "--valid-from", "2019-01-01")
	if m.Version != 3 || m.ValidFrom.Year() != 2019 || m.ValidTo.Year() != 2024 {
		t.Fatalf("set-validity --from keeps --to: %+v", m)
	}
	res = core.SearchResult{}
	e.json(&res, "search", "bob", "--as-of", "2000-01-01")
	if len(res.Hits) != 0 {
		t.Fatalf("as of 2000 the store knew nothing: %v", hitIDs(res))
	}
	res = core.SearchResult{}
	e.json(&res, "search", "bob lives", "--pools", "all", "--mmr", "--no-expand")
	if len(res.Hits) != 1 {
		t.Fatalf("search --pool all --mmr: %v", hitIDs(res))
	}
	if r := e.run("set-validity", fmt.Sprint(berlin.ID)); r.code != 2 {
		t.Fatalf("set-validity without flags: %d", r.code)
	}
	if r := e.run("supersede", "999", "x"); r.code != 3 {
		t.Fatalf("supersede unknown: %d %s", r.code, r.stderr)
	}
}

// TestHTTPReranker configures the http reranker against a server that
// answers like text-embeddings-inference, and checks that search follows
// its order, explain shows its scores, and a server that fails leaves the
// fused order with a note instead of failing the search.
func TestHTTPReranker(t *testing.T) {
	t.Parallel()
	srv := reranktest.NewTEI(func(_, text string) float64 {
		if strings.Contains(text, "orchard") {
			return 0.9
		}
		return 0.1
	})
	defer srv.Close()
	e := newEnv(t)
	e.writeConfig("reranker:\n  name: http\n  http:\n    base_url: " + srv.URL + "\n")
	e.add("apple apple apple pie with apple cinnamon")
	orchard := e.add("the apple orchard in autumn")
	var res core.SearchResult
	e.json(&res, "search", "apple")
	if len(res.Hits) == 0 || res.Hits[0].Memory.ID != orchard.ID {
		t.Fatalf("reranked search: %v, want %d first", hitIDs(res), orchard.ID)
	}
	var x api.ExplainOut
	e.json(&x, "explain", "apple")
	if x.Rerank == "" || x.Candidates[0].RerankScore == nil || *x.Candidates[0].RerankScore != 0.9 {
		t.Fatalf("explain: rerank %q, first candidate %+v", x.Rerank, x.Candidates[0])
	}
	if out := e.ok("explain", "apple"); !strings.Contains(out, "rerank 0.9") {
		t.Fatalf("explain text lacks the reranker's score:\n%s", out)
	}

	srv.FailFrom(1)
	e.json(&res, "search", "apple")
	if len(res.Hits) < 2 || res.Hits[0].Memory.ID == orchard.ID {
		t.Fatalf("with a failing reranker: %v, want the fused order (the pie first)", hitIDs(res))
	}
	if out := e.ok("explain", "apple"); !strings.Contains(out, "kept the fused order") || !strings.Contains(out, "inference failed") {
		t.Fatalf("explain text lacks the failure:\n%s", out)
	}

	e.writeConfig("reranker:\n  name: http\n  http:\n    base_url: " + srv.URL + "\n    bogus: 1\n")
	if r := e.run("search", "apple"); r.code == 0 || !strings.Contains(r.stderr, "bogus") {
		t.Fatalf("an unknown reranker key: exit %d, %s", r.code, r.stderr)
	}
	e.writeConfig("reranker:\n  name: nosuch\n")
	if r := e.run("search", "apple"); r.code == 0 || !strings.Contains(r.stderr, "http") {
		t.Fatalf("an unknown reranker: exit %d, %s", r.code, r.stderr)
	}
}

func TestSearchRefTime(t *testing.T) {
	e := newEnv(t)
	e.add("went hiking on the ridge trail", "--valid-from", "2023-03-18T10:00:00Z")
	old := e.add("went hiking at the lake", "--valid-from", "2023-02-04T10:00:00Z")
	e.add("Caroline: I went hiking yesterday", "--valid-from", "2023-05-08T13:00:00Z")
	out := e.ok("search", "where did I go hiking last weekend", "--reference-time", "2023-03-21")
	for _, want := range []string{`time: "last weekend" = 2023-03-18 to 2023-03-19 (asked 2023-03-21T00:00:00Z)`, "WHEN", "2023-03-18 10:00"} {
		if !strings.Contains(out, want) {
			t.Fatalf("search --reference-time output lacks %q:\n%s", want, out)
		}
	}
	var res core.SearchResult
	e.json(&res, "search", "where did I go hiking last weekend", "--reference-time", "2023-02-07")
	if len(res.Hits) == 0 || res.Hits[0].Memory.ID != old.ID {
		t.Fatalf("asked on 7 February: %+v", res.Hits)
	}
	out = e.ok("search", "when did Caroline go hiking")
	if !strings.Contains(out, "[yesterday = 2023-05-07]") {
		t.Fatalf("a when question does not show the resolved date:\n%s", out)
	}
	out = e.ok("explain", "where did I go hiking last weekend", "--reference-time", "2023-03-21")
	if !strings.Contains(out, "time ×2.00 (2023-03-18 10:00)") {
		t.Fatalf("explain does not show the time factor:\n%s", out)
	}
	md := e.ok("pack", "where did I go hiking last weekend", "--reference-time", "2023-03-21")
	if !strings.Contains(md, `Time: "last weekend" = 2023-03-18 to 2023-03-19 (asked 2023-03-21)`) {
		t.Fatalf("pack header:\n%s", md)
	}
	if r := e.run("search", "x", "--reference-time", "last week"); r.code != 2 || !strings.Contains(r.stderr, `reference_time "last week"`) {
		t.Fatalf("bad --reference-time: %d %s", r.code, r.stderr)
	}
}

func TestExplainShowsTheLongTurnFactor(t *testing.T) {
	e := newEnv(t)
	long := "Here are some hiking ideas: " + strings.Repeat("pack water, check the weather, tell someone your route. ", 20)
	e.add(long, "--type", "turn", "--session", "chat-1")
	e.add("I went hiking on the ridge", "--type", "turn", "--session", "chat-2")
	out := e.ok("explain", "hiking ideas")
	if !strings.Contains(out, "long turn ×0.") {
		t.Fatalf("explain does not show the long-turn factor:\n%s", out)
	}
}

// Query feedback runs over documents by default, and explain says which
// words it added and where each candidate stood in the extended query's
// list; over the same text stored as turns it does not run.
func TestExplainShowsQueryFeedback(t *testing.T) {
	for _, typ := range []string{"document", "turn"} {
		e := newEnv(t)
		for _, c := range []string{"Caroline paints sunsets on canvas", "Caroline paints lakes on a big canvas",
			"a new canvas arrived for Caroline today", "the train to Lisbon was late again"} {
			e.add(c, "--type", typ)
		}
		out := e.ok("explain", "who paints")
		ran := strings.Contains(out, "query feedback added: canvas caroline") && strings.Contains(out, "feedback #3")
		if ran != (typ == "document") {
			t.Fatalf("%s: feedback ran %v:\n%s", typ, ran, out)
		}
	}
}
