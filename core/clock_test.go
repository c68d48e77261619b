package core_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func TestSupersedeAndValidAt(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	berlin := remember(t, e, core.Input{Content: "Bob lives in Berlin", Type: core.TypeFact, Significance: 6,
		Entities: []string{"Bob"}, ValidFrom: day(2020, 3, 1)})
	lisbon, err := e.Supersede(ctx, berlin.ID, core.Input{Content: "Bob lives in Lisbon", ValidFrom: day(2024, 2, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if lisbon.Significance != 6 || lisbon.Type != core.TypeFact || !lisbon.ValidFrom.Equal(day(2024, 2, 1)) {
		t.Fatalf("the new memory did not inherit the old one's attributes: %+v", lisbon)
	}
	old, err := e.Get(ctx, berlin.ID)
	if err != nil {
		t.Fatal(err)
	}
	if old.Version != 2 || !old.ValidTo.Equal(day(2024, 2, 1)) || old.Content != berlin.Content {
		t.Fatalf("the old memory's interval was not closed: v%d valid to %s", old.Version, old.ValidTo)
	}
	es, _ := e.Edges(ctx, lisbon.ID)
	if len(es) != 1 || es[0].Type != core.EdgeSupersedes || es[0].From != lisbon.ID || es[0].To != berlin.ID {
		t.Fatalf("edges = %+v", es)
	}
	search := func(validAt time.Time) []int64 {
		res, err := e.Search(ctx, core.SearchRequest{Query: "where does bob live", ValidAt: validAt})
		if err != nil {
			t.Fatal(err)
		}
		return hitIDs(res)
	}
	if got := search(time.Time{}); fmt.Sprint(got) != fmt.Sprint([]int64{lisbon.ID}) {
		t.Fatalf("now: %v, want only Lisbon", got)
	}
	if got := search(day(2022, 1, 1)); fmt.Sprint(got) != fmt.Sprint([]int64{berlin.ID}) {
		t.Fatalf("2022: %v, want only Berlin", got)
	}
	if got := search(day(2019, 1, 1)); len(got) != 0 {
		t.Fatalf("2019: %v, want nothing", got)
	}
	// A supersession must start after the old memory did.
	if _, err := e.Supersede(ctx, lisbon.ID, core.Input{Content: "Bob lives in Porto", ValidFrom: day(2023, 1, 1)}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("supersede into the past: %v", err)
	}
	m, err := e.SetValidity(ctx, berlin.ID, day(2019, 6, 1), day(2024, 2, 1))
	if err != nil || m.Version != 3 || !m.ValidFrom.Equal(day(2019, 6, 1)) {
		t.Fatalf("set validity: %+v %v", m, err)
	}
	if got := search(day(2019, 7, 1)); fmt.Sprint(got) != fmt.Sprint([]int64{berlin.ID}) {
		t.Fatalf("mid-2019 after set-validity: %v", got)
	}
	if _, err := e.SetValidity(ctx, berlin.ID, day(2024, 1, 1), day(2023, 1, 1)); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("inverted interval: %v", err)
	}
}

func TestAsOfSeesTheVersionsOfThePast(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	m := remember(t, e, core.Input{Content: "the staging cluster runs on hetzner"})
	t1 := m.UpdatedAt
	moved := "the staging cluster moved to ovh"
	u, err := e.Update(ctx, m.ID, core.Patch{Content: &moved})
	if err != nil {
		t.Fatal(err)
	}
	later := remember(t, e, core.Input{Content: "hetzner invoices are archived"})
	for _, mode := range []core.Mode{core.ModeHybrid, core.ModeKeyword, core.ModeVector, core.ModeFTS} {
		res, err := e.Search(ctx, core.SearchRequest{Query: "staging hetzner", Mode: mode, AsOf: t1})
		if err != nil {
			t.Fatal(err)
		}
		got := hitIDs(res)
		if len(got) == 0 || got[0] != m.ID || res.Hits[0].Memory.Version != 1 || slices.Contains(got, later.ID) {
			t.Fatalf("%s as of %s: %v (first version %d), want memory %d at version 1 and not %d", mode, t1, got,
				res.Hits[0].Memory.Version, m.ID, later.ID)
		}
		res, err = e.Search(ctx, core.SearchRequest{Query: "staging ovh", Mode: mode, AsOf: t1})
		if err != nil {
			t.Fatal(err)
		}
		if mode == core.ModeFTS && len(res.Hits) != 0 {
			t.Fatalf("fts as of %s matched content written later: %v", t1, hitIDs(res))
		}
	}
	res, err := e.Search(ctx, core.SearchRequest{Query: "staging ovh", Mode: core.ModeFTS})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Memory.Version != u.Version {
		t.Fatalf("current search: %v %v", hitIDs(res), err)
	}
	x, err := e.Explain(ctx, core.SearchRequest{Query: "hetzner", Mode: core.ModeKeyword, AsOf: t1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range x.Candidates {
		if c.ID == m.ID && c.HistoryRank != 1 {
			t.Fatalf("the old version should be found in memory: %+v", c)
		}
		if c.ID == later.ID && c.Filtered == "" {
			t.Fatalf("a memory created after as-of was not filtered: %+v", c)
		}
	}
}

// peek returns the clock's next reading without taking it.
func (c *fixedClock) peek() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t.Add(time.Second)
}

// modelVersion is what the brute-force model knows of one version.
type modelVersion struct {
	version   int
	content   string
	status    core.Status
	from, to  time.Time
	updatedAt time.Time
}

// TestClocksAgainstModel writes random histories of versions, validity
// intervals, supersessions and status changes, then checks fts searches at
// random AsOf and ValidAt times against a brute-force model: the version
// current at AsOf (latest UpdatedAt not after it), active, whose interval
// contains ValidAt (default AsOf, else now), containing the word.
func TestClocksAgainstModel(t *testing.T) {
	words := []string{"apple", "river", "stone", "cloud", "tiger", "piano"}
	base := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	emb, err := hash.Open(context.Background(), hash.Config{Dim: 32})
	if err != nil {
		t.Fatal(err)
	}
	// One store serves every check; each check writes to a namespace of its
	// own, so it sees only its own memories (and the empty default one).
	ctx := context.Background()
	b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "m.db")})
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	root, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	check := 0
	rapid.Check(t, func(rt *rapid.T) {
		check++
		e, err := root.In(fmt.Sprintf("run:check-%d", check))
		if err != nil {
			rt.Fatal(err)
		}
		model := map[int64][]modelVersion{}
		var idList []int64
		record := func(m *core.Memory) {
			if _, ok := model[m.ID]; !ok {
				idList = append(idList, m.ID)
			}
			model[m.ID] = append(model[m.ID], modelVersion{m.Version, m.Content, m.Status, m.ValidFrom, m.ValidTo, m.UpdatedAt})
		}
		text := func(label string) string {
			n := rapid.IntRange(1, 3).Draw(rt, label+" words")
			var ws []string
			for i := range n {
				ws = append(ws, rapid.SampledFrom(words).Draw(rt, fmt.Sprintf("%s word %d", label, i)))
			}
			return fmt.Sprint(ws)
		}
		instant := func(label string) time.Time { // zero, or within ±3 days of the clock
			if rapid.Bool().Draw(rt, label+" zero") {
				return time.Time{}
			}
			return base.Add(time.Duration(rapid.IntRange(-72, 72).Draw(rt, label)) * time.Hour)
		}
		interval := func(label string) (time.Time, time.Time) {
			from, to := instant(label+" from"), instant(label+" to")
			if !from.IsZero() && !to.IsZero() && !to.After(from) {
				from, to = to, from
				if from.Equal(to) {
					to = time.Time{}
				}
			}
			return from, to
		}
		pick := func(label string) int64 { return rapid.SampledFrom(idList).Draw(rt, label) }
		last := func(id int64) modelVersion { vs := model[id]; return vs[len(vs)-1] }
		ops := rapid.IntRange(2, 10).Draw(rt, "ops")
		for i := range ops {
			op := rapid.IntRange(0, 4).Draw(rt, fmt.Sprintf("op %d", i))
			if len(idList) == 0 {
				op = 0
			}
			switch op {
			case 0:
				from, to := interval("remember")
				m, err := e.Remember(ctx, core.Input{Content: text("remember"), ValidFrom: from, ValidTo: to})
				if err != nil {
					rt.Fatal(err)
				}
				record(m)
			case 1:
				id, c := pick("update"), text("update")
				m, err := e.Update(ctx, id, core.Patch{Content: &c})
				if err != nil {
					rt.Fatal(err)
				}
				if m.Version != last(id).version {
					record(m)
				}
			case 2:
				id := pick("set validity")
				from, to := interval("set validity")
				m, err := e.SetValidity(ctx, id, from, to)
				if err != nil {
					rt.Fatal(err)
				}
				if m.Version != last(id).version {
					record(m)
				}
			case 3:
				id := pick("supersede")
				from := instant("supersede from")
				start := from
				if start.IsZero() {
					start = clk.peek() // now, as the engine will read it
				}
				nm, err := e.Supersede(ctx, id, core.Input{Content: text("supersede"), ValidFrom: from})
				prev := last(id)
				if !prev.from.IsZero() && !start.After(prev.from) {
					if !errors.Is(err, core.ErrInvalid) {
						rt.Fatalf("supersede from %s of a memory valid from %s: %v, want ErrInvalid", start, prev.from, err)
					}
					continue
				}
				if err != nil {
					rt.Fatal(err)
				}
				record(nm)
				if prev.to.IsZero() || prev.to.After(nm.ValidFrom) {
					old, err := e.Get(ctx, id)
					if err != nil {
						rt.Fatal(err)
					}
					if old.Version != prev.version+1 || old.Content != prev.content || !old.ValidTo.Equal(nm.ValidFrom) {
						rt.Fatalf("superseded memory %d: v%d valid to %s, want v%d valid to %s", id, old.Version, old.ValidTo, prev.version+1, nm.ValidFrom)
					}
					record(old)
				}
			case 4:
				id := pick("status")
				st := rapid.SampledFrom([]core.Status{core.StatusActive, core.StatusArchived}).Draw(rt, "status")
				m, err := e.Update(ctx, id, core.Patch{Status: &st})
				if err != nil {
					rt.Fatal(err)
				}
				if m.Version != last(id).version {
					record(m)
				}
			}
		}
		// Times worth asking about: every version's write time, a second
		// either side, and times before and after everything.
		var times []time.Time
		for _, vs := range model {
			for _, v := range vs {
				times = append(times, v.updatedAt, v.updatedAt.Add(-time.Second), v.updatedAt.Add(time.Second))
			}
		}
		sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
		for q := range 4 {
			word := rapid.SampledFrom(words).Draw(rt, fmt.Sprintf("query %d", q))
			var asOf time.Time
			if rapid.Bool().Draw(rt, fmt.Sprintf("query %d as of", q)) {
				asOf = rapid.SampledFrom(times).Draw(rt, fmt.Sprintf("query %d as-of time", q))
			}
			validAt := instant(fmt.Sprintf("query %d valid at", q))
			effective := validAt
			switch {
			case !effective.IsZero():
			case !asOf.IsZero():
				effective = asOf
			default:
				effective = clk.peek()
			}
			want := map[int64]int{}
			for id, vs := range model {
				var at *modelVersion
				for i := range vs {
					if asOf.IsZero() || !vs[i].updatedAt.After(asOf) {
						at = &vs[i]
					}
				}
				if at == nil || at.status != core.StatusActive {
					continue
				}
				m := core.Memory{ValidFrom: at.from, ValidTo: at.to}
				if !m.ValidAt(effective) || !slices.Contains(tokens(at.content), word) {
					continue
				}
				want[id] = at.version
			}
			res, err := e.Search(ctx, core.SearchRequest{Query: word, Mode: core.ModeFTS, Limit: 1000, AsOf: asOf, ValidAt: validAt})
			if err != nil {
				rt.Fatal(err)
			}
			got := map[int64]int{}
			for _, h := range res.Hits {
				got[h.Memory.ID] = h.Memory.Version
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				rt.Fatalf("%q as of %s, valid at %s: got id→version %v, want %v", word, asOf, validAt, got, want)
			}
		}
	})
}

// tokens splits the model's content (fmt.Sprint of a word list).
func tokens(s string) []string {
	var out []string
	cur := ""
	for _, r := range s {
		if r >= 'a' && r <= 'z' {
			cur += string(r)
			continue
		}
		if cur != "" {
			out = append(out, cur)
			cur = ""
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// TestSupersedeKeepsItsOwnProvenance: the new memory of a supersession has
// the source and entities it is given, none of the old one's, so that
// forget-source of the old conversation leaves the new fact alone; the
// supersedes edge is what links them.
func TestSupersedeKeepsItsOwnProvenance(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	old := remember(t, e, core.Input{Content: "Bob lives in Berlin", Entities: []string{"Bob", "Berlin"},
		Source: "conversation:1#turn-4", ValidFrom: day(2020, 3, 1)})
	bare, err := e.Supersede(ctx, old.ID, core.Input{Content: "Bob lives in Lisbon", ValidFrom: day(2024, 2, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if bare.Source != "" || len(bare.Entities) != 0 {
		t.Errorf("superseding memory took source %q and entities %v from the old one; want none", bare.Source, bare.Entities)
	}
	own, err := e.Supersede(ctx, bare.ID, core.Input{Content: "Bob lives in Porto", Source: "conversation:2",
		Entities: []string{"Bob", "Porto"}, ValidFrom: day(2025, 1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if own.Source != "conversation:2" || fmt.Sprint(own.Entities) != "[Bob Porto]" {
		t.Errorf("superseding memory has source %q and entities %v; want its own", own.Source, own.Entities)
	}
	rep, err := e.ForgetSource(ctx, core.ForgetSourceRequest{Source: "conversation:1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Matched, []int64{old.ID}) || len(rep.Derived) != 0 {
		t.Errorf("forget-source conversation:1 took %v and %v; want only memory %d", rep.Matched, rep.Derived, old.ID)
	}
	for _, m := range []*core.Memory{bare, own} {
		if _, err := e.Get(ctx, m.ID); err != nil {
			t.Errorf("memory %d (%q) did not survive forget-source of the old one's conversation: %v", m.ID, m.Content, err)
		}
	}
}
