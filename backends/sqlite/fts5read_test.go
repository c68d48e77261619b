package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/memos-go/memos/core/backendtest"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
)

// ftsWords is the vocabulary of TestFTSPostings: terms that share
// prefixes (so that pages hold prefix-compressed terms), inflections that
// share a stem, and other scripts and diacritics.
var ftsWords = strings.Fields("a ab abc abcd abcde abd abe b ba bab babe running runs ran " +
	"café cafe naïve NAÏVE 東京 京都 straße strasse ωmega zebra zebras x1 x10 x100")

// TestFTSPostings checks the postings decoded from FTS5's records
// (fts5read.go) against the fts5vocab instance table, for every term of
// random stores: inserts, content updates and deletes in several
// transactions (several segments), with and without secure-delete, small and default leaf pages (doclists
// over many pages), big doclists, and incremental merges, automerge and
// optimize between them. Every term must decode (no fallback) to exactly
// the rows and instance counts FTS5 reports.
func TestFTSPostings(t *testing.T) {
	ctx := context.Background()
	ms, _, err := backendtest.BenchWorkload(400)
	if err != nil {
		t.Fatal(err)
	}
	// What the stores held, over all cases: several segments, and input
	// segments of an unfinished merge (their first pages merged away).
	var several, trimmed int
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp("", "fts5read")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		d, err := Open(ctx, Config{Path: filepath.Join(dir, "memory.db")})
		if err != nil {
			rt.Fatal(err)
		}
		defer d.Close()
		fts := func(cmd string, arg any) {
			if _, err := d.w.ExecContext(ctx, `INSERT INTO memories_fts (memories_fts, rank) VALUES (?, ?)`, cmd, arg); err != nil {
				rt.Fatalf("%s %v: %v", cmd, arg, err)
			}
		}
		if pgsz := rapid.SampledFrom([]int{32, 64, 300, 4050}).Draw(rt, "pgsz"); pgsz != 4050 {
			fts("pgsz", pgsz)
		}
		fts("automerge", rapid.SampledFrom([]int{0, 2, 4}).Draw(rt, "automerge"))
		// Without secure-delete a delete or update leaves delete markers
		// in newer segments, hiding the row's entries in older ones.
		fts("secure-delete", rapid.IntRange(0, 1).Draw(rt, "secure-delete"))
		content := func(label string) string {
			n := rapid.IntRange(1, 30).Draw(rt, label+" words")
			if rapid.IntRange(0, 9).Draw(rt, label+" long") == 0 {
				n += 300
			}
			seed := rapid.Uint64().Draw(rt, label+" seed")
			var b strings.Builder
			for i := range n {
				seed = seed*6364136223846793005 + 1442695040888963407
				k := int(seed>>33) % len(ftsWords)
				if i%3 == 0 {
					k = int(seed>>40) % 4 // the first few words are common
				}
				b.WriteString(ftsWords[k])
				b.WriteString([]string{" ", ", ", "-"}[int(seed>>20)%3])
			}
			return b.String()
		}
		var live []int64
		next := 0
		for step := range rapid.IntRange(1, 5).Draw(rt, "steps") {
			err := d.Update(ctx, func(tx driver.Tx) error {
				ops := rapid.IntRange(1, 40).Draw(rt, "ops")
				if rapid.IntRange(0, 5).Draw(rt, "bulk") == 0 {
					ops += 300 // a big doclist at default pages
				}
				for range ops {
					switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
					case (op < 6 || len(live) == 0) && next < len(ms):
						m := *ms[next]
						next++
						m.Content = content("insert")
						if err := tx.Insert(&m); err != nil {
							return err
						}
						live = append(live, m.ID)
					case len(live) == 0:
					case op < 8:
						m, err := tx.Get(live[rapid.IntRange(0, len(live)-1).Draw(rt, "update")], 0)
						if err != nil {
							return err
						}
						m.Content = content("update")
						m.Version++
						if err := tx.Put(m); err != nil {
							return err
						}
					default:
						i := rapid.IntRange(0, len(live)-1).Draw(rt, "delete")
						if err := tx.Delete(live[i]); err != nil {
							return err
						}
						live = slices.Delete(live, i, i+1)
					}
				}
				return nil
			})
			if err != nil {
				rt.Fatal(err)
			}
			switch rapid.IntRange(0, 5).Draw(rt, fmt.Sprint("after step ", step)) {
			case 0:
				fts("merge", rapid.IntRange(1, 20).Draw(rt, "merge pages")) // may stop in the middle
			case 1:
				fts("merge", -rapid.IntRange(1, 20).Draw(rt, "merge pages"))
			case 2:
				if _, err := d.w.ExecContext(ctx, `INSERT INTO memories_fts (memories_fts) VALUES ('optimize')`); err != nil {
					rt.Fatal(err)
				}
			}
			segs := checkFTSPostings(rt, d)
			if len(segs) > 1 {
				several++
			}
			if slices.ContainsFunc(segs, func(s ftsSegment) bool { return s.first > 1 }) {
				trimmed++
			}
		}
	})
	// The random stores need not have both (with few cases they often
	// miss a merge under way): TestFTSPostingsMidMerge always has them.
	t.Logf("stores checked with several segments: %d, with a merge under way: %d", several, trimmed)
}

// TestFTSPostingsMidMerge checks the decoded postings on a store that
// always has what the random stores of TestFTSPostings may miss: several
// segments (small leaf pages, no automerge, four transactions, updates and
// deletes among them) and then an incremental merge stopped halfway (its
// input segments' first pages merged away), then finished.
func TestFTSPostingsMidMerge(t *testing.T) {
	ctx := context.Background()
	d, ms := workloadStore(t, 200, Config{})
	fts := func(cmd string, arg any) {
		t.Helper()
		if _, err := d.w.ExecContext(ctx, `INSERT INTO memories_fts (memories_fts, rank) VALUES (?, ?)`, cmd, arg); err != nil {
			t.Fatalf("%s %v: %v", cmd, arg, err)
		}
	}
	fts("pgsz", 64)
	fts("automerge", 0)
	fts("secure-delete", 0)
	var ids []int64
	for step := range 4 {
		err := d.Update(ctx, func(tx driver.Tx) error {
			for i := step * 50; i < (step+1)*50; i++ {
				m := *ms[i]
				var b strings.Builder
				for k := range 5 + i%23 {
					b.WriteString(ftsWords[(i*7+k*k)%len(ftsWords)] + " ")
				}
				m.Content = b.String()
				if err := tx.Insert(&m); err != nil {
					return err
				}
				ids = append(ids, m.ID)
			}
			if step > 0 { // an update and a delete of rows in older segments
				m, err := tx.Get(ids[step*3], 0)
				if err != nil {
					return err
				}
				m.Content = "zebra zebras café"
				m.Version++
				if err := tx.Put(m); err != nil {
					return err
				}
				return tx.Delete(ids[step*3+1])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if segs := checkFTSPostings(t, d); len(segs) < 4 {
		t.Fatalf("%d segments after four transactions without automerge; want 4", len(segs))
	}
	fts("merge", 3)
	segs := checkFTSPostings(t, d)
	if !slices.ContainsFunc(segs, func(s ftsSegment) bool { return s.first > 1 }) {
		t.Fatalf("no segment trimmed by a merge stopped after 3 pages: %+v", segs)
	}
	fts("merge", 10000)
	checkFTSPostings(t, d)
}

// checkFTSPostings compares the decoded postings of every term of d's
// index, and of terms that are not in it, with the fts5vocab tables, and
// returns the index's segments.
func checkFTSPostings(t interface {
	Helper()
	Fatalf(string, ...any)
}, d *DB) []ftsSegment {
	t.Helper()
	ctx := context.Background()
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer tx.Rollback()
	var structure []byte
	if err := tx.QueryRowContext(ctx, qFTSRecord, ftsStructureID).Scan(&structure); err != nil {
		t.Fatalf("structure: %v", err)
	}
	f := d.newFTSReader(ctx, tx, structure)
	if f == nil {
		t.Fatalf("structure %x not understood", structure)
	}
	want := map[string][]posting{}
	rows, err := tx.QueryContext(ctx, `SELECT term, doc, count(*) FROM memories_fts_instance GROUP BY term, doc ORDER BY term, doc`)
	if err != nil {
		t.Fatalf("%v", err)
	}
	for rows.Next() {
		var term string
		var p posting
		if err := rows.Scan(&term, &p.id, &p.freq); err != nil {
			t.Fatalf("%v", err)
		}
		want[term] = append(want[term], p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatalf("%v", err)
	}
	check := func(term string) {
		got, ok, err := f.postings(term, int64(len(want[term])))
		if err != nil || !ok {
			t.Fatalf("term %q (structure %x): not decoded (%v)", term, structure, err)
		}
		if !slices.Equal(got, want[term]) && len(got)+len(want[term]) > 0 {
			t.Fatalf("term %q (structure %x):\n got %v\nwant %v", term, structure, got, want[term])
		}
	}
	for term := range want {
		check(term)
		check(term + "q")               // not in the index, after term
		check(term[:len(term)-1] + "!") // nor this one, before it
	}
	check("")
	check("\xff")
	return f.segs
}

// TestFTSFallback checks that records not as fts5read.go expects them (an
// unknown structure record, a page cut short) make the two-phase search
// read the postings from the fts5vocab table, with FTS5's result.
func TestFTSFallback(t *testing.T) {
	ctx := context.Background()
	d, ms := weatherNotes(t)
	backendtest.InsertAll(t, d, ms)
	q := &query.Or{Children: []query.Node{&query.Term{Text: "zebra"}, &query.Term{Text: "weather"}, &query.Term{Text: "team"}}}
	want, err := d.searchPlain(ctx, q.String(), "", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		tamper   func(id int64, b []byte) []byte
		fallback bool
	}{
		{"as stored", nil, false},
		{"unknown structure", func(id int64, b []byte) []byte {
			if id == ftsStructureID {
				b[4] = 0xfe // neither a level count nor the V2 marker
				return b
			}
			return b
		}, true},
		{"pages cut short", func(id int64, b []byte) []byte {
			if id != ftsStructureID {
				return b[:3]
			}
			return b
		}, true},
		{"page footers beyond the page", func(id int64, b []byte) []byte {
			if id != ftsStructureID {
				b[2], b[3] = 0xff, 0xff
			}
			return b
		}, true},
	} {
		d.ftsTamper = c.tamper
		decoded, fellBack := d.ftsReads[0].Load(), d.ftsReads[1].Load()
		before := d.pruneCounts[pruneProved].Load()
		got, err := d.SearchKeyword(ctx, q, driver.Filter{}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if d.pruneCounts[pruneProved].Load() == before {
			t.Fatalf("%s: not answered in two phases", c.name)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s:\n got %s\nwant %s", c.name, backendtest.FormatHits(got), backendtest.FormatHits(want))
		}
		n, m := d.ftsReads[0].Load()-decoded, d.ftsReads[1].Load()-fellBack
		if c.fallback && (n != 0 || m == 0) || !c.fallback && (n == 0 || m != 0) {
			t.Fatalf("%s: %d terms decoded, %d read from fts5vocab", c.name, n, m)
		}
	}
}
