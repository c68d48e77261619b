// Package upgradetest checks that a backend's on-disk upgrade keeps every
// answer a store gave before it. Build writes a store through the engine
// (inserts, edits that change the content, the embedding or neither,
// reverts, links, forgets, accesses, quarantine, other namespaces) with a
// fixed clock; Answers reads back every memory, version, history, edge,
// change-log entry and audit entry, and runs as-of searches at many times;
// Revert reverts memories and reports the new versions.
//
// A backend's upgrade test opens a fixture written by an older memos (the
// store Build wrote, with that release's code) and compares Answers and
// Revert with what that release answered (recorded next to the fixture).
// The fixtures are made by genfixture in this directory, run in a
// checkout of the older release.
package upgradetest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/embedders/hash"
)

// MaxID bounds the ids Answers asks about: every id the fixture used, and
// a few it never did.
const MaxID = 20

// Dim is the hash embedder's dimension in the fixtures: small, so that the
// fixture files stay small.
const Dim = 16

// Start is the clock's first reading.
var Start = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// Clock is a deterministic clock: each reading is one minute after the last.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock whose first reading is at.
func NewClock(at time.Time) *Clock { return &Clock{t: at.Add(-time.Minute)} }

// Now advances the clock by a minute and returns it.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Minute)
	return c.t
}

// Open opens an engine over b with the fixtures' embedder and clock. With
// track off, searches record no accesses (so that answering changes
// nothing).
func Open(ctx context.Context, b driver.Backend, clock *Clock, track bool) (*core.Engine, error) {
	emb, err := hash.New(hash.Config{Dim: Dim})
	if err != nil {
		return nil, err
	}
	return core.Open(ctx, core.Options{
		Backend: b, Embedder: emb, Now: clock.Now,
		Search: core.SearchConfig{DisableAccessTracking: !track},
	})
}

// Build writes the fixture's memories through e.
func Build(ctx context.Context, e *core.Engine) error {
	var ids []int64
	add := func(in core.Input) error {
		m, err := e.Remember(ctx, in)
		if err != nil {
			return fmt.Errorf("remember %q: %w", in.Content, err)
		}
		ids = append(ids, m.ID)
		return nil
	}
	inputs := []core.Input{
		{Content: "Alice prefers green tea in the morning", Type: core.TypePreference, Significance: 6, Entities: []string{"Alice"}, Source: "conversation:1#turn-1", Session: "s1"},
		{Content: "Bob moved to Lisbon in March", Type: core.TypeEvent, Entities: []string{"Bob", "Lisbon"}, Source: "conversation:1#turn-2", Session: "s1",
			ValidFrom: Start.AddDate(0, 0, -10)},
		{Content: "The deploy script lives in tools/deploy.sh", Namespace: "project:alpha", Type: core.TypeFact, Metadata: map[string]any{"path": "tools/deploy.sh", "lines": 42.0}},
		{Content: "Carol is allergic to peanuts", Type: core.TypeFact, Significance: 9, Entities: []string{"Carol"}, EmotionalContext: "worried"},
		{Content: "The team meets every Tuesday at ten", Type: core.TypeEvent, Pool: core.PoolRaw, Session: "s2", Source: "conversation:2#turn-1"},
		{Content: "Dave thinks the green logo is better", Type: core.TypeFact, TrustLevel: core.TrustInferred},
		{Content: "Use the staging cluster for load tests", Type: core.TypeLesson, Pool: core.PoolKnowledge, Significance: 7},
		{Content: "Erin's birthday is on the fourth of July", Type: core.TypeFact, Entities: []string{"Erin"}, ValidTo: Start.AddDate(1, 0, 0)},
		{Content: "The green tea supplier changed in spring", Type: core.TypeEvent, Session: "s1"},
		{Content: "Frank keeps his API key in a password manager", Type: core.TypeFact, Quarantine: true},
		{Content: "Grace likes hiking in the Alps", Type: core.TypePreference, Entities: []string{"Grace"}, Metadata: map[string]any{"tags": []any{"outdoor", "alps"}}},
		{Content: "The build takes eleven minutes on CI", Namespace: "project:alpha", Type: core.TypeFact},
	}
	for _, in := range inputs {
		if err := add(in); err != nil {
			return err
		}
	}
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }
	st := func(s core.Status) *core.Status { return &s }
	md := func(m map[string]any) *map[string]any { return &m }
	tm := func(t time.Time) *time.Time { return &t }
	edits := []struct {
		i int
		p core.Patch
	}{
		{0, core.Patch{Content: str("Alice prefers jasmine tea in the morning")}},              // content and embedding change
		{0, core.Patch{Significance: num(8)}},                                                  // neither changes
		{0, core.Patch{Metadata: md(map[string]any{"checked": true})}},                         // neither changes
		{0, core.Patch{Content: str("Alice prefers green tea in the morning, without sugar")}}, // changes again
		{1, core.Patch{ValidTo: tm(Start.AddDate(0, 2, 0))}},
		{1, core.Patch{Content: str("Bob moved to Porto in May")}},
		{3, core.Patch{Status: st(core.StatusArchived)}},
		{3, core.Patch{Status: st(core.StatusActive)}},
		{5, core.Patch{Content: str("Dave thinks the blue logo is better")}},
		{8, core.Patch{Significance: num(3)}},
		{10, core.Patch{Content: str("Grace likes hiking in the Dolomites")}},
		{10, core.Patch{Entities: &[]string{"Grace", "Dolomites"}}},
	}
	for _, ed := range edits {
		if _, err := e.Update(ctx, ids[ed.i], ed.p); err != nil {
			return fmt.Errorf("update %d: %w", ids[ed.i], err)
		}
	}
	// Reverts write a version equal to an old one: the content goes back.
	if _, err := e.Revert(ctx, ids[0], 1); err != nil {
		return err
	}
	if _, err := e.Revert(ctx, ids[5], 1); err != nil {
		return err
	}
	for _, l := range []core.Edge{
		{From: ids[0], To: ids[8], Type: core.EdgeRelatesTo, Weight: 0.8, Source: "fixture"},
		{From: ids[1], To: ids[4], Type: core.EdgeTemporalPrecedes, Weight: 1},
		{From: ids[5], To: ids[0], Type: core.EdgeContradicts, Weight: 0.5},
		{From: ids[6], To: ids[4], Type: core.EdgeSupports, Weight: 0.7},
		{From: ids[7], To: ids[3], Type: core.EdgeRelatesTo, Weight: 0.2},
	} {
		if _, err := e.Link(ctx, l); err != nil {
			return fmt.Errorf("link %d→%d: %w", l.From, l.To, err)
		}
	}
	if err := e.Unlink(ctx, ids[7], ids[3], core.EdgeRelatesTo); err != nil {
		return err
	}
	// Accesses (the engine was opened with tracking on).
	for _, q := range []string{"green tea", "logo"} {
		if _, err := e.Search(ctx, core.SearchRequest{Query: q}); err != nil {
			return err
		}
	}
	// Forget one memory with history and one without.
	for _, i := range []int{6, 7} {
		if _, err := e.Forget(ctx, ids[i], "fixture"); err != nil {
			return fmt.Errorf("forget %d: %w", ids[i], err)
		}
	}
	return add(core.Input{Content: "Heidi joined the team after the forget", Type: core.TypeEvent, Session: "s2"})
}

// withVector is a memory with its vector, which driver.Memory's JSON leaves
// out.
type withVector struct {
	*driver.Memory
	Vector []float32 `json:"vector,omitempty"`
}

func vec(m *driver.Memory) *withVector {
	if m == nil {
		return nil
	}
	return &withVector{m, m.Embedding.Vector}
}

func vecs(ms []*driver.Memory) []*withVector {
	var out []*withVector
	for _, m := range ms {
		out = append(out, vec(m))
	}
	return out
}

// The parts of Answers' JSON.
type (
	version struct {
		V      int         `json:"v"`
		Memory *withVector `json:"memory,omitempty"`
		Err    string      `json:"err,omitempty"`
	}
	record struct {
		ID       int64         `json:"id"`
		Current  *withVector   `json:"current,omitempty"`
		Err      string        `json:"err,omitempty"`
		History  []*withVector `json:"history,omitempty"`
		HistErr  string        `json:"history_err,omitempty"`
		Versions []version     `json:"versions,omitempty"`
		Edges    []driver.Edge `json:"edges,omitempty"`
	}
	hit struct {
		ID      int64  `json:"id"`
		Version int    `json:"version"`
		Content string `json:"content"`
	}
	change struct {
		driver.Change
		Vector []float32 `json:"vector,omitempty"`
	}
	search struct {
		Query string    `json:"query"`
		Mode  core.Mode `json:"mode"`
		AsOf  time.Time `json:"as_of,omitzero"`
		Valid time.Time `json:"valid_at,omitzero"`
		Hits  []hit     `json:"hits"`
	}
	answers struct {
		Seq      uint64              `json:"seq"`
		Records  []record            `json:"records"`
		Changes  []change            `json:"changes"`
		Meta     map[string]string   `json:"meta"`
		Audit    []driver.AuditEntry `json:"audit"`
		Scan     []int64             `json:"scan"`
		Searches []search            `json:"searches"`
	}
)

// Answers returns, as JSON, everything a reader of the store can learn:
// through b, every memory at every version, its history and edges, the
// change log, the store settings the engine keeps and the audit log; and
// through e (whose clock must not be used by anything else meanwhile),
// as-of and valid-at searches at every minute of the fixture's writes. e
// must be opened with access tracking off.
func Answers(ctx context.Context, b driver.Backend, e *core.Engine, maxID int64) ([]byte, error) {
	var out answers
	err := b.View(ctx, func(tx driver.ReadTx) error {
		var err error
		if out.Seq, err = tx.Seq(); err != nil {
			return err
		}
		if out.Records, err = records(tx, maxID); err != nil {
			return err
		}
		return out.readLogs(tx)
	})
	if err != nil {
		return nil, err
	}
	if out.Searches, err = searches(ctx, e); err != nil {
		return nil, err
	}
	return json.MarshalIndent(out, "", "\t")
}

// errText is an error as the fixtures record it.
func errText(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, driver.ErrNotFound):
		return "not found"
	default:
		return err.Error()
	}
}

// records reads memories 1 to maxID: each at every version, its history
// and its edges.
func records(tx driver.ReadTx, maxID int64) ([]record, error) {
	var out []record
	for id := int64(1); id <= maxID; id++ {
		r := record{ID: id}
		cur, err := tx.Get(id, 0)
		r.Current, r.Err = vec(cur), errText(err)
		hist, err := tx.History(id)
		r.History, r.HistErr = vecs(hist), errText(err)
		for v := 1; v <= len(hist)+1; v++ {
			m, err := tx.Get(id, v)
			r.Versions = append(r.Versions, version{V: v, Memory: vec(m), Err: errText(err)})
		}
		if cur != nil {
			if r.Edges, err = tx.Edges(id); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// readLogs reads the change log, the settings the engine keeps, the audit
// log and the ids a scan returns.
func (out *answers) readLogs(tx driver.ReadTx) error {
	if err := tx.Changes(0, func(c driver.Change) error {
		out.Changes = append(out.Changes, change{c, c.Embedding.Vector})
		return nil
	}); err != nil {
		return err
	}
	out.Meta = map[string]string{}
	for _, k := range []string{"embedder.model", "embedder.dim", "audit.head", "store.id"} {
		v, err := tx.Meta(k)
		if err != nil && !errors.Is(err, driver.ErrNotFound) {
			return err
		}
		out.Meta[k] = v
	}
	if ar, ok := tx.(driver.AuditReader); ok {
		if err := ar.Audit(func(a driver.AuditEntry) error {
			out.Audit = append(out.Audit, a)
			return nil
		}); err != nil {
			return err
		}
	}
	return tx.Scan(driver.ScanOptions{}, func(m *driver.Memory) error {
		out.Scan = append(out.Scan, m.ID)
		return nil
	})
}

// searches runs the as-of and valid-at searches through e. The fixture's
// writes took about 45 clock minutes; it asks about each.
func searches(ctx context.Context, e *core.Engine) ([]search, error) {
	var out []search
	for i := -1; i <= 50; i++ {
		at := Start.Add(time.Duration(i)*time.Minute + 30*time.Second)
		for _, s := range []search{
			{Query: "green tea", Mode: core.ModeHybrid, AsOf: at},
			{Query: "logo", Mode: core.ModeKeyword, AsOf: at},
			{Query: "moved to", Mode: core.ModeVector, AsOf: at},
			{Query: "hiking", Mode: core.ModeHybrid, Valid: at.AddDate(0, 3, 0), AsOf: at},
		} {
			res, err := e.Search(ctx, core.SearchRequest{Query: s.Query, Mode: s.Mode, AsOf: s.AsOf, ValidAt: s.Valid, NoExpand: true})
			if err != nil {
				return nil, fmt.Errorf("search %q as of %v: %w", s.Query, at, err)
			}
			for _, h := range res.Hits {
				s.Hits = append(s.Hits, hit{h.Memory.ID, h.Memory.Version, h.Memory.Content})
			}
			// Which versions a search sees as of a time is the store's
			// answer; their order is the ranking's, which releases tune.
			slices.SortFunc(s.Hits, func(a, b hit) int { return cmp.Compare(a.ID, b.ID) })
			out = append(out, s)
		}
	}
	return out, nil
}

// Revert reverts memories of the fixture to old versions through e and
// returns, as JSON, the versions it wrote and the histories after.
func Revert(ctx context.Context, e *core.Engine) ([]byte, error) {
	var out []any
	for _, r := range []struct {
		id int64
		v  int
	}{{1, 2}, {1, 3}, {2, 1}, {6, 2}, {11, 1}} {
		m, err := e.Revert(ctx, r.id, r.v)
		if err != nil {
			return nil, fmt.Errorf("revert %d to %d: %w", r.id, r.v, err)
		}
		h, err := e.History(ctx, r.id)
		if err != nil {
			return nil, err
		}
		out = append(out, vec(m), vecs(h))
	}
	return json.MarshalIndent(out, "", "\t")
}
