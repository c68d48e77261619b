package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// TestIndexedReadersMatchScans checks that searches as of a past time and
// bootstrap packs read through the backend's indexes (UpdateReader and
// RankReader, on every registered backend; postgres with
// MEMOS_TEST_PG_DSN) give exactly what the engine's scans of
// the scope give — the same hits, scores and origins, the same packs byte
// for byte — on a store with edits, forgets, accesses, lessons, several
// types, pools and statuses, and two namespaces.
func TestIndexedReadersMatchScans(t *testing.T) {
	for _, name := range core.BackendNames() {
		t.Run(name, func(t *testing.T) {
			testIndexedReadersMatchScans(t, openBackend(t, name, t.TempDir()))
		})
	}
}

// testIndexedReadersMatchScans runs engines with and without the optional
// readers side by side on b, which they share.
func testIndexedReadersMatchScans(t *testing.T, b core.Backend) {
	ctx := context.Background()
	t.Cleanup(func() { b.Close() })
	var clockMu sync.Mutex
	clock, ticking := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), true
	now := func() time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		if ticking {
			clock = clock.Add(time.Minute)
		}
		return clock
	}
	tick := func(on bool) time.Time {
		clockMu.Lock()
		defer clockMu.Unlock()
		ticking = on
		return clock
	}
	open := func(hide bool, ns string, track bool) *core.Engine {
		emb, err := hash.Open(ctx, hash.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var bk core.Backend = b
		if hide {
			bk = hideSessions{b}
		}
		e, err := core.Open(ctx, core.Options{Backend: bk, Embedder: emb, Now: now, Namespace: ns,
			Search: core.SearchConfig{DisableAccessTracking: !track}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	// The writers record accesses; the engines compared do not, so that
	// their searches leave the access statistics alike for both.
	writer, writerA := open(false, "", true), open(false, "project:a", true)
	indexed, scanned := open(false, "", false), open(true, "", false)
	indexedA, scannedA := open(false, "project:a", false), open(true, "project:a", false)

	words := []string{"zoo", "lion", "penguin", "garden", "violin", "recipe", "train", "museum"}
	types := []core.Type{core.TypeFact, core.TypeEvent, core.TypePreference, core.TypeLesson, core.TypeTurn}
	var ms []*core.Memory
	var marks []time.Time // times between the rounds of writes
	for round := range 3 {
		marks = append(marks, now())
		for i := range 40 {
			e := writer
			if i%4 == 0 {
				e = writerA
			}
			score := float64(i%5) / 5
			in := core.Input{
				Content:      fmt.Sprintf("round %d note %d about the %s and the %s", round, i, words[i%len(words)], words[(i+round)%len(words)]),
				Type:         types[i%len(types)],
				Significance: 1 + (i+round)%4*3,
				TrustScore:   &score,
			}
			if i%6 == 0 {
				in.ValidFrom = marks[0].Add(time.Duration(i) * time.Hour) // some valid only later
			}
			m, err := e.Remember(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
		// Edits of earlier memories: content, significance, status; forgets.
		for j := round; j < len(ms); j += 9 {
			content := fmt.Sprintf("%s, revised in round %d about the %s", ms[j].Content, round, words[(j+3)%len(words)])
			sig := 1 + (j+round)%10
			p := core.Patch{Content: &content, Significance: &sig}
			switch j % 4 {
			case 1:
				archived := core.StatusArchived
				p.Status = &archived
			case 2:
				quarantined := core.StatusQuarantined
				p.Status = &quarantined
			}
			e := writer
			if ms[j].Namespace == "project:a" {
				e = writerA
			}
			if _, err := e.Update(ctx, ms[j].ID, p); err != nil {
				t.Fatal(err)
			}
		}
		if round > 0 {
			m := ms[round*13]
			e := writer
			if m.Namespace == "project:a" {
				e = writerA
			}
			if _, err := e.Forget(ctx, m.ID, ""); err != nil {
				t.Fatal(err)
			}
		}
		// Accesses (searches record them) that reorder the bootstrap pack.
		for _, w := range words[round : round+3] {
			for _, e := range []*core.Engine{writer, writerA} {
				if _, err := e.Search(ctx, core.SearchRequest{Query: w, Limit: 4}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	core.FlushAccesses(writer)
	core.FlushAccesses(writerA)
	accessed := 0
	for _, m := range ms {
		if got, err := writer.Get(ctx, m.ID); err == nil && got.AccessCount > 0 {
			accessed++
		}
	}
	if accessed < 5 {
		t.Fatalf("%d memories were accessed; the bootstrap order checks too little", accessed)
	}
	end := tick(false)
	marks = append(marks, end.Add(-30*time.Second), end)

	pairs := [][2]*core.Engine{{indexed, scanned}, {indexedA, scannedA}}
	rewound, quarantined := 0, 0
	for _, pair := range pairs {
		for _, asOf := range marks {
			for _, mode := range []core.Mode{core.ModeHybrid, core.ModeKeyword, core.ModeVector} {
				for _, w := range words {
					req := core.SearchRequest{Query: w + " " + words[(len(w))%len(words)], Mode: mode, AsOf: asOf, Limit: 8,
						IncludeQuarantined: len(w)%2 == 0}
					a, err := pair[0].Search(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					b, err := pair[1].Search(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					if ra, rb := render(a), render(b); ra != rb {
						t.Fatalf("%s as of %v, %q: indexed\n%s\nscanned\n%s", mode, asOf, req.Query, ra, rb)
					}
					for _, h := range a.Hits {
						if h.Memory.Status == core.StatusQuarantined {
							quarantined++
						}
					}
					now := req
					now.AsOf = time.Time{}
					cur, err := pair[0].Search(ctx, now)
					if err != nil {
						t.Fatal(err)
					}
					curScanned, err := pair[1].Search(ctx, now)
					if err != nil {
						t.Fatal(err)
					}
					if ra, rb := render(cur), render(curScanned); ra != rb {
						t.Fatalf("%s, %q (IncludeQuarantined %v): indexed\n%s\nscanned\n%s", mode, req.Query, req.IncludeQuarantined, ra, rb)
					}
					if render(cur) != render(a) {
						rewound++
					}
				}
			}
		}
		for _, req := range []core.PackRequest{
			{Bootstrap: true},
			{Bootstrap: true, Limit: 3, Lessons: 2},
			{Bootstrap: true, Limit: 200, Budget: 100000, Lessons: 50},
			{Bootstrap: true, Types: []core.Type{core.TypeFact, core.TypeLesson}, Budget: 4000},
			{Bootstrap: true, Types: []core.Type{core.TypeEvent}, Budget: 4000},
			{Bootstrap: true, Pools: []core.Pool{core.PoolKnowledge}, Budget: 4000},
			{Bootstrap: true, ValidAt: marks[1], Budget: 4000, Limit: 30},
			{Bootstrap: true, IncludeQuarantined: true, Lessons: -1},
		} {
			a, err := pair[0].ContextPack(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := pair[1].ContextPack(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Fatalf("bootstrap pack %+v: indexed\n%s\nscanned\n%s", req, ja, jb)
			}
			if len(a.Memories)+len(a.Lessons) == 0 {
				t.Fatalf("bootstrap pack %+v is empty; the comparison checks nothing", req)
			}
		}
	}
	if quarantined == 0 {
		t.Fatal("no search found a quarantined memory; the comparison of the review queue checks nothing")
	}
	if rewound < 20 {
		t.Fatalf("only %d searches as of a past time differ from the current ones; the comparison checks too little", rewound)
	}
}
