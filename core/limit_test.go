package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
)

// A handle limited to agent:a reads agent:a and default but changes only
// agent:a: every way of changing a default memory is ErrForbidden and
// leaves the store as it was, and the handle cannot widen itself.
func TestLimitedHandleChangesOnlyItsNamespaces(t *testing.T) {
	ctx := context.Background()
	e := openAt(t, filepath.Join(t.TempDir(), "memory.db"), core.Options{Govern: core.GovernConfig{Contradictions: core.ContradictDemote}})
	t.Cleanup(func() { e.Close() })
	a, err := e.In("agent:a")
	if err != nil {
		t.Fatal(err)
	}
	la, err := a.Limit("agent:a")
	if err != nil {
		t.Fatal(err)
	}
	shared := remember(t, e, core.Input{Content: "the office is in Lisbon", Source: "doc:handbook", TrustLevel: core.TrustCertain, Entities: []string{"office"}})
	if _, err := e.Update(ctx, shared.ID, core.Patch{Significance: new(7)}); err != nil {
		t.Fatal(err)
	}
	held := remember(t, e, core.Input{Content: "the wifi password is on the fridge", Quarantine: true})
	lesson, err := e.Learn(ctx, core.LessonInput{Guidance: "run the tests before pushing"})
	if err != nil {
		t.Fatal(err)
	}
	own := remember(t, la, core.Input{Content: "agent a keeps notes in markdown", Source: "doc:handbook"})
	if own.Namespace != "agent:a" {
		t.Fatalf("limited handle wrote to %s", own.Namespace)
	}
	if _, err := la.Get(ctx, shared.ID); err != nil {
		t.Fatalf("a limited handle must read default: %v", err)
	}

	before := dump(t, e)
	forbidden := map[string]func() error{
		"update": func() error {
			_, err := la.Update(ctx, shared.ID, core.Patch{Content: new("the office is in Porto")})
			return err
		},
		"set validity": func() error {
			_, err := la.SetValidity(ctx, shared.ID, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{})
			return err
		},
		"revert": func() error { _, err := la.Revert(ctx, shared.ID, 1); return err },
		"supersede": func() error {
			_, err := la.Supersede(ctx, shared.ID, core.Input{Content: "the office is in Porto"})
			return err
		},
		"link from": func() error { _, err := la.Link(ctx, core.Edge{From: shared.ID, To: own.ID}); return err },
		"unlink":    func() error { return la.Unlink(ctx, shared.ID, own.ID, core.EdgeRelatesTo) },
		"forget":    func() error { _, err := la.Forget(ctx, shared.ID, ""); return err },
		"release":   func() error { _, err := la.Release(ctx, held.ID, core.ReleaseOptions{}); return err },
		"reject":    func() error { _, err := la.Reject(ctx, held.ID, ""); return err },
		"outcome":   func() error { _, err := la.LessonOutcome(ctx, lesson.Memory.ID, false, ""); return err },
		"remember":  func() error { _, err := la.Remember(ctx, core.Input{Content: "x", Namespace: "default"}); return err },
		"import":    func() error { _, err := la.Import(ctx, core.ImportRequest{}); return err },
		"export": func() error {
			return la.Export(ctx, core.ExportOptions{}, func(core.ExportedMemory) error { return nil })
		},
		"reembed":    func() error { _, err := la.Reembed(ctx, core.ReembedOptions{}); return err },
		"in agent:b": func() error { _, err := la.In("agent:b"); return err },
		"limit to b": func() error { _, err := la.Limit("agent:a", "agent:b"); return err },
	}
	for name, f := range forbidden {
		err := f()
		if !errors.Is(err, core.ErrForbidden) || core.KindOf(err).HTTP != 403 {
			t.Errorf("%s on a default memory through a handle limited to agent:a: %v, want forbidden", name, err)
		}
	}
	if after := dump(t, e); after != before {
		t.Fatalf("refused changes changed the store:\nbefore %s\nafter  %s", before, after)
	}

	// An edge belongs to the memory it starts at: agent:a may relate its own
	// memory to a default one.
	if _, err := la.Link(ctx, core.Edge{From: own.ID, To: shared.ID, Type: core.EdgeSupports}); err != nil {
		t.Fatalf("link from its own memory to a default one: %v", err)
	}
	// Contradicting a trusted default memory does not demote it (the
	// policy here is demote): the newcomer waits for review instead.
	claim, err := la.Remember(ctx, core.Input{Content: "the office is in Porto now", Contradicts: []int64{shared.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if claim.Status != core.StatusQuarantined {
		t.Errorf("a memory contradicting a trusted default memory the writer may not change: status %s, want quarantined", claim.Status)
	}
	if got, _ := e.Get(ctx, shared.ID); got.Trust.Level != core.TrustCertain || got.Version != 2 {
		t.Errorf("the contradicted default memory changed: trust %s, version %d", got.Trust.Level, got.Version)
	}
	// Forget-source forgets only in agent:a.
	rep, err := la.ForgetSource(ctx, core.ForgetSourceRequest{Source: "doc:handbook"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Matched) != 1 || rep.Matched[0] != own.ID {
		t.Errorf("forget-source through the limited handle matched %v, want only %d", rep.Matched, own.ID)
	}
	if _, err := e.Get(ctx, shared.ID); err != nil {
		t.Errorf("forget-source through a handle limited to agent:a forgot the default memory: %v", err)
	}
	// The unlimited handle on agent:a is unchanged: it may change default.
	if _, err := a.Update(ctx, shared.ID, core.Patch{Significance: new(8)}); err != nil {
		t.Errorf("an unlimited handle on agent:a updating a default memory: %v", err)
	}
}

// A limited handle's stats count its scope only: no store-wide figures,
// its vectors, and only the edges between memories it can read.
func TestLimitedHandleStats(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	la := limit(t, e, "agent:a")
	lb := limit(t, e, "agent:b")
	shared := remember(t, e, core.Input{Content: "the office is in Lisbon"})
	remember(t, la, core.Input{Content: "agent a keeps notes in markdown"})
	for i, c := range []string{"agent b's first secret", "agent b's second secret", "agent b's third secret"} {
		m := remember(t, lb, core.Input{Content: c})
		if i == 0 {
			if _, err := lb.Link(ctx, core.Edge{From: m.ID, To: shared.ID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err := la.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Memories != 2 || st.Vectors != 2 || st.Edges != 0 || st.StoreMemories != 0 || st.Seq != 0 || st.Backend != nil ||
		st.VectorIndexBytes != 0 || st.VectorSnapshotBytes != 0 || st.VectorIndex == "" {
		b, _ := json.Marshal(st)
		t.Fatalf("stats through a handle limited to agent:a: %s; want 2 memories, 2 vectors, no edges, no store-wide figures", b)
	}
	b, _ := json.Marshal(st)
	for _, k := range []string{`"seq"`, `"store_memories"`, `"backend"`} {
		if strings.Contains(string(b), k) {
			t.Errorf("limited stats carry %s: %s", k, b)
		}
	}
	full, err := e.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if full.StoreMemories != 5 || full.Seq == 0 || full.Vectors != 5 {
		t.Errorf("unlimited stats: store %d, seq %d, vectors %d; want 5, > 0, 5", full.StoreMemories, full.Seq, full.Vectors)
	}
}

// A limited handle refuses what reaches past its namespaces to the whole
// store: the audit log (every namespace's entries) and the backend below
// the engine, which answers every call with ErrForbidden and does not
// close the store.
func TestLimitedHandleRefusesTheWholeStore(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	la := limit(t, e, "agent:a")
	m := remember(t, la, core.Input{Content: "agent a keeps notes in markdown"})
	b := la.Backend()
	refused := map[string]func() error{
		"audit":        func() error { _, err := la.Audit(ctx, core.AuditFilter{}); return err },
		"audit verify": func() error { _, err := la.VerifyAudit(ctx); return err },
		"audit export": func() error { _, err := la.ExportAudit(ctx, io.Discard); return err },
		"backend view": func() error { return b.View(ctx, func(core.ReadTx) error { return nil }) },
		"backend update": func() error {
			return b.Update(ctx, func(tx core.Tx) error { return tx.Insert(&core.Memory{Content: "x"}) })
		},
		"backend search": func() error { _, err := b.SearchKeyword(ctx, nil, core.Filter{}, 10); return err },
		"backend close":  b.Close,
	}
	for name, f := range refused {
		if err := f(); !errors.Is(err, core.ErrForbidden) || core.KindOf(err).HTTP != 403 {
			t.Errorf("%s through a handle limited to agent:a: %v, want forbidden", name, err)
		}
	}
	if _, err := la.Get(ctx, m.ID); err != nil {
		t.Fatalf("the store must stay open after the limited backend's Close: %v", err)
	}
	if _, err := e.Audit(ctx, core.AuditFilter{}); err != nil {
		t.Errorf("audit through the unlimited handle: %v", err)
	}
	if err := e.Backend().View(ctx, func(core.ReadTx) error { return nil }); err != nil {
		t.Errorf("the unlimited handle's backend: %v", err)
	}
}

func limit(t *testing.T, e *core.Engine, ns string) *core.Engine {
	t.Helper()
	h, err := e.In(ns)
	if err == nil {
		h, err = h.Limit(ns)
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// dump renders every memory of the store (every namespace and status, with
// its edges) without access statistics, to compare before and after.
func dump(t *testing.T, e *core.Engine) string {
	t.Helper()
	var sb strings.Builder
	err := e.Backend().View(context.Background(), func(tx core.ReadTx) error {
		return tx.Scan(core.ScanOptions{}, func(m *core.Memory) error {
			m.AccessCount, m.LastAccessedAt, m.Embedding.Vector = 0, time.Time{}, nil
			es, err := tx.Edges(m.ID)
			if err != nil {
				return err
			}
			b, _ := json.Marshal(struct {
				M *core.Memory
				E []core.Edge
			}{m, es})
			sb.Write(b)
			sb.WriteByte('\n')
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}
