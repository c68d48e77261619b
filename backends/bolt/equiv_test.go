package bolt_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// equivCorpus is loaded into both backends. Its sentences use words whose
// porter stems matter, non-ASCII letters, numbers and punctuation.
var equivCorpus = []struct {
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

// equivQueries covers every operator, combinations, stemming, prefixes,
// unicode and queries without matches, in the FTS5 syntax of query.Parse.
var equivQueries = []string{
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

func openBoth(t *testing.T) (driver.Backend, driver.Backend) {
	t.Helper()
	dir := t.TempDir()
	b, err := bolt.Open(context.Background(), bolt.Config{Path: filepath.Join(dir, "store.bolt")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	s, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "store.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, be := range []driver.Backend{b, s} {
		err := be.Update(context.Background(), func(tx driver.Tx) error {
			for i, d := range equivCorpus {
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
	return b, s
}

func hitIDs(hits []driver.Hit) []int64 {
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

func sortedIDs(hits []driver.Hit) []int64 {
	ids := hitIDs(hits)
	slices.Sort(ids)
	return ids
}

// TestEquivalentToSQLite loads the same memories into both backends and
// checks that every query of the table returns the same memories, in the
// same order with the same scores, with and without filters and limits.
func TestEquivalentToSQLite(t *testing.T) {
	if len(equivQueries) < 40 {
		t.Fatalf("the table has %d queries, want at least 40", len(equivQueries))
	}
	b, s := openBoth(t)
	ctx := context.Background()
	filters := []driver.Filter{
		{},
		{Namespaces: []string{"default", "user:bob"}, Statuses: []driver.Status{driver.StatusActive}},
		{Pools: []driver.Pool{driver.PoolRaw, driver.PoolKnowledge}},
		{Types: []driver.Type{driver.TypeEvent, driver.TypeFact}, Statuses: []driver.Status{driver.StatusActive, driver.StatusArchived}},
	}
	nonEmpty := 0
	for qi, text := range equivQueries {
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
				want, err := s.SearchKeyword(ctx, q, f, limit)
				if err != nil {
					t.Fatalf("sqlite %s: %v", text, err)
				}
				got, err := b.SearchKeyword(ctx, q, f, limit)
				if err != nil {
					t.Fatalf("bolt %s: %v", text, err)
				}
				if fi == 0 && limit == 100 && len(want) > 0 {
					nonEmpty++
				}
				if limit == 100 && !slices.Equal(sortedIDs(got), sortedIDs(want)) {
					t.Errorf("%s (filter %d): bolt matched %v, sqlite %v", text, fi, sortedIDs(got), sortedIDs(want))
					continue
				}
				if !slices.Equal(hitIDs(got), hitIDs(want)) {
					t.Errorf("%s (filter %d, limit %d): bolt ranked %v, sqlite %v", text, fi, limit, got, want)
					continue
				}
				for i := range got {
					if d := got[i].Score - want[i].Score; d > 1e-9 || d < -1e-9 {
						t.Errorf("%s (filter %d): memory %d scored %v on bolt, %v on sqlite", text, fi, got[i].ID, got[i].Score, want[i].Score)
						break
					}
				}
			}
		}
	}
	if nonEmpty < len(equivQueries)*2/3 {
		t.Errorf("only %d of %d queries match anything; the table tests too little", nonEmpty, len(equivQueries))
	}
}

// TestEquivalentAfterChanges applies the same updates and deletes to both
// backends and compares searches again: the index follows the records alike.
func TestEquivalentAfterChanges(t *testing.T) {
	b, s := openBoth(t)
	ctx := context.Background()
	for _, be := range []driver.Backend{b, s} {
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
		want, err := s.SearchKeyword(ctx, q, driver.Filter{}, 50)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.SearchKeyword(ctx, q, driver.Filter{}, 50)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(hitIDs(got), hitIDs(want)) {
			t.Errorf("after changes, %s: bolt %v, sqlite %v", text, got, want)
		}
	}
}
