package core_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	_ "github.com/memos-go/memos/backends/bolt"
	_ "github.com/memos-go/memos/backends/postgres"
	_ "github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/embedders/hash"
)

// packFixture stores a small agent memory: facts, turns of two sessions,
// lessons and edges. It returns the memories in order.
func packFixture(t *testing.T, e *core.Engine) []*core.Memory {
	t.Helper()
	ctx := context.Background()
	ins := []core.Input{
		{Content: "Alice prefers open-source tools", Type: core.TypePreference, Significance: 7, Entities: []string{"Alice"}, Source: "conversation:1#turn-2", TrustLevel: core.TrustCertain},
		{Content: "Alice's home lab runs Proxmox on three nodes", Source: "conversation:1#turn-5", ValidFrom: day(2025, 3, 1)},
		{Content: "Alice asked about backing up the Proxmox cluster", Type: core.TypeTurn, Session: "conversation:1"},
		{Content: "Proxmox Backup Server was suggested for the cluster", Type: core.TypeTurn, Session: "conversation:1"},
		{Content: "Alice said she would try it at the weekend", Type: core.TypeTurn, Session: "conversation:1"},
		{Content: "When a user asks about backups, ask where the data lives first", Type: core.TypeLesson, Significance: 6},
		{Content: "Bob drinks his coffee black", Significance: 3},
		{Content: "The backup target is a Synology NAS in the basement", Significance: 5, TrustLevel: core.TrustImported},
		{Content: "Alice's lab once ran VMware ESXi", Significance: 4, ValidTo: day(2025, 3, 1)},
		{Content: "Core identity: the user is Alice, a site reliability engineer", Significance: 9, TrustLevel: core.TrustCertain},
	}
	ms, err := e.RememberBatch(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}
	for _, ed := range []core.Edge{
		{From: ms[7].ID, To: ms[1].ID, Type: core.EdgeRelatesTo},
		{From: ms[3].ID, To: ms[7].ID, Type: core.EdgeSupports, Weight: 0.5},
		{From: ms[8].ID, To: ms[1].ID, Type: core.EdgeTemporalPrecedes},
	} {
		if _, err := e.Link(ctx, ed); err != nil {
			t.Fatal(err)
		}
	}
	return ms
}

func TestContextPack(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	ms := packFixture(t, e)
	pk, err := e.ContextPack(ctx, core.PackRequest{Query: "how should alice do backups of her proxmox lab", Budget: 800})
	if err != nil {
		t.Fatal(err)
	}
	md := pk.Markdown()
	n, err := core.CountTokens(md)
	if err != nil {
		t.Fatal(err)
	}
	if pk.Tokens != n || n > pk.Budget || pk.Tokenizer != "cl100k_base" {
		t.Fatalf("pack says %d tokens (%s), the Markdown has %d, budget %d", pk.Tokens, pk.Tokenizer, n, pk.Budget)
	}
	if len(pk.Memories) == 0 || len(pk.Lessons) != 1 || pk.Lessons[0].ID != ms[5].ID {
		t.Fatalf("pack: %d memories, lessons %+v", len(pk.Memories), pk.Lessons)
	}
	for _, it := range append(pk.Memories, pk.Neighbours...) {
		if it.Type == core.TypeLesson || it.ID == ms[8].ID {
			t.Fatalf("%d (%s) does not belong among the memories valid now", it.ID, it.Type)
		}
		if it.Version < 1 || it.CreatedAt.IsZero() || it.Trust.Level == "" || it.Tokens <= 0 {
			t.Fatalf("citation incomplete: %+v", it)
		}
	}
	if !strings.HasPrefix(md, "# Context from memory\nQuery: how should alice do backups of her proxmox lab\n") ||
		!strings.Contains(md, "\n## Memories\n- [#") || !strings.Contains(md, "\n## Lessons\n- [#6 v1] When a user asks about backups") ||
		!strings.Contains(md, "source conversation:1#turn-5; valid since 2025-03-01") {
		t.Fatalf("markdown:\n%s", md)
	}
	// The same store and request give the same bytes, although the first
	// pack recorded accesses.
	again, err := e.ContextPack(ctx, core.PackRequest{Query: "how should alice do backups of her proxmox lab", Budget: 800})
	if err != nil {
		t.Fatal(err)
	}
	j1, _ := pk.JSON()
	j2, _ := again.JSON()
	if !bytes.Equal(j1, j2) || again.Markdown() != md {
		t.Fatalf("two runs differ:\n%s\n%s", j1, j2)
	}
	m, _ := e.Get(ctx, pk.Memories[0].ID)
	if m.AccessCount != 2 {
		t.Fatalf("access count %d, want 2 after two packs", m.AccessCount)
	}
	// No budget is ever exceeded; smaller budgets hold fewer items.
	prev := 1 << 30
	for _, budget := range []int{400, 200, 120, 80, 60, 40} {
		p, err := e.ContextPack(ctx, core.PackRequest{Query: "how should alice do backups of her proxmox lab", Budget: budget})
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		n, _ := core.CountTokens(p.Markdown())
		items := len(p.Memories) + len(p.Lessons) + len(p.Neighbours)
		if n > budget || p.Tokens != n || items > prev {
			t.Fatalf("budget %d: %d tokens (pack says %d), %d items after %d", budget, n, p.Tokens, items, prev)
		}
		if p.Omitted == 0 && budget < 200 {
			t.Fatalf("budget %d: nothing omitted", budget)
		}
		prev = items
	}
	if _, err := e.ContextPack(ctx, core.PackRequest{Query: "alice", Budget: 5}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("a budget below the header: %v", err)
	}
	if _, err := e.ContextPack(ctx, core.PackRequest{Budget: 100}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("no query: %v", err)
	}
}

func TestBootstrapPack(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	ms := packFixture(t, e)
	// Use the NAS fact a few times: among equals, the most used comes first.
	for range 2 {
		if _, err := e.Search(ctx, core.SearchRequest{Query: "synology nas basement", NoExpand: true, Limit: 1}); err != nil {
			t.Fatal(err)
		}
	}
	pk, err := e.ContextPack(ctx, core.PackRequest{Bootstrap: true, Budget: 120})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, it := range pk.Memories {
		got = append(got, it.ID)
	}
	if len(got) < 2 || got[0] != ms[9].ID || got[1] != ms[0].ID {
		t.Fatalf("bootstrap order %v, want significance 9, then 7 first", got)
	}
	if n, _ := core.CountTokens(pk.Markdown()); n > 120 || pk.Omitted == 0 {
		t.Fatalf("bootstrap pack: %d tokens, %d omitted", n, pk.Omitted)
	}
	full, err := e.ContextPack(ctx, core.PackRequest{Bootstrap: true, Budget: 2000})
	if err != nil {
		t.Fatal(err)
	}
	var order []int64
	for _, it := range full.Memories {
		order = append(order, it.ID)
	}
	// Significance 5 ties: the NAS fact (used twice) before the others.
	i5 := -1
	for i, id := range order {
		if id == ms[7].ID {
			i5 = i
		}
		if id == ms[1].ID && i5 < 0 {
			t.Fatalf("bootstrap order %v: the used memory %d must lead its significance", order, ms[7].ID)
		}
	}
	if len(full.Lessons) != 1 || strings.Contains(full.Markdown(), "VMware") {
		t.Fatalf("bootstrap: lessons %v; an expired memory must not appear", full.Lessons)
	}
	m, _ := e.Get(ctx, ms[9].ID)
	if m.AccessCount != 0 {
		t.Fatal("a bootstrap pack must not record accesses")
	}
}

// openBackend opens the registered backend name in dir, setting its
// config's "path" field, or, for a database backend (a "dsn" field), a
// fresh schema of the test database MEMOS_TEST_PG_DSN names.
func openBackend(t testing.TB, name, dir string) core.Backend {
	t.Helper()
	b, err := tryOpenBackend(t, name, dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tryOpenBackend(t testing.TB, name, dir string) (core.Backend, error) {
	d, err := core.LookupBackend(name)
	if err != nil {
		return nil, err
	}
	cfg := d.NewConfig()
	v := reflect.ValueOf(cfg).Elem()
	set := false
	for i := range v.NumField() {
		switch v.Type().Field(i).Tag.Get("koanf") {
		case "path":
			v.Field(i).SetString(filepath.Join(dir, d.DefaultPath))
			set = true
		case "dsn":
			v.Field(i).SetString(testDatabase(t))
			set = true
		case "schema":
			v.Field(i).SetString(throwawaySchema(t))
		}
	}
	if !set {
		return nil, fmt.Errorf("backend %s has no config field tagged koanf:\"path\" or koanf:\"dsn\"", name)
	}
	b, err := d.Open(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return b, nil
}

// testDatabase returns MEMOS_TEST_PG_DSN, or skips the test (fails it under
// CI=true) when it is not set.
func testDatabase(t testing.TB) string {
	dsn := os.Getenv("MEMOS_TEST_PG_DSN")
	if dsn == "" {
		msg := "MEMOS_TEST_PG_DSN is not set: set it to a PostgreSQL database the tests may create schemas in to compare the postgres backend too (see backends/postgres)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dsn
}

// throwawaySchema names a new schema and drops it when t ends.
func throwawaySchema(t testing.TB) string {
	schema := fmt.Sprintf("t_core_%d_%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, testDatabase(t))
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// TestPacksAreIdenticalAcrossBackends builds the same store on every
// registered backend and checks that packs and explained searches come out
// byte for byte the same.
func TestPacksAreIdenticalAcrossBackends(t *testing.T) {
	names := core.BackendNames()
	if len(names) < 2 {
		t.Logf("only %v registered: comparing runs on one backend", names)
	}
	ctx := context.Background()
	requests := []core.PackRequest{
		{Query: "how should alice do backups of her proxmox lab", Budget: 800},
		{Query: "alice tools", Budget: 100},
		{Query: "what did alice run before", Budget: 300, ValidAt: day(2024, 6, 1)},
		{Query: "coffee OR backups", Budget: 200, MMR: true},
		{Bootstrap: true, Budget: 150},
	}
	var first []string
	var firstName string
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			emb, err := hash.Open(ctx, hash.Config{})
			if err != nil {
				t.Fatal(err)
			}
			e, err := core.Open(ctx, core.Options{Backend: openBackend(t, name, t.TempDir()), Embedder: emb, Now: newClock().now})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			packFixture(t, e)
			var out []string
			for _, req := range requests {
				pk, err := e.ContextPack(ctx, req)
				if err != nil {
					t.Fatalf("%+v: %v", req, err)
				}
				j, err := pk.JSON()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(j), pk.Markdown())
			}
			if first == nil {
				first, firstName = out, name
				return
			}
			for i := range out {
				if out[i] != first[i] {
					t.Fatalf("request %d: %s and %s differ:\n--- %s\n%s\n--- %s\n%s", i/2, firstName, name, firstName, first[i], name, out[i])
				}
			}
		})
	}
	if first == nil {
		t.Fatal("no backend registered")
	}
	_ = fmt.Sprint
	_ = time.Second
}
