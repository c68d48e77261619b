package postgres_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memos-go/memos/backends/postgres"
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/query"
	"github.com/memos-go/memos/core/text"
)

// A store at schema version 1, whose terms and token counts an older
// tokenizer made (Go's Unicode tables; stood in for here by wrong ones),
// is migrated at open: the memories whose content is not ASCII get their
// terms and counts again, the store's token total follows, and a query of
// Korean or Russian words finds what FTS5 would.
func TestRetokenizeMigration(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	schema := schemaFor(t, dsn, t.Name())
	open := func() *postgres.DB {
		db, err := postgres.Open(ctx, postgres.Config{DSN: dsn, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	contents := []string{"서울에서 한국 음식을 먹었다", "Маша ела ёлку на Новый год", "plain ASCII text stays as it was"}
	ids := map[string]int64{}
	want := 0
	if err := db.Update(ctx, func(tx driver.Tx) error {
		for _, c := range contents {
			m := &driver.Memory{Version: 1, Namespace: "default", Pool: driver.PoolMemory, Type: driver.TypeFact,
				Content: c, Significance: 5, Trust: driver.Trust{Level: driver.TrustCertain, Score: 1}, Status: driver.StatusActive,
				CreatedAt: time.Now(), UpdatedAt: time.Now()}
			if err := tx.Insert(m); err != nil {
				return err
			}
			ids[c] = m.ID
			want += len(text.Tokenize(c))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	s := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		`UPDATE ` + s + `.memories SET ntokens = 99, terms = array_to_tsvector(ARRAY['stale']) WHERE content ~ '[^\x01-\x7f]'`,
		`UPDATE ` + s + `.store SET tokens = (SELECT sum(ntokens) FROM ` + s + `.memories)`,
		`UPDATE ` + s + `.meta SET value = '1' WHERE key = 'postgres.schema_version'`,
		`DROP TABLE ` + s + `.blobs`, // version 4's
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	db = open()
	defer db.Close()
	var version string
	var tokens int
	if err := conn.QueryRow(ctx, `SELECT value FROM `+s+`.meta WHERE key = 'postgres.schema_version'`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT tokens FROM `+s+`.store`).Scan(&tokens); err != nil {
		t.Fatal(err)
	}
	if version != strconv.Itoa(postgres.SchemaVersion) || tokens != want {
		t.Errorf("schema version %s, %d tokens; want %d, %d", version, tokens, postgres.SchemaVersion, want)
	}
	for _, c := range contents {
		var n int
		if err := conn.QueryRow(ctx, `SELECT ntokens FROM `+s+`.memories WHERE id = $1`, ids[c]).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != len(text.Tokenize(c)) {
			t.Errorf("%q counts %d tokens, want %d", c, n, len(text.Tokenize(c)))
		}
	}
	for q, c := range map[string]string{"한국": contents[0], "ёлку": contents[1], "ascii": contents[2]} {
		hits, err := db.SearchKeyword(ctx, query.Natural(q), driver.Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || hits[0].ID != ids[c] {
			t.Errorf("search %q: %v, want memory %d", q, hits, ids[c])
		}
	}
}
