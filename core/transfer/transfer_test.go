package transfer_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/memos-go/memos/backends/bolt"
	"github.com/memos-go/memos/backends/sqlite"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/transfer"
	"github.com/memos-go/memos/embedders/hash"
)

func open(t *testing.T, backend string) *core.Engine {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	var b core.Backend
	var err error
	switch backend {
	case "bolt":
		b, err = bolt.Open(ctx, bolt.Config{Path: filepath.Join(dir, "memory.bolt")})
	default:
		b, err = sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "memory.db")})
	}
	if err != nil {
		t.Fatal(err)
	}
	emb, err := hash.Open(ctx, hash.Config{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// fill writes a store with what an export must carry: several namespaces,
// versions, validity, trust, statuses, metadata, sessions and edges.
func fill(t *testing.T, eng *core.Engine) {
	t.Helper()
	ctx := context.Background()
	score := 0.35
	ins := []core.Input{
		{Content: "Alice prefers open-source tools", Type: core.TypePreference, Significance: 6, Entities: []string{"Alice"}, Source: "conversation:7#turn-3"},
		{Content: "Alice's home lab runs Proxmox on three nodes", Session: "chat-1", ValidFrom: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)},
		{Content: "The staging cluster is in Frankfurt", Namespace: "project:infra", TrustLevel: core.TrustImported, TrustScore: &score, Metadata: map[string]any{"k": "v", "n": 3.0}},
		{Content: "Bob was angry about the outage", EmotionalContext: "anger", Status: core.StatusQuarantined},
		{Content: "Turn: we moved the meeting to Friday", Type: core.TypeTurn, Session: "chat-1"},
	}
	var ms []*core.Memory
	for _, in := range ins {
		m, err := eng.Remember(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	four := "Alice's home lab runs Proxmox on four nodes"
	if _, err := eng.Update(ctx, ms[1].ID, core.Patch{Content: &four}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.SetValidity(ctx, ms[0].ID, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}); err != nil {
		t.Fatal(err)
	}
	for _, e := range []core.Edge{
		{From: ms[0].ID, To: ms[1].ID, Type: core.EdgeRelatesTo, Weight: 0.5, Source: "test"},
		{From: ms[4].ID, To: ms[1].ID, Type: core.EdgeDerivedFrom},
	} {
		if _, err := eng.Link(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// Forgotten memories leave a gap in the ids: the copy must not care.
	gone, err := eng.Remember(ctx, core.Input{Content: "to be forgotten"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Forget(ctx, gone.ID, "test"); err != nil {
		t.Fatal(err)
	}
}

func export(t *testing.T, eng *core.Engine, opts core.ExportOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := transfer.Export(context.Background(), eng, &buf, opts); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// canonical renumbers ids in order of appearance and drops the export time,
// so that two exports of equal content compare equal.
func canonical(t *testing.T, s string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var h map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatal(err)
	}
	delete(h, "exported_at")
	hb, _ := json.Marshal(h)
	ids := map[string]string{}
	idRE := regexp.MustCompile(`"(id|from|to)":(\d+)`)
	body := idRE.ReplaceAllStringFunc(strings.Join(lines[1:], "\n"), func(m string) string {
		p := idRE.FindStringSubmatch(m)
		n, ok := ids[p[2]]
		if !ok {
			n = "#" + string(rune('A'+len(ids)))
			ids[p[2]] = n
		}
		return `"` + p[1] + `":"` + n + `"`
	})
	return string(hb) + "\n" + body
}

func TestExportImportRoundTrip(t *testing.T) {
	for _, target := range []string{"sqlite", "bolt"} {
		t.Run(target, func(t *testing.T) {
			ctx := context.Background()
			src := open(t, "sqlite")
			fill(t, src)
			first := export(t, src, core.ExportOptions{})

			dst := open(t, target)
			// An existing store: the imported memories get new ids.
			if _, err := dst.Remember(ctx, core.Input{Content: "already here"}); err != nil {
				t.Fatal(err)
			}
			_, req, err := transfer.ReadJSONL(strings.NewReader(first))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := dst.Import(ctx, *req)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Imported != 5 || rep.Skipped != 0 || rep.Versions != 7 || rep.Edges != 2 {
				t.Fatalf("import report %+v, want 5 memories, 7 versions, 2 edges", rep)
			}
			if rep.IDs[0] == 1 {
				t.Fatalf("the first imported memory took id 1, which the store already used")
			}
			// Everything but the pre-existing memory, exported again, is the
			// same file apart from ids.
			second := export(t, dst, core.ExportOptions{})
			secondLines := strings.Split(second, "\n")
			var kept []string
			for _, l := range secondLines {
				if !strings.Contains(l, "already here") {
					kept = append(kept, l)
				}
			}
			second = strings.Replace(strings.Join(kept, "\n"), `"memories":6`, `"memories":5`, 1)
			if a, b := canonical(t, first), canonical(t, second); a != b {
				t.Fatalf("export → import → export changed the data:\n%s\n---\n%s", a, b)
			}

			// The imported memories are searchable, and a quarantined one stays invisible.
			res, err := dst.Search(ctx, core.SearchRequest{Query: "proxmox nodes"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].Memory.ID != rep.IDs[1] {
				t.Fatalf("search after import: %+v", res.Hits)
			}
			if res, _ := dst.Search(ctx, core.SearchRequest{Query: "outage"}); len(res.Hits) != 0 {
				t.Fatalf("a quarantined memory became visible after import")
			}
			// Importing again adds nothing.
			rep2, err := dst.Import(ctx, *req)
			if err != nil {
				t.Fatal(err)
			}
			if rep2.Imported != 0 || rep2.Skipped != 5 || rep2.IDs[1] != rep.IDs[1] {
				t.Fatalf("second import %+v, want everything skipped", rep2)
			}
			// Every imported version is bound by an audit entry.
			if vr, err := dst.VerifyAudit(ctx); err != nil || vr.Versions != 8 || vr.Unbound != 0 {
				t.Fatalf("verify after import: %+v, %v", vr, err)
			}
		})
	}
}

func TestExportOnlyNamespace(t *testing.T) {
	eng := open(t, "sqlite")
	fill(t, eng)
	out := export(t, eng, core.ExportOptions{Namespaces: []string{"project:infra"}})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "Frankfurt") {
		t.Fatalf("namespace export:\n%s", out)
	}
}

func storeSeq(t *testing.T, eng *core.Engine) uint64 {
	t.Helper()
	var seq uint64
	if err := eng.Backend().View(context.Background(), func(tx core.ReadTx) error {
		var err error
		seq, err = tx.Seq()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return seq
}

func TestBadExportImportsNothing(t *testing.T) {
	src := open(t, "sqlite")
	fill(t, src)
	good := strings.Split(strings.TrimSpace(export(t, src, core.ExportOptions{})), "\n")
	join := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	cases := []struct {
		name, file, want string
	}{
		{"empty", "", "the file is empty"},
		{"truncated", join(good[:4]...), "truncated"},
		{"not json", join(append(append([]string{}, good[:2]...), `{"kind":"memory",`)...), "line 3"},
		{"not an export", join(`{"format":"other","version":1}`), "not a memos export"},
		{"future version", join(strings.Replace(good[0], `"version":1`, `"version":9`, 1)), "format version 9"},
		{"unknown field", join(good[0], strings.Replace(good[1], `"kind"`, `"bogus":1,"kind"`, 1)), "line 2"},
		{"unknown kind", join(good[0], `{"kind":"widget"}`), `unknown kind "widget"`},
		{"dangling edge", join(good[0], `{"kind":"edge","edge":{"from":1,"to":99,"type":"relates_to","weight":1,"created_at":"2025-01-01T00:00:00Z"}}`), "line 2"},
		{"versions out of order", join(good[0], strings.Replace(good[1], `"version":1`, `"version":2`, 1)), "versions must be"},
		// encoding/json would store these as U+FFFD; they are refused, naming the field.
		{"content not UTF-8", join(append([]string{good[0], strings.Replace(good[1], `"content":"`, "\"content\":\"ab\xff", 1)}, good[2:]...)...),
			"line 2: invalid input: versions[0].content is not valid UTF-8 (byte 3)"},
		{"half a surrogate pair", join(append([]string{good[0], strings.Replace(good[1], `"content":"`, `"content":"\n\ud800`, 1)}, good[2:]...)...),
			"versions[0].content is not valid UTF-8 (byte 2)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := transfer.ReadJSONL(strings.NewReader(c.file))
			if err == nil || !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want an invalid-input error containing %q", err, c.want)
			}
		})
	}
	// A file that reads well but holds an invalid memory stores nothing.
	bad := join(good[0], strings.Replace(good[1], `"significance":6`, `"significance":60`, 1), join(good[2:]...))
	_, req, err := transfer.ReadJSONL(strings.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	dst := open(t, "sqlite")
	before := storeSeq(t, dst)
	// The error names the line and the memory's id in the file.
	var first transfer.Line
	if err := json.Unmarshal([]byte(good[1]), &first); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Import(context.Background(), *req); !errors.Is(err, core.ErrInvalid) ||
		!strings.Contains(err.Error(), fmt.Sprintf("line 2 (memory %d) version 1", first.ID)) {
		t.Fatalf("import of an invalid memory: %v", err)
	}
	if seq := storeSeq(t, dst); seq != before {
		t.Fatalf("a rejected import wrote to the store (seq %d)", seq)
	}
}

// memuDB writes a MemU-schema memory.db with SQLite itself.
func memuDB(t *testing.T, schema string, rows ...[]any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	cols := regexp.MustCompile(`\(\s*([\s\S]*)\)`).FindStringSubmatch(schema)[1]
	n := len(strings.Split(cols, ","))
	ph := strings.TrimSuffix(strings.Repeat("?,", n), ",")
	for _, r := range rows {
		if _, err := db.Exec(`INSERT INTO memories VALUES (`+ph+`)`, r...); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

const memuSchema = `CREATE TABLE memories (
	id INTEGER PRIMARY KEY, content TEXT, type TEXT, significance INTEGER, entities TEXT,
	emotional_context TEXT, source TEXT, created_at TEXT, updated_at TEXT, embedding BLOB)`

func blob(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func TestImportMemU(t *testing.T) {
	ctx := context.Background()
	path := memuDB(t, memuSchema,
		[]any{1, "Alice prefers tea over coffee", "preference", 6, `["Alice"]`, "fond", "chat:1", "2024-05-01 10:00:00", "2024-05-02 11:00:00", blob(1, 0)},
		[]any{2, "Bob lives in Lisbon", "fact", nil, "Bob, Lisbon", nil, nil, "2024-05-03T09:00:00Z", nil, nil},
		[]any{3, "Something odd happened", "episode", 12, nil, "", "", int64(1714723200), nil, nil},
		[]any{4, "   ", "fact", 5, nil, nil, nil, "2024-05-04 10:00:00", nil, nil},
		[]any{5, "No time at all", nil, nil, "[]", nil, nil, nil, nil, nil},
	)
	eng := open(t, "sqlite")
	res, err := transfer.ReadMemU(ctx, path, transfer.MemUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 5 || res.Skipped != 1 || len(res.Request.Memories) != 4 {
		t.Fatalf("read %d rows, skipped %d, kept %d; want 5, 1, 4", res.Rows, res.Skipped, len(res.Request.Memories))
	}
	warns := strings.Join(res.Warnings, "\n")
	for _, w := range []string{`type "episode"`, "significance 12", "content is empty", "recorded as 1970-01-01"} {
		if !strings.Contains(warns, w) {
			t.Errorf("no warning about %s in:\n%s", w, warns)
		}
	}
	dry := *res.Request
	dry.DryRun = true
	before := storeSeq(t, eng)
	if rep, err := eng.Import(ctx, dry); err != nil || rep.Imported != 4 || storeSeq(t, eng) != before {
		t.Fatalf("dry run: %+v, %v, seq %d", rep, err, storeSeq(t, eng))
	}
	rep, err := eng.Import(ctx, *res.Request)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := eng.Get(ctx, rep.IDs[0])
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	if alice.Content != "Alice prefers tea over coffee" || alice.Type != core.TypePreference || alice.Significance != 6 ||
		alice.EmotionalContext != "fond" || alice.Source != "memu:1" || alice.Metadata["memu_source"] != "chat:1" ||
		!alice.CreatedAt.Equal(want) || !alice.UpdatedAt.Equal(want.Add(25*time.Hour)) ||
		alice.Trust.Level != core.TrustImported || len(alice.Entities) != 1 {
		t.Fatalf("imported row 1 as %+v", alice)
	}
	bob, _ := eng.Get(ctx, rep.IDs[1])
	if strings.Join(bob.Entities, "|") != "Bob|Lisbon" || bob.Significance != 5 {
		t.Fatalf("comma entities / NULL significance: %+v", bob)
	}
	odd, _ := eng.Get(ctx, rep.IDs[2])
	if odd.Type != core.TypeNote || odd.Significance != 10 || !odd.CreatedAt.Equal(time.Unix(1714723200, 0)) {
		t.Fatalf("odd row: %+v", odd)
	}
	// The vectors are this store's, not MemU's (no --keep-embeddings).
	if alice.Embedding.Model != eng.Model().ID || alice.Embedding.Dim() != eng.Model().Dim {
		t.Fatalf("embedding %s/%d, want the store's model", alice.Embedding.Model, alice.Embedding.Dim())
	}
	// A second import of the same file adds nothing.
	res2, err := transfer.ReadMemU(ctx, path, transfer.MemUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := eng.Import(ctx, *res2.Request)
	if err != nil || rep2.Imported != 0 || rep2.Skipped != 4 {
		t.Fatalf("second import: %+v, %v", rep2, err)
	}
}

func TestImportMemUVariants(t *testing.T) {
	ctx := context.Background()
	// Only some columns; the id comes from the rowid.
	path := memuDB(t, `CREATE TABLE memories (content TEXT, created_at TEXT)`,
		[]any{"Carol runs the Berlin office", "2023-01-02"})
	res, err := transfer.ReadMemU(ctx, path, transfer.MemUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Request.Memories[0].Versions[0]
	if m.Source != "memu:1" || m.Type != core.TypeNote || m.Significance != 5 || !m.CreatedAt.Equal(time.Date(2023, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("minimal schema read as %+v", m)
	}

	// Not a MemU store: a clear error.
	other := memuDB(t, `CREATE TABLE notes (body TEXT)`)
	if _, err := transfer.ReadMemU(ctx, other, transfer.MemUOptions{}); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "not a MemU store") {
		t.Fatalf("a database without a memories table: %v", err)
	}
	// A bad timestamp names the row.
	bad := memuDB(t, memuSchema, []any{7, "x", "fact", 5, nil, nil, nil, "yesterday", nil, nil})
	if _, err := transfer.ReadMemU(ctx, bad, transfer.MemUOptions{}); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "row id 7") {
		t.Fatalf("bad created_at: %v", err)
	}
	// Kept embeddings must have the store's dimension.
	withVec := memuDB(t, memuSchema, []any{1, "x", "fact", 5, nil, nil, nil, "2024-01-01", nil, blob(1, 2, 3)})
	if _, err := transfer.ReadMemU(ctx, withVec, transfer.MemUOptions{KeepEmbeddings: true, Model: "m", Dim: 256}); !errors.Is(err, core.ErrDimensionMismatch) {
		t.Fatalf("a 3-dimension MemU vector for a 256-dimension store: %v", err)
	}
}

// TestImportMemULooseTypes: MemU stores hold text ids, float ids and
// significance in words; such rows are read with a warning where a value
// changes, and the source keeps MemU's id.
func TestImportMemULooseTypes(t *testing.T) {
	ctx := context.Background()
	path := memuDB(t, `CREATE TABLE memories (id, content TEXT, type TEXT, significance, entities TEXT,
		emotional_context TEXT, source TEXT, created_at TEXT, updated_at TEXT, embedding BLOB)`,
		[]any{"a1b2-c3", "Dana plays jazz piano", "fact", "high", nil, nil, nil, "2024-01-01", nil, nil},
		[]any{2.5, "Eve runs marathons", "fact", "7", nil, nil, nil, "2024-01-02", nil, nil},
		[]any{4.0, "Frank keeps bees", "fact", 6.4, nil, nil, nil, "2024-01-03", nil, nil},
		[]any{nil, "Gina has no id", "fact", 5, nil, nil, nil, "2024-01-04", nil, nil},
	)
	res, err := transfer.ReadMemU(ctx, path, transfer.MemUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, im := range res.Request.Memories {
		m := im.Versions[0]
		got = append(got, fmt.Sprintf("%s %d", m.Source, m.Significance))
	}
	if strings.Join(got, ", ") != "memu:2.5 7, memu:4 6, memu:a1b2-c3 5" || res.Skipped != 1 {
		t.Fatalf("read %q, skipped %d", got, res.Skipped)
	}
	warns := strings.Join(res.Warnings, "\n")
	for _, w := range []string{`row id a1b2-c3: significance "high" is not a number`, "row id 2.5: id 2.5 is not a whole number", "row without an id: skipped"} {
		if !strings.Contains(warns, w) {
			t.Errorf("no warning %q in:\n%s", w, warns)
		}
	}
	eng := open(t, "sqlite")
	if rep, err := eng.Import(ctx, *res.Request); err != nil || rep.Imported != 3 {
		t.Fatalf("import: %+v, %v", rep, err)
	}
}

func TestImportMemUKeepEmbeddings(t *testing.T) {
	ctx := context.Background()
	eng := open(t, "sqlite")
	dim := eng.Model().Dim
	v := make([]float32, dim)
	v[3] = 2 // not unit length: the engine normalises it
	path := memuDB(t, memuSchema, []any{1, "kept vector", "fact", 5, nil, nil, nil, "2024-01-01", nil, blob(v...)})
	res, err := transfer.ReadMemU(ctx, path, transfer.MemUOptions{KeepEmbeddings: true, Model: eng.Model().ID, Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eng.Import(ctx, *res.Request)
	if err != nil {
		t.Fatal(err)
	}
	if rep.KeptEmbeddings != 1 || rep.Embedded != 0 {
		t.Fatalf("report %+v, want the vector kept", rep)
	}
	m, _ := eng.Get(ctx, rep.IDs[0])
	if m.Embedding.Vector[3] != 1 {
		t.Fatalf("kept vector %v, want MemU's, normalised", m.Embedding.Vector[:4])
	}
}
