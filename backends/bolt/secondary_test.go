package bolt

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/memos-go/memos/core/driver"
)

// readersDump renders what the secondary indexes answer for a store's
// memories, and what a scan says they must answer.
func readersDump(t *testing.T, d *DB) (got, want string) {
	t.Helper()
	f := driver.Filter{Namespaces: []string{driver.DefaultNamespace, "team:web"}, Statuses: driver.Statuses, Types: driver.Types}
	err := d.View(context.Background(), func(tx driver.ReadTx) error {
		var all []*driver.Memory
		if err := tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
			all = append(all, m)
			return nil
		}); err != nil {
			return err
		}
		slices.SortFunc(all, driver.CompareRank)
		for _, m := range all {
			want += fmt.Sprintf("rank %d\n", m.ID)
		}
		if err := tx.(driver.RankReader).Ranked(f, func(m *driver.Memory) error {
			got += fmt.Sprintf("rank %d\n", m.ID)
			return nil
		}); err != nil {
			return err
		}
		slices.SortFunc(all, func(a, b *driver.Memory) int { return int(a.ID - b.ID) })
		for _, m := range all {
			if m.UpdatedAt.After(testTime) {
				want += fmt.Sprintf("updated %d\n", m.ID)
			}
		}
		var upd []int64
		if err := tx.(driver.UpdateReader).UpdatedAfter(f.Namespaces, testTime, func(m *driver.Memory) error {
			upd = append(upd, m.ID)
			return nil
		}); err != nil {
			return err
		}
		slices.Sort(upd)
		for _, id := range upd {
			got += fmt.Sprintf("updated %d\n", id)
		}
		for _, m := range all {
			if m.Session == "s" && m.Namespace == driver.DefaultNamespace {
				want += fmt.Sprintf("session %d\n", m.ID)
			}
		}
		ms, err := tx.(driver.SessionReader).Session(driver.DefaultNamespace, "s")
		if err != nil {
			return err
		}
		slices.SortFunc(ms, func(a, b driver.SessionMember) int { return int(a.ID - b.ID) })
		for _, m := range ms {
			got += fmt.Sprintf("session %d\n", m.ID)
		}
		g, w, err := countsDump(tx, all)
		got, want = got+g, want+w
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, want
}

// countedWrites makes the writes that move counts (counts.go) in a store
// of memories 1–50: new versions in other facets and namespaces (with
// their edges), edges, a self-loop, deletes of linked memories, and audit
// entries about one memory, none, and batches.
func countedWrites(tx driver.Tx) error {
	for _, e := range [][2]int64{{1, 2}, {2, 3}, {3, 1}, {4, 4}, {5, 6}, {6, 7}, {7, 8}, {9, 9}, {10, 1}} {
		if err := tx.Link(driver.Edge{From: e[0], To: e[1], Type: driver.EdgeRelatesTo, Weight: 1, CreatedAt: testTime}); err != nil {
			return err
		}
	}
	// Replacing an edge counts it once.
	if err := tx.Link(driver.Edge{From: 1, To: 2, Type: driver.EdgeRelatesTo, Weight: 0.5, CreatedAt: testTime}); err != nil {
		return err
	}
	if err := tx.Unlink(2, 3, driver.EdgeRelatesTo); err != nil {
		return err
	}
	for i, id := range []int64{1, 4, 11, 12, 13} {
		m, err := tx.Get(id, 0)
		if err != nil {
			return err
		}
		m.Version++
		m.Namespace = "team:web"
		m.Status = []driver.Status{driver.StatusArchived, driver.StatusQuarantined, driver.StatusActive}[i%3]
		m.Embedding = driver.Embedding{Model: "m", Vector: []float32{1, 0, 0}}
		if err := tx.Put(m); err != nil {
			return err
		}
	}
	for _, id := range []int64{3, 9, 20} {
		if err := tx.Delete(id); err != nil {
			return err
		}
	}
	for i, a := range []driver.AuditEntry{
		{MemoryID: 5, Detail: `{"version":1}`},
		{Detail: `{"memories":[{"id":6},{"id":7}]}`},
		{Detail: `{"n":1}`},
		{MemoryID: 6},
		{Detail: `{"memories":[{"id":7},{"id":30}]}`},
	} {
		a.Time, a.Action, a.Hash = testTime, "remember", fmt.Sprint(i)
		if err := tx.AppendAudit(&a); err != nil {
			return err
		}
	}
	return nil
}

// countsDump renders what the counts and the audit indexes answer (counts.go)
// for the memories all, and what a scan of them, their edges and the log
// says they must answer.
func countsDump(tx driver.ReadTx, all []*driver.Memory) (got, want string, err error) {
	const model, dim = "m", 3
	facets := map[string]int{}
	nsOf := map[int64]string{}
	var edges []driver.Edge
	for _, m := range all {
		nsOf[m.ID] = m.Namespace
		emb := 0
		if m.Status == driver.StatusActive && m.Embedding.Model == model && m.Embedding.Dim() == dim {
			emb = 1
		}
		k := fmt.Sprintf("facet %s %s %s %s", m.Namespace, m.Pool, m.Type, m.Status)
		facets[k+" memories"]++
		facets[k+" versions"] += m.Version
		facets[k+" embedded"] += emb
		es, err := tx.Edges(m.ID)
		if err != nil {
			return "", "", err
		}
		for _, e := range es {
			if e.From == m.ID {
				edges = append(edges, e)
			}
		}
	}
	c := tx.(driver.Counter)
	fcs, err := c.Count(driver.CountOptions{Model: model, Dim: dim})
	if err != nil {
		return "", "", err
	}
	counted := map[string]int{}
	for _, fc := range fcs {
		k := fmt.Sprintf("facet %s %s %s %s", fc.Namespace, fc.Pool, fc.Type, fc.Status)
		counted[k+" memories"] += fc.Memories
		counted[k+" versions"] += fc.Versions
		counted[k+" embedded"] += fc.Embedded
	}
	render := func(m map[string]int) string {
		var lines []string
		for k, n := range m {
			if n != 0 {
				lines = append(lines, fmt.Sprintf("%s %d\n", k, n))
			}
		}
		slices.Sort(lines)
		return strings.Join(lines, "")
	}
	want, got = render(facets), render(counted)
	for _, nss := range [][]string{nil, {driver.DefaultNamespace}, {"team:web"}, {driver.DefaultNamespace, "team:web"}} {
		n, err := c.CountEdges(nss)
		if err != nil {
			return "", "", err
		}
		w := 0
		for _, e := range edges {
			if nss == nil || (slices.Contains(nss, nsOf[e.From]) && slices.Contains(nss, nsOf[e.To])) {
				w++
			}
		}
		want += fmt.Sprintf("edges of %q: %d\n", nss, w)
		got += fmt.Sprintf("edges of %q: %d\n", nss, n)
	}
	var log []driver.AuditEntry
	if err := tx.(driver.AuditReader).Audit(func(e driver.AuditEntry) error { log = append(log, e); return nil }); err != nil {
		return "", "", err
	}
	ids := []int64{0}
	for _, m := range all {
		ids = append(ids, m.ID)
	}
	for _, id := range ids {
		for _, e := range log {
			if e.MemoryID == id {
				want += fmt.Sprintf("audit of %d: %d\n", id, e.Seq)
			}
		}
		for _, e := range log {
			if slices.Contains(driver.BoundIDs(&e), id) {
				want += fmt.Sprintf("audit bound %d: %d\n", id, e.Seq)
			}
		}
		if err := tx.(driver.AuditMemoryReader).AuditOf(id, func(e driver.AuditEntry) error {
			got += fmt.Sprintf("audit of %d: %d\n", id, e.Seq)
			return nil
		}); err != nil {
			return "", "", err
		}
		if err := tx.(driver.AuditBindingReader).AuditBound(id, func(e driver.AuditEntry) error {
			got += fmt.Sprintf("audit bound %d: %d\n", id, e.Seq)
			return nil
		}); err != nil {
			return "", "", err
		}
	}
	return got, want, nil
}

// TestSecondaryBuiltAtOpen checks that Open builds the secondary indexes of
// a store that lacks them (one written by a memos that did not keep them),
// and rebuilds them when a memos that does not know them wrote to the store
// since they were last brought up to date.
func TestSecondaryBuiltAtOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "store")
	d, err := Open(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Update(ctx, func(tx driver.Tx) error {
		for i := range 50 {
			m := testMemory(fmt.Sprintf("memory %d", i))
			m.Significance = 1 + i%3
			m.UpdatedAt = testTime.Add(time.Duration(i%4) * 700 * time.Millisecond) // some in testTime's second, after it
			if i%2 == 0 {
				m.Session = "s"
			}
			if err := tx.Insert(m); err != nil {
				return err
			}
		}
		if err := tx.Touch([]int64{3, 4, 5}, testTime); err != nil {
			return err
		}
		return countedWrites(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readersDump(t, d); got != want {
		t.Fatalf("secondary indexes:\n%s\nwant\n%s", got, want)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(path, StoreFile)
	raw := func(fn func(tx *bbolt.Tx) error) {
		t.Helper()
		bdb, err := bbolt.Open(file, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := bdb.Update(fn); err != nil {
			t.Fatal(err)
		}
		if err := bdb.Close(); err != nil {
			t.Fatal(err)
		}
	}
	reopen := func(stage string) {
		t.Helper()
		d, err := Open(ctx, Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if got, want := readersDump(t, d); got != want {
			t.Fatalf("%s: secondary indexes:\n%s\nwant\n%s", stage, got, want)
		}
	}
	// As a memos without secondary indexes leaves a store.
	raw(func(tx *bbolt.Tx) error {
		for _, b := range secondaryBuckets {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bktSys).Delete(keySecondary)
	})
	reopen("built")
	// A write by such a memos: the store's sequence number moved past the
	// indexes' (here the indexes lose entries too, as they would miss its
	// writes).
	raw(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket(bktRank); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bktRank); err != nil {
			return err
		}
		sys := tx.Bucket(bktSys)
		return sys.Put(keySeq, u64(getU64(sys, keySeq)+1))
	})
	reopen("rebuilt")
}

// TestKeyFieldOrder checks that the key fields sort bytewise as the values
// they encode, both ways, that they are self-delimiting, and that times
// decode to the same instant, across the edges of their encodings.
func TestKeyFieldOrder(t *testing.T) {
	ints := []int64{math.MinInt64, -1 << 40, -256, -1, 0, 1, 5, 10, 255, 256, 65535, 1 << 40, math.MaxInt64}
	var times []time.Time
	for _, tm := range []time.Time{
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), {}, time.Time{}.Add(time.Nanosecond), time.Time{}.Add(time.Hour),
		time.Unix(0, math.MinInt64).Add(-time.Nanosecond), time.Unix(0, math.MinInt64), time.Unix(0, -1), time.Unix(0, 0),
		testTime, testTime.Add(time.Nanosecond), time.Unix(0, math.MaxInt64), time.Unix(0, math.MaxInt64).Add(time.Nanosecond),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	} {
		times = append(times, tm)
	}
	for _, desc := range []bool{false, true} {
		for i, a := range ints {
			for j, b := range ints {
				ka, kb := appendIntKey(nil, a, desc), appendIntKey(nil, b, desc)
				want := cmpSign(i, j, desc)
				if got := bytes.Compare(append(ka, 0xff), append(kb, 0)); (want != 0 && got != want) || keyFieldLen(ka, 'i', desc) != len(ka) {
					t.Errorf("int %d vs %d desc %v: %d, want %d (%x %x)", a, b, desc, got, want, ka, kb)
				}
				if a >= 0 && b >= 0 {
					ua, ub := appendUint(nil, uint64(a), desc), appendUint(nil, uint64(b), desc)
					if got := bytes.Compare(append(ua, 0xff), append(ub, 0)); (want != 0 && got != want) || keyFieldLen(ua, 'u', desc) != len(ua) {
						t.Errorf("uint %d vs %d desc %v: %d, want %d", a, b, desc, got, want)
					}
				}
			}
		}
		for i, a := range times {
			ka := appendTimeKey(nil, a, desc)
			if keyFieldLen(ka, 't', desc) != len(ka) {
				t.Errorf("time %v: length %d, field length %d", a, len(ka), keyFieldLen(ka, 't', desc))
			}
			if !desc {
				if got, ok := decodeTimeKey(ka); !ok || !got.Equal(a) {
					t.Errorf("time %v decodes to %v, %v", a, got, ok)
				}
			}
			for j, b := range times {
				kb := appendTimeKey(nil, b, desc)
				want := cmpSign(i, j, desc)
				if got := bytes.Compare(append(ka, 0xff), append(kb, 0)); want != 0 && got != want {
					t.Errorf("time %v vs %v desc %v: %d, want %d", a, b, desc, got, want)
				}
			}
		}
	}
	for i := range times[1:] {
		if !times[i].Before(times[i+1]) {
			t.Fatalf("times %d and %d out of order", i, i+1)
		}
	}
}

// cmpSign is the order of the i-th and j-th of a sorted list (reversed when
// desc).
func cmpSign(i, j int, desc bool) int {
	c := cmp.Compare(i, j)
	if desc {
		c = -c
	}
	return c
}

// TestDocIDOrder checks that docID sorts as the ids and parses back.
func TestDocIDOrder(t *testing.T) {
	ids := []int64{0, 1, 9, 61, 62, 63, 3843, 3844, 100000, 1 << 40, math.MaxInt64}
	for i, a := range ids {
		got, err := parseDocID(docID(a))
		if err != nil || got != a {
			t.Errorf("parseDocID(docID(%d) = %q) = %d, %v", a, docID(a), got, err)
		}
		for j, b := range ids {
			if c := cmp.Compare(docID(a), docID(b)); c != cmp.Compare(i, j) {
				t.Errorf("docID(%d) = %q vs docID(%d) = %q: %d", a, docID(a), b, docID(b), c)
			}
		}
	}
	for _, bad := range []string{"", "1", "2a", "1-", "0", "Bzzzzzzzzzzz"} {
		if _, err := parseDocID(bad); err == nil {
			t.Errorf("parseDocID(%q) accepted", bad)
		}
	}
}

// TestSessTimes checks that the value of a sess entry decodes to the same
// instants, whether created_at is valid_from or not.
func TestSessTimes(t *testing.T) {
	times := []time.Time{{}, time.Date(-5, 1, 1, 0, 0, 0, 7, time.UTC), time.Unix(0, math.MinInt64), time.Unix(-1, 999999999),
		testTime, testTime.Add(time.Nanosecond).In(time.FixedZone("x", 3600)), time.Unix(0, math.MaxInt64), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}
	for _, vf := range times {
		for _, ca := range times {
			v := appendSessTimes(nil, vf, ca)
			gvf, gca, ok := decodeSessTimes(v)
			if !ok || !gvf.Equal(vf) || !gca.Equal(ca) {
				t.Errorf("%v, %v: decoded %v, %v, %v", vf, ca, gvf, gca, ok)
			}
			if _, _, ok := decodeSessTimes(v[:len(v)-1]); ok && !vf.Equal(ca) {
				t.Errorf("%v, %v: a truncated value decodes", vf, ca)
			}
		}
	}
}
