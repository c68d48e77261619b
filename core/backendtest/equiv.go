package backendtest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// The keyword equivalence table: a backend that does not run FTS5 itself
// (bolt, postgres) must return what the sqlite backend (FTS5, the
// reference) returns for every query of the table — the same memories, in
// the same order, with the same bm25 scores — with and without filters and
// limits, and again after updates and deletes.

// EquivCorpus is loaded into both backends by Equivalent. Its sentences use words whose
// porter stems matter, non-ASCII letters, numbers and punctuation.
var EquivCorpus = []struct {
	content string
	ns      string
	pool    driver.Pool
	status  driver.Status
	typ     driver.Type
}{
	{"Alice prefers open-source tools for vector search", "default", driver.PoolMemory, driver.StatusActive, driver.TypePreference},
	{"Bob runs the nightly build at midnight", "user:bob", driver.PoolMemory, driver.StatusActive, driver.TypeEvent},
	{"Running benchmarks on the PostgreSQL cluster took hours", "project:alpha", driver.PoolRaw, driver.StatusActive, driver.TypeTurn},
	{"Meet Alice and Bob at the Café Müller on Friday", "default", driver.PoolMemory, driver.StatusActive, driver.TypeEvent},
	{"search vector embeddings with cosine similarity", "default", driver.PoolKnowledge, driver.StatusActive, driver.TypeLesson},
	{"configuration files are configured by the config loader", "project:alpha", driver.PoolMemory, driver.StatusArchived, driver.TypeNote},
	{"the conference call about connection pooling moved to Tuesday", "user:bob", driver.PoolMemory, driver.StatusActive, driver.TypeEvent},
	{"connected clients reconnect after the connecting phase", "default", driver.PoolRaw, driver.StatusQuarantined, driver.TypeDocument},
	{"Zoë's teammate Łukasz maintains the ingest pipeline — 日本語 notes included", "project:alpha", driver.PoolKnowledge, driver.StatusActive, driver.TypeRelationship},
	{"a naïve generalization of happiness is not happy generalizations", "default", driver.PoolMemory, driver.StatusActive, driver.TypeFact},
	{"release v2.1 fixed the deploy to staging; v2.2 deploys to production", "project:alpha", driver.PoolMemory, driver.StatusActive, driver.TypeFact},
	{"deploying to staging failed twice before the deployment succeeded", "project:alpha", driver.PoolRaw, driver.StatusActive, driver.TypeTurn},
	{"the team agreed that agreement matters more than agreeing fast", "default", driver.PoolMemory, driver.StatusActive, driver.TypeLesson},
	{"zebra crossing near the old market square with many pedestrians", "default", driver.PoolRaw, driver.StatusActive, driver.TypeDocument},
	{"zebra zebra zebra", "default", driver.PoolMemory, driver.StatusArchived, driver.TypeFact},
	{"Alice reviewed Bob's pull request about open source licensing", "user:bob", driver.PoolMemory, driver.StatusActive, driver.TypeEvent},
	{"the graph connects nodes through typed edges; each node has a label", "default", driver.PoolKnowledge, driver.StatusActive, driver.TypeKnowledge},
	{"skies were clear and the sky was blue over the cafe terrace", "default", driver.PoolMemory, driver.StatusActive, driver.TypeFact},
	{"CAFÉ au lait and croissants at eight", "user:bob", driver.PoolMemory, driver.StatusActive, driver.TypePreference},
	{"alpha one two three beta", "default", driver.PoolMemory, driver.StatusActive, driver.TypeNote},
	{"beta alpha", "default", driver.PoolMemory, driver.StatusActive, driver.TypeNote},
	{"tools, tooling and toolchains for Go developers", "project:alpha", driver.PoolKnowledge, driver.StatusActive, driver.TypeKnowledge},
}

// EquivQueries covers every operator, combinations, stemming, prefixes,
// unicode and queries without matches, in the FTS5 syntax of query.Parse.
var EquivQueries = []string{
	// terms and stemming
	"alice", "vector", "vectors", "run", "running", "runs", "connection", "connected", "connect",
	"configuration", "configure", "happy", "happiness", "generalization", "agreed", "agree",
	"deploy", "deployment", "sky", "skies", "node", "edges", "tools",
	// case, diacritics, unicode, numbers
	"ALICE", "cafe", "café", "MÜLLER", "muller", "naive", "zoe", "lukasz", "日本語", "v2", "2",
	// prefixes
	"conf*", "config*", "connect*", "run*", "runn*", "gener*", "happ*", "happy*", "deploy*", "z*", "tool*", "caf*",
	// phrases
	`"open source"`, `"source open"`, `"open source tools"`, `"vector search"`, `"search vector"`, `"zebra zebra"`, `"v2 1"`, `"the cafe"`,
	// AND, OR, NOT and combinations
	"alice AND bob", "alice bob", "alice OR bob", "alice NOT bob", "bob NOT alice",
	"(alice OR bob) AND cafe", "(alice OR bob) NOT (cafe OR request)", "deploy* NOT staging",
	"vector OR zebra OR alpha", "(run* OR deploy*) AND NOT_A_WORD_xyz", "zebra NOT (crossing OR market)",
	`"open source" OR cosine`, `alice AND "pull request"`, "conf* AND call", "happ* NOT naive",
	// NEAR
	"NEAR(alpha beta, 0)", "NEAR(alpha beta, 3)", "NEAR(beta alpha, 1)", "NEAR(alice bob)", "NEAR(alice bob, 2)",
	`NEAR("open source" tools, 2)`, "NEAR(deploy* staging, 1)", "NEAR(zebra market, 5) OR NEAR(alpha beta, 0)",
	"cafe AND NEAR(alice bob, 3)", "alice NOT NEAR(alice bob, 3)",
	// NOT whose positive side matches nothing: FTS5's bm25 still counts its
	// negative side on the first memory that has it (issue 10)
	"alice OR (zzz NOT prefers)", "vector OR (zzz NOT search) OR zebra", "(zzz NOT (search OR alice)) OR vector OR bob",
	"alice OR ((zzz NOT bob) NOT prefers)", "tools OR (alice NOT (zzz NOT prefers))",
	// no matches
	"nonexistentword", "alice AND nonexistentword", `"bob alice"`, "xylo*", "NEAR(alice zebra, 1)",
}

// LoadEquivCorpus inserts EquivCorpus into b, which must be empty, as
// memories 1, 2, ... in one transaction.
func LoadEquivCorpus(t testing.TB, b driver.Backend) {
	t.Helper()
	err := b.Update(context.Background(), func(tx driver.Tx) error {
		for i, d := range EquivCorpus {
			m := &driver.Memory{
				Version: 1, Namespace: d.ns, Pool: d.pool, Type: d.typ, Status: d.status,
				Content: d.content, Significance: 5,
				Trust: driver.Trust{Level: driver.TrustCertain, Score: 1},
			}
			if err := tx.Insert(m); err != nil {
				return err
			}
			if m.ID != int64(i+1) {
				return fmt.Errorf("memory %d got id %d", i+1, m.ID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Equivalent loads EquivCorpus into ref and got (both empty) and checks
// that got answers every query of EquivQueries as ref does: the same
// matches, the same order, and scores within 1e-9. Then it applies the same
// update and deletes to both and compares searches again.
func Equivalent(t *testing.T, refName string, ref driver.Backend, name string, got driver.Backend) {
	t.Helper()
	if len(EquivQueries) < 40 {
		t.Fatalf("the table has %d queries, want at least 40", len(EquivQueries))
	}
	LoadEquivCorpus(t, ref)
	LoadEquivCorpus(t, got)
	ctx := context.Background()
	filters := []driver.Filter{
		{},
		{Namespaces: []string{"default", "user:bob"}, Statuses: []driver.Status{driver.StatusActive}},
		{Pools: []driver.Pool{driver.PoolRaw, driver.PoolKnowledge}},
		{Types: []driver.Type{driver.TypeEvent, driver.TypeFact}, Statuses: []driver.Status{driver.StatusActive, driver.StatusArchived}},
	}
	nonEmpty := 0
	for qi, text := range EquivQueries {
		q, err := query.Parse(text)
		if err != nil {
			t.Errorf("Parse(%q): %v", text, err)
			continue
		}
		for fi, f := range filters {
			if fi > 0 && qi%3 != fi-1 {
				continue // each query with one of the filters, to keep the test fast
			}
			for _, limit := range []int{100, 3} {
				want, err := ref.SearchKeyword(ctx, q, f, limit)
				if err != nil {
					t.Fatalf("%s %s: %v", refName, text, err)
				}
				have, err := got.SearchKeyword(ctx, q, f, limit)
				if err != nil {
					t.Fatalf("%s %s: %v", name, text, err)
				}
				if fi == 0 && limit == 100 && len(want) > 0 {
					nonEmpty++
				}
				if limit == 100 && !slices.Equal(sortedHitIDs(have), sortedHitIDs(want)) {
					t.Errorf("%s (filter %d): %s matched %v, %s %v", text, fi, name, sortedHitIDs(have), refName, sortedHitIDs(want))
					continue
				}
				if !slices.Equal(hitIDs(have), hitIDs(want)) {
					t.Errorf("%s (filter %d, limit %d): %s ranked %v, %s %v", text, fi, limit, name, have, refName, want)
					continue
				}
				for i := range have {
					if d := have[i].Score - want[i].Score; d > 1e-9 || d < -1e-9 {
						t.Errorf("%s (filter %d): memory %d scored %v on %s, %v on %s", text, fi, have[i].ID, have[i].Score, name, want[i].Score, refName)
						break
					}
				}
			}
		}
	}
	if nonEmpty < len(EquivQueries)*2/3 {
		t.Errorf("only %d of %d queries match anything; the table tests too little", nonEmpty, len(EquivQueries))
	}

	// The index follows the records alike through an update and deletes.
	for _, be := range []driver.Backend{ref, got} {
		err := be.Update(ctx, func(tx driver.Tx) error {
			m, err := tx.Get(1, 0)
			if err != nil {
				return err
			}
			n := m.Clone()
			n.Version, n.Content = 2, "Alice now prefers proprietary tools for keyword search"
			if err := tx.Put(n); err != nil {
				return err
			}
			if err := tx.Delete(14); err != nil {
				return err
			}
			return tx.Delete(4)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, text := range []string{"alice", "vector", "keyword*", "zebra", "cafe", "tools", "NEAR(alice bob, 3)", "alice OR zebra OR search"} {
		q, err := query.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.SearchKeyword(ctx, q, driver.Filter{}, 50)
		if err != nil {
			t.Fatal(err)
		}
		have, err := got.SearchKeyword(ctx, q, driver.Filter{}, 50)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(hitIDs(have), hitIDs(want)) {
			t.Errorf("after changes, %s: %s %v, %s %v", text, name, have, refName, want)
		}
		for i := range have {
			if d := have[i].Score - want[i].Score; d > 1e-9 || d < -1e-9 {
				t.Errorf("after changes, %s: memory %d scored %v on %s, %v on %s", text, have[i].ID, have[i].Score, name, want[i].Score, refName)
				break
			}
		}
	}
}

func sortedHitIDs(hits []driver.Hit) []int64 {
	ids := hitIDs(hits)
	slices.Sort(ids)
	return ids
}
