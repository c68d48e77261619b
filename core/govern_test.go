package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/secret"
	"github.com/memos-go/memos/embedders/hash"
)

// openOn opens an engine on the registered backend name in dir, with the
// hash embedder of dimension dim (0: its default).
func openOn(t testing.TB, name, dir string, opts core.Options, dim int) *core.Engine {
	t.Helper()
	ctx := context.Background()
	emb, err := hash.Open(ctx, hash.Config{Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	opts.Backend, opts.Embedder = openBackend(t, name, dir), emb
	if opts.Now == nil {
		opts.Now = newClock().now
	}
	opts.Search.DisableAccessTracking = true
	e, err := core.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// eachBackend runs fn on every registered backend, in a fresh directory.
func eachBackend(t *testing.T, fn func(t *testing.T, name, dir string)) {
	for _, name := range core.BackendNames() {
		t.Run(name, func(t *testing.T) { fn(t, name, t.TempDir()) })
	}
}

func searchIDs(t *testing.T, e *core.Engine, req core.SearchRequest) []int64 {
	t.Helper()
	res, err := e.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("search %q: %v", req.Query, err)
	}
	return ids(res)
}

func packIDs(pk *core.Pack) []int64 {
	var out []int64
	for _, items := range [][]core.PackItem{pk.Memories, pk.Lessons, pk.Neighbours} {
		for _, it := range items {
			out = append(out, it.ID)
		}
	}
	return out
}

// auditLen is the number of audit entries, to check that a refused
// operation wrote nothing.
func auditLen(t *testing.T, e *core.Engine) int {
	t.Helper()
	log, err := e.Audit(context.Background(), core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(log)
}

func TestQuarantineVisibilityAndReview(t *testing.T) {
	eachBackend(t, func(t *testing.T, name, dir string) {
		ctx := context.Background()
		e := openOn(t, name, dir, core.Options{Govern: core.GovernConfig{
			QuarantineLevels: []core.TrustLevel{core.TrustImported}, QuarantineBelow: 0.5,
			QuarantineSources: []string{"web:*"}}}, 0)
		defer e.Close()
		ok := remember(t, e, core.Input{Content: "the backup job runs nightly at the lab"})
		web := remember(t, e, core.Input{Content: "the backup job runs hourly per a forum post", Source: "web:forum.example"})
		imp := remember(t, e, core.Input{Content: "the backup job was imported from a spreadsheet", TrustLevel: core.TrustImported})
		low := remember(t, e, core.Input{Content: "the backup job maybe runs weekly", TrustScore: ptr(0.3)})
		asked := remember(t, e, core.Input{Content: "the backup job needs a review", Quarantine: true})
		held := []int64{web.ID, imp.ID, low.ID, asked.ID}
		for _, m := range []*core.Memory{web, imp, low, asked} {
			if m.Status != core.StatusQuarantined {
				t.Fatalf("memory %d (%q) has status %s, want quarantined", m.ID, m.Content, m.Status)
			}
		}
		for _, mode := range []core.Mode{core.ModeHybrid, core.ModeKeyword, core.ModeVector, core.ModeFTS} {
			q := "backup job"
			if mode == core.ModeFTS {
				q = "backup"
			}
			got := searchIDs(t, e, core.SearchRequest{Query: q, Mode: mode, Limit: 20})
			if !slices.Equal(got, []int64{ok.ID}) {
				t.Errorf("%s search returned %v; want only the active memory %d", mode, got, ok.ID)
			}
			got = searchIDs(t, e, core.SearchRequest{Query: q, Mode: mode, Limit: 20, IncludeQuarantined: true})
			for _, id := range held {
				if mode != core.ModeVector && !slices.Contains(got, id) {
					t.Errorf("%s search with IncludeQuarantined returned %v; want %d too", mode, got, id)
				}
			}
		}
		x, err := e.Explain(ctx, core.SearchRequest{Query: "backup job", Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(x.Result); !slices.Equal(got, []int64{ok.ID}) {
			t.Errorf("explain accepted %v", got)
		}
		for _, bootstrap := range []bool{false, true} {
			req := core.PackRequest{Query: "backup job", Budget: 2000}
			if bootstrap {
				req = core.PackRequest{Bootstrap: true, Budget: 2000}
			}
			pk, err := e.ContextPack(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got := packIDs(pk); !slices.Equal(got, []int64{ok.ID}) {
				t.Errorf("pack (bootstrap %v) holds %v", bootstrap, got)
			}
			req.IncludeQuarantined = true
			if pk, err = e.ContextPack(ctx, req); err != nil {
				t.Fatal(err)
			}
			if got := packIDs(pk); len(got) != 5 {
				t.Errorf("pack (bootstrap %v) with IncludeQuarantined holds %v", bootstrap, got)
			}
		}

		items, err := e.Review(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]string{web.ID: "source web:forum.example matches web:*", imp.ID: "trust level imported",
			low.ID: "trust score 0.30 is below 0.50", asked.ID: "asked for review"}
		if len(items) != 4 {
			t.Fatalf("review queue has %d items, want 4", len(items))
		}
		for _, it := range items {
			if !strings.Contains(strings.Join(it.Reasons, "; "), want[it.Memory.ID]) {
				t.Errorf("memory %d: reasons %q, want %q", it.Memory.ID, it.Reasons, want[it.Memory.ID])
			}
			// The queue shows the embedding as get does: model and dimension.
			if b, _ := json.Marshal(it.Memory.Embedding); string(b) != `{"model":"hash-v1-256","dim":256}` {
				t.Errorf("memory %d: the review queue shows the embedding as %s", it.Memory.ID, b)
			}
		}

		// Bad input changes nothing.
		n := auditLen(t, e)
		if _, err := e.Release(ctx, ok.ID, core.ReleaseOptions{}); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "not quarantined") {
			t.Errorf("release of an active memory: %v", err)
		}
		if _, err := e.Reject(ctx, ok.ID, "no"); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("reject of an active memory: %v", err)
		}
		if _, err := e.Release(ctx, 999, core.ReleaseOptions{}); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("release of an unknown id: %v", err)
		}
		if _, err := e.Release(ctx, web.ID, core.ReleaseOptions{TrustLevel: "sure"}); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("release with an unknown trust level: %v", err)
		}
		if got := auditLen(t, e); got != n {
			t.Errorf("refused operations wrote %d audit entries", got-n)
		}
		if m, _ := e.Get(ctx, ok.ID); m.Version != 1 {
			t.Errorf("a refused release wrote version %d", m.Version)
		}

		rel, err := e.Release(ctx, web.ID, core.ReleaseOptions{TrustLevel: core.TrustCertain, Note: "checked"})
		if err != nil {
			t.Fatal(err)
		}
		if rel.Status != core.StatusActive || rel.Trust.Level != core.TrustCertain || rel.Version != 2 {
			t.Errorf("released memory = %+v", rel)
		}
		if got := searchIDs(t, e, core.SearchRequest{Query: "backup job", Mode: core.ModeKeyword, Limit: 20}); !slices.Contains(got, web.ID) {
			t.Errorf("a released memory is not found: %v", got)
		}
		cert, err := e.Reject(ctx, imp.ID, "wrong")
		if err != nil || cert.MemoryID != imp.ID || cert.Reason != "wrong" {
			t.Fatalf("reject: %+v, %v", cert, err)
		}
		if _, err := e.Get(ctx, imp.ID); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("a rejected memory is still there: %v", err)
		}
		for _, action := range []string{"quarantine", "quarantine.release", "quarantine.reject"} {
			if log, _ := e.Audit(ctx, core.AuditFilter{Action: action}); len(log) == 0 {
				t.Errorf("no %s entry in the audit log", action)
			}
		}
		if _, err := e.VerifyAudit(ctx); err != nil {
			t.Error(err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestContradictions(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []string{core.ContradictQuarantine, core.ContradictDemote, core.ContradictFlag, core.ContradictOff} {
		t.Run(policy, func(t *testing.T) {
			e := openOn(t, "sqlite", t.TempDir(), core.Options{Govern: core.GovernConfig{Contradictions: policy}}, 0)
			defer e.Close()
			old := remember(t, e, core.Input{Content: "Alice's home lab runs Proxmox on three nodes", Entities: []string{"Alice"}, TrustLevel: core.TrustCertain})
			other := remember(t, e, core.Input{Content: "Alice adopted two cats last spring", Entities: []string{"Alice"}, TrustLevel: core.TrustCertain})
			for _, content := range []string{"Alice's home lab runs Proxmox on 3 nodes", "The home lab runs Proxmox on five nodes"} {
				var ents []string
				if strings.HasPrefix(content, "Alice") {
					ents = []string{"Alice"}
				}
				m := remember(t, e, core.Input{Content: content, Entities: ents})
				if m.Status != core.StatusActive {
					t.Errorf("memory %q was held: %s", m.Content, m.Status)
				}
				if es, _ := e.Edges(ctx, m.ID); len(es) != 0 {
					t.Errorf("memory %q got edges %v", m.Content, es)
				}
			}
			neu := remember(t, e, core.Input{Content: "Alice's home lab runs Proxmox on four nodes", Entities: []string{"alice"}})
			es, _ := e.Edges(ctx, neu.ID)
			flagged := len(es) > 0 && es[0].Type == core.EdgeContradicts && es[0].To == old.ID
			if flagged != (policy != core.ContradictOff) {
				t.Fatalf("edges of the newcomer: %v", es)
			}
			if es, _ := e.Edges(ctx, other.ID); len(es) != 0 {
				t.Errorf("an unrelated memory about Alice was flagged: %v", es)
			}
			if got := neu.Status == core.StatusQuarantined; got != (policy == core.ContradictQuarantine) {
				t.Errorf("newcomer status %s", neu.Status)
			}
			cur, _ := e.Get(ctx, old.ID)
			if got := cur.Trust.Level == core.TrustContradicted; got != (policy == core.ContradictDemote) {
				t.Errorf("older memory trust %+v", cur.Trust)
			}
			if policy == core.ContradictQuarantine {
				items, err := e.Review(ctx)
				if err != nil || len(items) != 1 || len(items[0].Contradicts) == 0 || items[0].Contradicts[0].ID != old.ID ||
					!strings.Contains(items[0].Reasons[0], "numbers differ") {
					t.Fatalf("review = %+v, %v", items, err)
				}
				x, err := e.Explain(ctx, core.SearchRequest{Query: "proxmox nodes", IncludeQuarantined: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range x.Candidates {
					if c.ID == neu.ID && !slices.Contains(c.Contradicts, old.ID) {
						t.Errorf("explain shows contradicts %v for the newcomer", c.Contradicts)
					}
				}
			}
			// An explicit contradiction needs no detector; an unknown id is refused.
			n := auditLen(t, e)
			if _, err := e.Remember(ctx, core.Input{Content: "x", Contradicts: []int64{999}}); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("contradicts an unknown id: %v", err)
			}
			if auditLen(t, e) != n {
				t.Error("a refused remember wrote to the audit log")
			}
			ex := remember(t, e, core.Input{Content: "the cats are dogs", Contradicts: []int64{other.ID}})
			if es, _ := e.Edges(ctx, ex.ID); len(es) != 1 || es[0].To != other.ID || es[0].Type != core.EdgeContradicts {
				t.Errorf("explicit contradiction edges %v", es)
			}
			if _, err := e.VerifyAudit(ctx); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestDisagreement(t *testing.T) {
	e := openOn(t, "sqlite", t.TempDir(), core.Options{}, 0)
	defer e.Close()
	ctx := context.Background()
	base := remember(t, e, core.Input{Content: "Bob moved to Lisbon in March 2021", Entities: []string{"Bob"}, TrustLevel: core.TrustCertain})
	for _, c := range []struct {
		content string
		held    bool
	}{
		{"Bob moved to Lisbon in May 2021", true},             // another month
		{"Bob did not move to Lisbon in March 2021", true},    // negation
		{"Bob moved to Lisbon in March 2021 with Ann", false}, // agrees
		{"Bob likes Lisbon in spring", false},                 // another subject
	} {
		m := remember(t, e, core.Input{Content: c.content, Entities: []string{"Bob"}})
		if got := m.Status == core.StatusQuarantined; got != c.held {
			t.Errorf("%q against %q: held %v, want %v", c.content, base.Content, got, c.held)
		}
		if c.held {
			if _, err := e.Reject(ctx, m.ID, "test"); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestLessonOutcomes(t *testing.T) {
	eachBackend(t, func(t *testing.T, name, dir string) {
		ctx := context.Background()
		e := openOn(t, name, dir, core.Options{}, 0)
		defer e.Close()
		good, err := e.Learn(ctx, core.LessonInput{Guidance: "run the database migrations before deploying", When: "deploying the api"})
		if err != nil {
			t.Fatal(err)
		}
		bad, err := e.Learn(ctx, core.LessonInput{Guidance: "deploy on friday evenings to save time", When: "deploying the api"})
		if err != nil {
			t.Fatal(err)
		}
		if good.Score != 0.5 || good.Memory.Type != core.TypeLesson || !strings.HasPrefix(good.Memory.Content, "When deploying the api: ") {
			t.Fatalf("learned %+v", good)
		}
		fact := remember(t, e, core.Input{Content: "the api deploys from main"})
		// Bad input changes nothing.
		n := auditLen(t, e)
		if _, err := e.LessonOutcome(ctx, fact.ID, true, ""); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "not a lesson") {
			t.Errorf("outcome for a fact: %v", err)
		}
		if _, err := e.LessonOutcome(ctx, 999, true, ""); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("outcome for an unknown id: %v", err)
		}
		if _, err := e.Learn(ctx, core.LessonInput{Guidance: "  "}); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("empty lesson: %v", err)
		}
		if auditLen(t, e) != n {
			t.Error("refused lesson operations wrote to the audit log")
		}

		for range 3 {
			if good, err = e.LessonOutcome(ctx, good.Memory.ID, true, "worked"); err != nil {
				t.Fatal(err)
			}
		}
		if good.Score != 0.8 || good.Memory.Significance != 8 || good.Memory.Trust.Score != 0.8 || good.Successes != 3 {
			t.Errorf("after 3 successes: %+v", good)
		}
		pk, err := e.ContextPack(ctx, core.PackRequest{Query: "deploying the api", Budget: 2000})
		if err != nil {
			t.Fatal(err)
		}
		if len(pk.Lessons) != 2 || pk.Lessons[0].ID != good.Memory.ID {
			t.Errorf("pack lessons %+v; want the successful lesson first", pk.Lessons)
		}
		for i := range 5 {
			if bad, err = e.LessonOutcome(ctx, bad.Memory.ID, false, "broke prod"); err != nil {
				t.Fatal(err)
			}
			switch i {
			case 1:
				if bad.Memory.Trust.Level == core.TrustContradicted {
					t.Errorf("demoted after 2 failures")
				}
			case 2:
				if bad.Memory.Trust.Level != core.TrustContradicted || bad.Memory.Status != core.StatusActive {
					t.Errorf("after 3 failures: %+v", bad.Memory)
				}
			}
		}
		if bad.Memory.Status != core.StatusArchived || bad.Score != 1.0/7 {
			t.Errorf("after 5 failures: status %s score %v", bad.Memory.Status, bad.Score)
		}
		pk, _ = e.ContextPack(ctx, core.PackRequest{Query: "deploying the api", Budget: 2000})
		if len(pk.Lessons) != 1 {
			t.Errorf("an archived lesson is still packed: %+v", pk.Lessons)
		}
		hist, err := e.History(ctx, bad.Memory.ID)
		if err != nil || len(hist) != 6 {
			t.Fatalf("history of the failing lesson: %d versions, %v", len(hist), err)
		}
		log, _ := e.Audit(ctx, core.AuditFilter{MemoryID: bad.Memory.ID, Action: "lesson.outcome"})
		if len(log) != 5 || !strings.Contains(log[4].Detail, `"note":"broke prod"`) {
			t.Errorf("outcome entries %+v", log)
		}
		ls, _ := e.Lessons(ctx, core.LessonFilter{})
		all, _ := e.Lessons(ctx, core.LessonFilter{IncludeArchived: true})
		if len(ls) != 1 || len(all) != 2 {
			t.Errorf("lessons: %d listed, %d with archived", len(ls), len(all))
		}
		if _, err := e.VerifyAudit(ctx); err != nil {
			t.Error(err)
		}
	})
}

// filesContaining lists the files under dir that contain needle.
func filesContaining(t *testing.T, dir string, needle []byte) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, needle) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestForgetSource(t *testing.T) {
	eachBackend(t, func(t *testing.T, name, dir string) {
		ctx := context.Background()
		snap := filepath.Join(dir, "vectors.snap")
		e := openOn(t, name, dir, core.Options{VectorSnapshot: snap}, 0)
		turn1 := remember(t, e, core.Input{Content: "zebracorn turn one of the chat", Source: "conversation:7#turn-1"})
		turn2 := remember(t, e, core.Input{Content: "zebracorn turn two of the chat", Source: "conversation:7#turn-2"})
		other := remember(t, e, core.Input{Content: "turn of conversation seventy", Source: "conversation:70#turn-1"})
		fact := remember(t, e, core.Input{Content: "zebracorn fact drawn from the chat", DerivedFrom: []int64{turn1.ID, turn2.ID}})
		summary := remember(t, e, core.Input{Content: "zebracorn summary of the fact", DerivedFrom: []int64{fact.ID}})
		mixed := remember(t, e, core.Input{Content: "a page built from the chat and another one", DerivedFrom: []int64{fact.ID, other.ID}})
		// A cycle: a and b derive from each other, a also from the summary.
		a := remember(t, e, core.Input{Content: "zebracorn cycle member a", DerivedFrom: []int64{summary.ID}})
		b := remember(t, e, core.Input{Content: "zebracorn cycle member b", DerivedFrom: []int64{a.ID}})
		if _, err := e.Link(ctx, core.Edge{From: a.ID, To: b.ID, Type: core.EdgeDerivedFrom}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Search(ctx, core.SearchRequest{Query: "zebracorn"}); err != nil {
			t.Fatal(err)
		}

		n := auditLen(t, e)
		if _, err := e.ForgetSource(ctx, core.ForgetSourceRequest{Source: " "}); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("empty source: %v", err)
		}
		dry, err := e.ForgetSource(ctx, core.ForgetSourceRequest{Source: "conversation:7", DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if auditLen(t, e) != n {
			t.Error("a dry run or a refused forget-source wrote to the audit log")
		}
		if !slices.Equal(dry.Matched, []int64{turn1.ID, turn2.ID}) || !slices.Equal(dry.Kept, []int64{mixed.ID}) ||
			len(dry.Certificates) != 0 {
			t.Fatalf("dry run: %+v", dry)
		}
		wantDerived := []int64{fact.ID, summary.ID, a.ID, b.ID}
		if got := slices.Sorted(slices.Values(dry.Derived)); !slices.Equal(got, wantDerived) {
			t.Fatalf("dry run derived %v, want %v", got, wantDerived)
		}
		if got := searchIDs(t, e, core.SearchRequest{Query: "zebracorn", Mode: core.ModeKeyword, Limit: 20, NoExpand: true}); len(got) != 6 {
			t.Fatalf("a dry run forgot something: %v", got)
		}

		rep, err := e.ForgetSource(ctx, core.ForgetSourceRequest{Source: "conversation:7", Reason: "user asked"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Certificates) != 6 {
			t.Fatalf("%d certificates, want 6", len(rep.Certificates))
		}
		for _, id := range append([]int64{turn1.ID, turn2.ID}, wantDerived...) {
			if _, err := e.Get(ctx, id); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("memory %d survived: %v", id, err)
			}
			if _, err := e.History(ctx, id); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("history of %d: %v", id, err)
			}
		}
		for _, id := range []int64{other.ID, mixed.ID} {
			if _, err := e.Get(ctx, id); err != nil {
				t.Errorf("memory %d should survive: %v", id, err)
			}
		}
		for _, mode := range []core.Mode{core.ModeHybrid, core.ModeVector} {
			if got := searchIDs(t, e, core.SearchRequest{Query: "zebracorn chat", Mode: mode, Limit: 20}); slices.ContainsFunc(got, func(id int64) bool { return id != mixed.ID && id != other.ID }) {
				t.Errorf("%s search still finds forgotten memories: %v", mode, got)
			}
		}
		pk, _ := e.ContextPack(ctx, core.PackRequest{Query: "zebracorn", Budget: 2000})
		if len(pk.Memories) != 0 {
			t.Errorf("pack after forget-source: %+v", pk.Memories)
		}
		// --strict takes the memory derived from two sources.
		strict, err := e.ForgetSource(ctx, core.ForgetSourceRequest{Source: "conversation:70", Strict: true, DryRun: true})
		if err != nil || !slices.Equal(strict.Derived, []int64{mixed.ID}) {
			t.Errorf("strict dry run: %+v, %v", strict, err)
		}
		if _, err := e.VerifyAudit(ctx); err != nil {
			t.Error(err)
		}
		if log, _ := e.Audit(ctx, core.AuditFilter{Source: "conversation:7#turn-1"}); len(log) != 2 { // remember, forget
			t.Errorf("entries of the forgotten source, found by its hash: %d", len(log))
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if files := filesContaining(t, dir, []byte("conversation:7#")); len(files) > 0 {
			t.Errorf("the forgotten source's name remains in %v", files)
		}
		if files := filesContaining(t, dir, []byte("zebracorn")); len(files) > 0 {
			t.Errorf("forgotten content remains in %v", files)
		}
	})
}

func TestAuditCoversEveryWrite(t *testing.T) {
	eachBackend(t, func(t *testing.T, name, dir string) {
		ctx := context.Background()
		e := openOn(t, name, dir, core.Options{}, 0)
		defer e.Close()
		a := remember(t, e, core.Input{Content: "the staging cluster has three nodes", Source: "file:notes.md"})
		b := remember(t, e, core.Input{Content: "staging is in the basement", DerivedFrom: []int64{a.ID}})
		mustDo := func(_ any, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		mustDo(e.Update(ctx, a.ID, core.Patch{Content: ptr("the staging cluster has four nodes")}))
		mustDo(e.Update(ctx, a.ID, core.Patch{Status: ptr(core.StatusArchived)}))
		mustDo(e.Revert(ctx, a.ID, 1))
		mustDo(e.SetValidity(ctx, b.ID, newClock().now(), newClock().now().AddDate(1, 0, 0)))
		mustDo(e.Supersede(ctx, b.ID, core.Input{Content: "staging moved to the attic"}))
		mustDo(e.Link(ctx, core.Edge{From: a.ID, To: b.ID, Type: core.EdgeSupports}))
		c := remember(t, e, core.Input{Content: "temporary"})
		mustDo(e.Forget(ctx, c.ID, "test"))
		// A batch is bound by one entry listing every memory.
		batch, err := e.RememberBatch(ctx, []core.Input{{Content: "batch one"}, {Content: "batch two", Source: "file:b.md"}})
		if err != nil {
			t.Fatal(err)
		}
		if be, _ := e.Audit(ctx, core.AuditFilter{MemoryID: batch[1].ID}); len(be) != 1 || be[0].MemoryID != 0 ||
			!strings.Contains(be[0].Detail, `"memories":[`) {
			t.Errorf("batch entry for memory %d: %+v", batch[1].ID, be)
		}

		log, err := e.Audit(ctx, core.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, en := range log {
			actions = append(actions, en.Action)
		}
		for _, want := range []string{"remember", "update", "revert", "set validity", "supersede", "link", "forget"} {
			if !slices.Contains(actions, want) {
				t.Errorf("no %q entry among %v", want, actions)
			}
		}
		st, _ := e.Audit(ctx, core.AuditFilter{MemoryID: a.ID, Action: "update"})
		if len(st) != 2 || !strings.Contains(st[1].Detail, `"status":{"from":"active","to":"archived"}`) {
			t.Errorf("status change entry: %+v", st)
		}
		vd, _ := e.Audit(ctx, core.AuditFilter{Action: "set validity"})
		if len(vd) != 1 || !strings.Contains(vd[0].Detail, `"validity":{"from":`) {
			t.Errorf("validity change entry: %+v", vd)
		}
		prov, _ := e.Audit(ctx, core.AuditFilter{MemoryID: b.ID, Action: "remember"})
		if len(prov) != 1 || !strings.Contains(prov[0].Detail, `"derived_from":[`) {
			t.Errorf("provenance entry: %+v", prov)
		}
		if bySrc, _ := e.Audit(ctx, core.AuditFilter{Source: "file:notes.md"}); len(bySrc) == 0 || bySrc[0].MemoryID != a.ID {
			t.Errorf("entries of source file:notes.md: %+v", bySrc)
		}
		for _, en := range log {
			if strings.Contains(en.Detail, "temporary") || strings.Contains(en.Detail, "file:notes.md") {
				t.Errorf("entry %d holds content or a source in the clear: %s", en.Seq, en.Detail)
			}
		}
		rep, err := e.VerifyAudit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Memories != 5 || rep.Versions != 10 || rep.Unbound != 0 {
			t.Errorf("verify report %+v", rep)
		}
		var buf bytes.Buffer
		if _, err := e.ExportAudit(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		if xr, err := core.VerifyAuditExport(bytes.NewReader(buf.Bytes())); err != nil || xr.Entries != len(log) {
			t.Fatalf("verify export: %+v, %v", xr, err)
		}
		// Any change to the export is caught, naming the entry where it can.
		ex := buf.Bytes()
		i := bytes.Index(ex, []byte(`"action": "update"`))
		for _, edit := range [][2]string{{`"action": "update"`, `"action": "updatf"`}} {
			bad := slices.Clone(ex)
			copy(bad[i:], edit[1])
			if _, err := core.VerifyAuditExport(bytes.NewReader(bad)); !errors.Is(err, core.ErrConflict) {
				t.Errorf("an altered export verifies: %v", err)
			}
		}
	})
}

// TestQuarantineHoldsSecrets: the secret detector is part of the quarantine
// policy, on by default: a memory that holds a key waits for review, with
// the rule as its reason and nothing of the key in the queue's reasons or
// the audit log; the detector can be turned off and given patterns.
func TestQuarantineHoldsSecrets(t *testing.T) {
	ctx := context.Background()
	const key = "AKIAZ7QPVX4M2KD8WNRT"
	e := openAt(t, filepath.Join(t.TempDir(), "memory.db"), core.Options{})
	defer e.Close()
	ms, err := e.RememberBatch(ctx, []core.Input{
		{Content: "the deploy user's access key is " + key},
		{Content: "the deploy user is called ci-bot"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ms[0].Status != core.StatusQuarantined || ms[1].Status != core.StatusActive {
		t.Fatalf("statuses %s and %s, want the key held and the other active", ms[0].Status, ms[1].Status)
	}
	items, err := e.Review(ctx)
	if err != nil || len(items) != 1 || items[0].Memory.ID != ms[0].ID {
		t.Fatalf("review queue %+v, %v", items, err)
	}
	if r := strings.Join(items[0].Reasons, "; "); !strings.Contains(r, "an AWS access key id") || !strings.Contains(r, "aws_access_key") || strings.Contains(r, key[4:]) {
		t.Errorf("reasons %q: want the rule, not the key", r)
	}
	log, err := e.Audit(ctx, core.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range log {
		if strings.Contains(a.Detail, key[4:]) {
			t.Errorf("audit entry %d (%s) holds the key: %s", a.Seq, a.Action, a.Detail)
		}
	}

	off := openAt(t, filepath.Join(t.TempDir(), "memory.db"), core.Options{Govern: core.GovernConfig{
		Secrets: secret.Config{Disable: true}}})
	defer off.Close()
	if m := remember(t, off, core.Input{Content: "the deploy user's access key is " + key}); m.Status != core.StatusActive {
		t.Errorf("with the detector off: status %s", m.Status)
	}
	pat := openAt(t, filepath.Join(t.TempDir(), "memory.db"), core.Options{Govern: core.GovernConfig{
		Secrets: secret.Config{Patterns: []string{`ACME-[0-9]{8}`}}}})
	defer pat.Close()
	if m := remember(t, pat, core.Input{Content: "the licence is ACME-20240501"}); m.Status != core.StatusQuarantined {
		t.Errorf("with an extra pattern: status %s", m.Status)
	}
	b, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "memory.db")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Open(ctx, core.Options{Backend: b, Govern: core.GovernConfig{Secrets: secret.Config{Patterns: []string{"("}}}}); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "governance.secrets.patterns") {
		t.Errorf("open with a malformed pattern: %v", err)
	}
	b.Close()
}
