package backendtest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// missingID is an id no case ever assigns.
const missingID = 1 << 40

func testCRUD(t *testing.T, f *fixture) {
	want := fullMemory()
	in := want.Clone()
	f.update(t, func(tx driver.Tx) error {
		if err := tx.Insert(in); err != nil {
			return err
		}
		// A transaction reads its own writes.
		got, err := tx.Get(in.ID, 0)
		if err != nil {
			t.Errorf("Get inside the inserting transaction: %v", err)
			return nil
		}
		if got.Content != want.Content {
			t.Errorf("Get inside the inserting transaction: content %q, want %q", got.Content, want.Content)
		}
		return nil
	})
	if in.ID <= 0 {
		t.Fatalf("Insert assigned id %d, want a positive id", in.ID)
	}
	want.ID = in.ID

	// The backend must have copied what it stored: changing the caller's
	// value afterwards changes nothing.
	in.Entities[0] = "changed"
	in.Metadata["origin"] = "changed"
	in.Embedding.Vector[0] = 99

	got := f.get(t, want.ID, 0)
	if d := diffMemory(want, got); len(d) > 0 {
		t.Errorf("Get(%d, 0) does not round-trip:\n  %s", want.ID, strings.Join(d, "\n  "))
	}
	if d := diffMemory(want, f.get(t, want.ID, 1)); len(d) > 0 {
		t.Errorf("Get(%d, 1) does not round-trip:\n  %s", want.ID, strings.Join(d, "\n  "))
	}

	// Returned values are fresh: the caller may change them freely.
	got.Entities[0] = "changed"
	got.Metadata["origin"] = "changed"
	got.Embedding.Vector[1] = 99
	if d := diffMemory(want, f.get(t, want.ID, 0)); len(d) > 0 {
		t.Errorf("changing a returned memory changed the store:\n  %s", strings.Join(d, "\n  "))
	}

	// Ids grow, also inside one transaction.
	var ids []int64
	f.update(t, func(tx driver.Tx) error {
		for _, c := range []string{"second memory", "third memory"} {
			m := newMemory(c)
			if err := tx.Insert(m); err != nil {
				return err
			}
			ids = append(ids, m.ID)
		}
		return nil
	})
	ids = append(ids, f.insert(t, newMemory("fourth memory"))...)
	prev := want.ID
	for _, id := range ids {
		if id <= prev {
			t.Errorf("Insert assigned ids %d then %d, want increasing ids", prev, id)
		}
		prev = id
	}

	// A memory without embedding, entities or metadata round-trips too.
	bare := newMemory("bare memory without extras")
	f.insert(t, bare)
	if d := diffMemory(bare, f.get(t, bare.ID, 0)); len(d) > 0 {
		t.Errorf("bare memory does not round-trip:\n  %s", strings.Join(d, "\n  "))
	}

	f.view(t, func(tx driver.ReadTx) error {
		_, err := tx.Get(missingID, 0)
		wantErr(t, "Get of an unknown id", err, driver.ErrNotFound)
		_, err = tx.Get(want.ID, 2)
		wantErr(t, "Get of an unknown version", err, driver.ErrNotFound)
		_, err = tx.History(missingID)
		wantErr(t, "History of an unknown id", err, driver.ErrNotFound)
		return nil
	})

	// Insert requires version 1; a rejected insert stores nothing.
	before := f.scanIDs(t, driver.ScanOptions{})
	f.update(t, func(tx driver.Tx) error {
		if err := tx.Insert(newMemory("inserted as version two", func(m *driver.Memory) { m.Version = 2 })); err == nil {
			t.Errorf("Insert with Version 2 succeeded, want an error")
		}
		return nil
	})
	if after := f.scanIDs(t, driver.ScanOptions{}); !slices.Equal(before, after) {
		t.Errorf("a rejected Insert changed the store: ids %v, then %v", before, after)
	}
}

// nextVersion returns a copy of m as its next version with new content.
func nextVersion(m *driver.Memory, content string) *driver.Memory {
	n := m.Clone()
	n.Version++
	n.Content = content
	n.UpdatedAt = n.UpdatedAt.Add(time.Hour + 7)
	return n
}

// testVersionsShareUnchanged edits a memory so that each field a backend
// may store once for several versions (the content, the embedding) stays,
// changes, disappears and comes back, in every combination, and checks that
// every version reads back as written, also after a reopen and after a
// delete of another memory with a similar history.
func testVersionsShareUnchanged(t *testing.T, f *fixture) {
	a, b := []float32{0.5, -1, 2}, []float32{2, -1, 0.5}
	v := newMemory("first words", withEmbedding("m", a...))
	twin := newMemory("first words", withEmbedding("m", a...))
	f.insert(t, v, twin)
	want := []*driver.Memory{v.Clone()}
	edits := []func(n *driver.Memory){
		func(n *driver.Memory) { n.Significance = 8 },                                          // neither changes
		func(n *driver.Memory) { n.Status = driver.StatusArchived },                            // neither, again
		func(n *driver.Memory) { n.Content = "second words" },                                  // content only
		func(n *driver.Memory) { n.Embedding.Vector = b },                                      // vector only
		func(n *driver.Memory) { n.Embedding.Model = "m2" },                                    // model only
		func(n *driver.Memory) { n.Embedding = driver.Embedding{} },                            // vector removed
		func(n *driver.Memory) { n.Metadata = map[string]any{"k": "v"} },                       // nothing, no vector
		func(n *driver.Memory) { n.Embedding = driver.Embedding{Model: "m", Vector: a} },       // vector back
		func(n *driver.Memory) { n.Content = "first words"; n.Embedding.Vector = b },           // both
		func(n *driver.Memory) { n.Content, n.Embedding = want[0].Content, want[0].Embedding }, // like version 1
	}
	for i, edit := range edits {
		n := nextVersion(want[len(want)-1], want[len(want)-1].Content)
		edit(n)
		f.put(t, n)
		want = append(want, n.Clone())
		if i == 4 {
			tw := nextVersion(twin, "twin words")
			f.put(t, tw)
			f.forget(t, twin.ID)
		}
	}
	check := func(when string) {
		t.Helper()
		for _, w := range want {
			if d := diffMemory(w, f.get(t, v.ID, w.Version)); len(d) > 0 {
				t.Errorf("%s: Get(%d, %d):\n  %s", when, v.ID, w.Version, strings.Join(d, "\n  "))
			}
		}
		f.view(t, func(tx driver.ReadTx) error {
			hist, err := tx.History(v.ID)
			if err != nil || len(hist) != len(want) {
				t.Errorf("%s: History: %d versions (%v), want %d", when, len(hist), err, len(want))
				return nil
			}
			for i := range want {
				if d := diffMemory(want[i], hist[i]); len(d) > 0 {
					t.Errorf("%s: History[%d]:\n  %s", when, i, strings.Join(d, "\n  "))
				}
			}
			return nil
		})
	}
	check("after the edits")
	f.reopen(t)
	check("after a reopen")
}

func testVersions(t *testing.T, f *fixture) {
	v1 := newMemory("the deploy target is staging", withEmbedding("m", 1, 0, 0),
		func(m *driver.Memory) { m.Entities = []string{"deploy"}; m.Metadata = map[string]any{"rev": 1.0} })
	other := newMemory("an unrelated memory")
	f.insert(t, v1, other)

	v2 := nextVersion(v1, "the deploy target is production")
	v2.Status = driver.StatusArchived
	v2.Trust = driver.Trust{Level: driver.TrustImported, Score: 0.6}
	v2.ValidFrom = at(10)
	v2.Entities = []string{"deploy", "production"}
	v2.Metadata = map[string]any{"rev": 2.0}
	v2.Embedding = driver.Embedding{Model: "m", Vector: []float32{0, 1, 0}}
	f.put(t, v2)
	v3 := nextVersion(v2, "the deploy target is production-eu")
	v3.Status = driver.StatusActive
	v3.ValidTo = at(20)
	v3.Embedding = driver.Embedding{Model: "m2", Vector: []float32{0, 0, 1}}
	f.put(t, v3)

	if d := diffMemory(v3, f.get(t, v1.ID, 0)); len(d) > 0 {
		t.Errorf("Get(%d, 0) after two Puts is not version 3:\n  %s", v1.ID, strings.Join(d, "\n  "))
	}
	// Scan filters on the current version only.
	if got := f.scanIDs(t, driver.ScanOptions{Filter: driver.Filter{Statuses: []driver.Status{driver.StatusArchived}}}); len(got) != 0 {
		t.Errorf("Scan for archived memories = %v; only version 2 was archived, and version 3 is current", got)
	}
	for _, want := range []*driver.Memory{v1, v2, v3} {
		if d := diffMemory(want, f.get(t, v1.ID, want.Version)); len(d) > 0 {
			t.Errorf("Get(%d, %d):\n  %s", v1.ID, want.Version, strings.Join(d, "\n  "))
		}
	}
	f.view(t, func(tx driver.ReadTx) error {
		hist, err := tx.History(v1.ID)
		if err != nil {
			t.Errorf("History: %v", err)
			return nil
		}
		want := []*driver.Memory{v1, v2, v3}
		if len(hist) != len(want) {
			t.Errorf("History returned %d versions, want %d", len(hist), len(want))
			return nil
		}
		for i := range want {
			if d := diffMemory(want[i], hist[i]); len(d) > 0 {
				t.Errorf("History[%d]:\n  %s", i, strings.Join(d, "\n  "))
			}
		}
		_, err = tx.Get(v1.ID, 4)
		wantErr(t, "Get of a version after the current one", err, driver.ErrNotFound)
		return nil
	})

	// Wrong versions conflict, unknown ids are not found, and neither
	// changes anything.
	seq := f.seq(t)
	f.update(t, func(tx driver.Tx) error {
		for _, v := range []int{1, 3, 5} {
			bad := nextVersion(v3, "a conflicting write")
			bad.Version = v
			wantErr(t, "Put with a version other than current+1", tx.Put(bad), driver.ErrConflict)
		}
		ghost := nextVersion(v3, "a ghost write")
		ghost.ID = missingID
		wantErr(t, "Put of an unknown id", tx.Put(ghost), driver.ErrNotFound)
		return nil
	})
	if d := diffMemory(v3, f.get(t, v1.ID, 0)); len(d) > 0 {
		t.Errorf("a rejected Put changed the memory:\n  %s", strings.Join(d, "\n  "))
	}
	if got := f.seq(t); got != seq {
		t.Errorf("rejected Puts moved Seq from %d to %d", seq, got)
	}
	if d := diffMemory(other, f.get(t, other.ID, 0)); len(d) > 0 {
		t.Errorf("Put of one memory changed another:\n  %s", strings.Join(d, "\n  "))
	}
}

func testIDsNeverReused(t *testing.T, f *fixture) {
	ids := f.insert(t, newMemory("first"), newMemory("second"))
	// Deleting the highest id is what trips stores that hand out max+1.
	f.forget(t, ids[1])
	again := f.insert(t, newMemory("third"))[0]
	if again <= ids[1] {
		t.Errorf("after deleting id %d, Insert assigned %d; ids must never be reused", ids[1], again)
	}
	f.forget(t, ids[0])
	f.forget(t, again)
	last := f.insert(t, newMemory("fourth, into an empty store"))[0]
	if last <= again {
		t.Errorf("after deleting every memory up to id %d, Insert assigned %d; ids must never be reused", again, last)
	}
}

func testDelete(t *testing.T, f *fixture) {
	victim := newMemory("the wifi password is hunter2", withEmbedding("m", 1, 2))
	a := newMemory("alpha memory about gardens")
	b := newMemory("beta memory about gardens")
	f.insert(t, victim, a, b)
	f.put(t, nextVersion(victim, "the wifi password is correct-horse"))
	f.update(t, func(tx driver.Tx) error {
		for _, e := range []driver.Edge{
			{From: victim.ID, To: a.ID, Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: base},
			{From: b.ID, To: victim.ID, Type: driver.EdgeSupports, Weight: 0.5, CreatedAt: base},
			{From: a.ID, To: b.ID, Type: driver.EdgeRelatesTo, Weight: 0.25, CreatedAt: base},
		} {
			if err := tx.Link(e); err != nil {
				return err
			}
		}
		return nil
	})
	seq := f.seq(t)

	f.forget(t, victim.ID)
	f.noteForgotten(victim.ID, victim.Content) // version 1 must be gone too

	f.view(t, func(tx driver.ReadTx) error {
		for _, v := range []int{0, 1, 2} {
			_, err := tx.Get(victim.ID, v)
			wantErr(t, "Get of a deleted memory", err, driver.ErrNotFound)
		}
		_, err := tx.History(victim.ID)
		wantErr(t, "History of a deleted memory", err, driver.ErrNotFound)
		return nil
	})
	checkEdges(t, "Edges of a neighbour after Delete", f.edges(t, a.ID),
		[]driver.Edge{{From: a.ID, To: b.ID, Type: driver.EdgeRelatesTo, Weight: 0.25, CreatedAt: base}})
	checkEdges(t, "Edges of a neighbour after Delete", f.edges(t, b.ID),
		[]driver.Edge{{From: a.ID, To: b.ID, Type: driver.EdgeRelatesTo, Weight: 0.25, CreatedAt: base}})
	for _, q := range []string{"hunter2", "horse", "wifi"} {
		if ids := f.searchIDs(t, term(q), driver.Filter{}, 10); len(ids) > 0 {
			t.Errorf("search %q after Delete returned %v, want nothing", q, ids)
		}
	}
	if ids := f.searchIDs(t, term("gardens"), driver.Filter{}, 10); !sameSet(ids, []int64{a.ID, b.ID}) {
		t.Errorf("search \"gardens\" after deleting another memory returned %v, want %v", ids, []int64{a.ID, b.ID})
	}

	cs := f.changes(t, seq)
	if len(cs) != 1 || cs[0].ID != victim.ID || !cs[0].Deleted {
		t.Errorf("Changes(%d) after Delete = %+v, want one Deleted entry for id %d", seq, cs, victim.ID)
	}
	if after := f.seq(t); after <= seq {
		t.Errorf("Delete did not advance Seq (%d, then %d)", seq, after)
	}
	f.update(t, func(tx driver.Tx) error {
		wantErr(t, "Delete of a deleted memory", tx.Delete(victim.ID), driver.ErrNotFound)
		wantErr(t, "Delete of an unknown id", tx.Delete(missingID), driver.ErrNotFound)
		return nil
	})
}

func testTouch(t *testing.T, f *fixture) {
	m := newMemory("touch me", withEmbedding("m", 1))
	other := newMemory("leave me alone", func(m *driver.Memory) { m.AccessCount = 7; m.LastAccessedAt = at(5) })
	f.insert(t, m, other)
	seq := f.seq(t)

	f.update(t, func(tx driver.Tx) error { return tx.Touch([]int64{m.ID, missingID}, at(100)) })
	f.update(t, func(tx driver.Tx) error { return tx.Touch([]int64{m.ID}, at(200)) })

	got := f.get(t, m.ID, 0)
	if got.AccessCount != 2 {
		t.Errorf("AccessCount after two Touches = %d, want 2", got.AccessCount)
	}
	if msg := diffTime(at(200), got.LastAccessedAt); msg != "" {
		t.Errorf("LastAccessedAt after Touch: %s", msg)
	}
	if d := diffMemoryFields(m, got, false); len(d) > 0 {
		t.Errorf("Touch changed more than the access statistics:\n  %s", strings.Join(d, "\n  "))
	}
	if d := diffMemory(other, f.get(t, other.ID, 0)); len(d) > 0 {
		t.Errorf("Touch of one memory changed another:\n  %s", strings.Join(d, "\n  "))
	}
	f.view(t, func(tx driver.ReadTx) error {
		hist, err := tx.History(m.ID)
		if err != nil {
			return err
		}
		if len(hist) != 1 {
			t.Errorf("History after Touch has %d versions, want 1 (Touch writes no version)", len(hist))
		}
		return nil
	})
	if after := f.seq(t); after != seq {
		t.Errorf("Touch moved Seq from %d to %d, want it unchanged", seq, after)
	}
	if cs := f.changes(t, seq); len(cs) != 0 {
		t.Errorf("Changes(%d) after Touch = %+v, want none", seq, cs)
	}
	f.update(t, func(tx driver.Tx) error {
		if err := tx.Touch([]int64{missingID}, at(300)); err != nil {
			t.Errorf("Touch of an unknown id: %v, want it ignored", err)
		}
		if err := tx.Touch(nil, at(300)); err != nil {
			t.Errorf("Touch of no ids: %v", err)
		}
		return nil
	})
}

// corpusDoc is one memory of the search corpus.
type corpusDoc struct {
	name string
	m    *driver.Memory
}

// keywordCorpus returns the keyword corpus. The documents avoid words whose porter
// stems differ between common implementations.
func keywordCorpus() []corpusDoc {
	return []corpusDoc{
		{"alice", newMemory("Alice prefers open-source tools for vector search", withType(driver.TypePreference))},
		{"graph", newMemory("Graph nodes connect through typed edges; each node has a label", withPool(driver.PoolKnowledge), withType(driver.TypeKnowledge))},
		{"bob", newMemory("Bob runs the nightly build at midnight", withNamespace("user:bob"), withType(driver.TypeEvent))},
		{"bench", newMemory("Running benchmarks on the PostgreSQL cluster", withNamespace("project:alpha"), withPool(driver.PoolRaw), withType(driver.TypeTurn))},
		{"cafe", newMemory("Meet at the Café Müller on Friday", withType(driver.TypeEvent))},
		{"cosine", newMemory("search vector embeddings with cosine similarity", withPool(driver.PoolKnowledge), withType(driver.TypeLesson))},
		{"config", newMemory("configuration files are configured by the config loader", withNamespace("project:alpha"), withType(driver.TypeNote))},
		{"far", newMemory("alpha one two three beta", withStatus(driver.StatusArchived))},
		{"close", newMemory("beta alpha", withStatus(driver.StatusQuarantined))},
		{"zebra3", newMemory("zebra zebra zebra")},
		{"zebra1", newMemory("zebra crossing near the old market square with many pedestrians walking", withPool(driver.PoolRaw), withType(driver.TypeDocument))},
		{"conference", newMemory("the conference call moved to Tuesday", withNamespace("user:bob"))},
		{"gems", newMemory("crimson emerald sapphire")},
		{"pebbles", newMemory("crimson pebble pebble pebble emerald pebble pebble pebble sapphire")},
		{"quokka1", newMemory("quokka habitat survey")},
		{"quokka2", newMemory("quokka habitat survey", withNamespace("user:bob"), withStatus(driver.StatusArchived))},
		{"quokka3", newMemory("quokka habitat survey", withPool(driver.PoolKnowledge), withType(driver.TypeKnowledge), withStatus(driver.StatusQuarantined))},
	}
}

// seedCorpus inserts the corpus in one transaction and returns ids by
// document name.
func seedCorpus(t testing.TB, f *fixture) map[string]int64 {
	t.Helper()
	return insertDocs(t, f, keywordCorpus())
}

// insertDocs inserts docs in one transaction and returns ids by document
// name.
func insertDocs(t testing.TB, f *fixture, docs []corpusDoc) map[string]int64 {
	t.Helper()
	ids := make(map[string]int64, len(docs))
	f.update(t, func(tx driver.Tx) error {
		for _, d := range docs {
			if err := tx.Insert(d.m); err != nil {
				return err
			}
			ids[d.name] = d.m.ID
		}
		return nil
	})
	return ids
}

// idsOf maps document names to ids.
func idsOf(ids map[string]int64, names ...string) []int64 {
	out := make([]int64, len(names))
	for i, n := range names {
		id, ok := ids[n]
		if !ok {
			panic("backendtest: no corpus document " + n)
		}
		out[i] = id
	}
	return out
}

// sameSet reports whether a and b hold the same ids, in any order.
func sameSet(a, b []int64) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// sorted returns a sorted copy of ids.
func sorted(ids []int64) []int64 {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

func testScan(t *testing.T, f *fixture) {
	ids := seedCorpus(t, f)
	all := make([]int64, 0, len(ids))
	for _, id := range ids {
		all = append(all, id)
	}
	all = sorted(all)

	for _, c := range []struct {
		name string
		flt  driver.Filter
		want []string // nil: every document
	}{
		{"no filter", driver.Filter{}, nil},
		{"namespace", driver.Filter{Namespaces: []string{"user:bob"}}, []string{"bob", "conference", "quokka2"}},
		{"two namespaces", driver.Filter{Namespaces: []string{"user:bob", "project:alpha"}}, []string{"bob", "bench", "config", "conference", "quokka2"}},
		{"pool", driver.Filter{Pools: []driver.Pool{driver.PoolRaw}}, []string{"bench", "zebra1"}},
		{"status", driver.Filter{Statuses: []driver.Status{driver.StatusArchived, driver.StatusQuarantined}}, []string{"far", "close", "quokka2", "quokka3"}},
		{"type", driver.Filter{Types: []driver.Type{driver.TypeEvent, driver.TypeLesson}}, []string{"bob", "cafe", "cosine"}},
		{"all fields", driver.Filter{Namespaces: []string{"default"}, Pools: []driver.Pool{driver.PoolKnowledge}, Statuses: []driver.Status{driver.StatusQuarantined}, Types: []driver.Type{driver.TypeKnowledge}}, []string{"quokka3"}},
		{"empty namespace list", driver.Filter{Namespaces: []string{}}, []string{}},
		{"no match", driver.Filter{Namespaces: []string{"user:nobody"}}, []string{}},
	} {
		want := all
		if c.want != nil {
			want = sorted(idsOf(ids, c.want...))
		}
		got := f.scanIDs(t, driver.ScanOptions{Filter: c.flt})
		if !slices.Equal(got, want) {
			t.Errorf("Scan(%s) = %v, want %v in ascending order", c.name, got, want)
		}
	}

	// Paging with AfterID and Limit visits every id once, in order.
	var paged []int64
	after := int64(0)
	for range len(all) + 1 {
		page := f.scanIDs(t, driver.ScanOptions{AfterID: after, Limit: 4})
		if len(page) > 4 {
			t.Fatalf("Scan with Limit 4 returned %d memories", len(page))
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		after = page[len(page)-1]
	}
	if !slices.Equal(paged, all) {
		t.Errorf("paging with AfterID and Limit 4 visited %v, want %v", paged, all)
	}
	if got := f.scanIDs(t, driver.ScanOptions{AfterID: all[2], Limit: 2, Filter: driver.Filter{Statuses: []driver.Status{driver.StatusActive}}}); len(got) != 2 || got[0] <= all[2] {
		t.Errorf("Scan with AfterID %d, Limit 2 and a filter = %v", all[2], got)
	}

	// Scan yields full current versions and stops at fn's error.
	stop := errors.New("stop here")
	var n int
	f.view(t, func(tx driver.ReadTx) error {
		err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			n++
			if want, _ := tx.Get(m.ID, 0); want != nil {
				if d := diffMemory(want, m); len(d) > 0 {
					t.Errorf("Scan and Get disagree on %d:\n  %s", m.ID, strings.Join(d, "\n  "))
				}
			}
			if n == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) {
			t.Errorf("Scan whose fn fails returned %v, want fn's error", err)
		}
		return nil
	})
	if n != 3 {
		t.Errorf("Scan called fn %d times after it failed on the 3rd, want 3", n)
	}
}

// testDeleteScrubsFiles checks the forget guarantee (README, "Forgetting and the audit log"): after a
// Delete and Close, no file of the store holds the deleted content, neither
// verbatim nor its distinctive word.
func testDeleteScrubsFiles(t *testing.T, f *fixture) {
	const secret = "zqxjkvbw7secret"
	v1 := newMemory("the vault passphrase is " + secret + " until March")
	keep := newMemory("an unrelated memory that stays")
	f.insert(t, v1, keep)
	v2 := nextVersion(v1, "the vault passphrase is "+secret+" and it was rotated")
	f.put(t, v2)
	f.forget(t, v1.ID)
	f.noteForgotten(v1.ID, v1.Content)
	f.close(t)

	dir := filepath.Dir(f.path)
	needles := []string{v1.Content, v2.Content, secret}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(data, []byte(n)) {
				rel, _ := filepath.Rel(dir, p)
				t.Errorf("after Delete and Close, store file %s still contains %q", rel, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the store's files: %v", err)
	}
	f.open(t)
	if d := diffMemory(keep, f.get(t, keep.ID, 0)); len(d) > 0 {
		t.Errorf("the memory kept beside a deleted one:\n  %s", strings.Join(d, "\n  "))
	}
}

// testErasureReport: a backend that says what its deletes leave
// (driver.ErasureReporter) says something after a delete, in sentences,
// without error; and when it says nothing is left (no pending, nothing out
// of reach), no file of the store holds the deleted content after Close.
func testErasureReport(t *testing.T, f *fixture) {
	r, ok := f.b.(driver.ErasureReporter)
	if !ok {
		t.Logf("%s does not implement driver.ErasureReporter; nothing to check", f.h.Name)
		return
	}
	const secret = "zqxjkvbw7erasure"
	m := newMemory("the gate code is " + secret)
	f.insert(t, m)
	f.forget(t, m.ID)
	er, err := r.Erasure(context.Background())
	if err != nil {
		t.Fatalf("Erasure after a delete: %v", err)
	}
	lines := slices.Concat(er.Done, er.Pending, er.OutOfReach)
	if len(lines) == 0 {
		t.Fatal("Erasure after a delete says nothing")
	}
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			t.Errorf("Erasure has an empty line: %q", lines)
		}
	}
	if len(er.Pending) > 0 || len(er.OutOfReach) > 0 {
		return
	}
	f.close(t)
	dir := filepath.Dir(f.path)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte(secret)) {
			t.Errorf("Erasure says nothing is left (%q), but %s holds the deleted content", er.Done, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f.open(t)
}
