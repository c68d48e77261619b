package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// An engine that opens a store cold builds its vector index from the whole
// change log, in pages; it must answer as an engine that followed every
// write as it happened, also for writes another process made after the
// first engine opened (edits that change the vector, forgets, new
// memories).
func TestColdOpenMatchesFollower(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	cfg := postgres.Config{DSN: dsn, Schema: schemaFor(t, dsn, t.Name())}
	emb, err := hash.New(hash.Config{Dim: 64})
	if err != nil {
		t.Fatal(err)
	}
	open := func() *core.Engine {
		db, err := postgres.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		e, err := core.Open(ctx, core.Options{Backend: db, Embedder: emb, Govern: core.GovernConfig{Contradictions: core.ContradictOff},
			Search: core.SearchConfig{DisableAccessTracking: true}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	words := []string{"harbour", "lantern", "copper", "meadow", "signal", "orchard", "granite", "violet", "thunder", "willow"}
	text := func(i int) string {
		return fmt.Sprintf("%s %s %s note %d", words[i%10], words[(i/10)%10], words[(i/3)%10], i)
	}
	a := open()
	defer a.Close()
	var ins []core.Input
	for i := range 900 {
		ins = append(ins, core.Input{Content: text(i)})
	}
	ms, err := a.RememberBatch(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}
	// Another process writes after a opened.
	b := open()
	for i := 0; i < len(ms); i += 7 {
		if _, err := b.Forget(ctx, ms[i].ID, "test"); err != nil {
			t.Fatal(err)
		}
	}
	for i := 3; i < len(ms); i += 11 {
		if i%7 == 0 {
			continue // forgotten above
		}
		c := text(i + 5000)
		if _, err := b.Update(ctx, ms[i].ID, core.Patch{Content: &c}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		if _, err := b.Remember(ctx, core.Input{Content: text(i + 9000)}); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()

	cold := open()
	defer cold.Close()
	for i, w := range words {
		q := w + " " + words[(i+3)%10]
		if got, want := vectorIDs(t, cold, q, 20), vectorIDs(t, a, q, 20); !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("vector search %q: the cold engine finds %v, the following one %v", q, got, want)
		}
	}
}
