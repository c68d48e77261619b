package transfer

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/memos-go/memos/core"
)

// MemUOptions says how to read a MemU store.
type MemUOptions struct {
	// KeepEmbeddings keeps MemU's embedding BLOBs (little-endian float32) as
	// vectors of model Model with dimension Dim, which must be the target
	// store's model: memos never mixes models in one store. Without it every
	// memory is embedded again with the store's embedder.
	KeepEmbeddings bool
	Model          string
	Dim            int
}

// MemUResult is what ReadMemU found.
type MemUResult struct {
	Request *core.ImportRequest
	// Rows is how many rows the table holds; Skipped rows could not become
	// memories (empty or oversized content), each with a warning.
	Rows, Skipped int
	Warnings      []string
}

// memuColumns are the columns of MemU's memories table that memos reads;
// only content is required.
var memuColumns = []string{"id", "content", "type", "significance", "entities", "emotional_context",
	"source", "created_at", "updated_at", "embedding"}

// ReadMemU reads a MemU memory.db (table memories: id, content, type,
// significance, entities, emotional_context, source, created_at, updated_at,
// embedding) read-only and returns what to import. It tolerates the schema's
// variations: missing columns, NULLs, entities as a JSON list or a comma
// list, types memos does not know (stored as note), timestamps as text or
// Unix seconds; each tolerance that changes a value is a warning. Every
// memory records trust "imported", source "memu:<id>" and MemU's own source
// in its metadata (memu_source), so that forget-source memu: removes an
// import and a second import of the same file adds nothing.
func ReadMemU(ctx context.Context, path string, opts MemUOptions) (*MemUResult, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("memu: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("memu: open %s: %w", path, err)
	}
	defer db.Close()
	table, cols, err := memuTable(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("memu: %s: %w", path, err)
	}
	sel := make([]string, len(memuColumns))
	for i, c := range memuColumns {
		switch {
		case cols[c]:
			sel[i] = `"` + c + `"`
		case c == "id":
			sel[i] = "rowid"
		default:
			sel[i] = "NULL"
		}
	}
	rows, err := db.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM "`+table+`" ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("memu: %s: read %s: %w", path, table, err)
	}
	defer rows.Close()
	res := &MemUResult{Request: &core.ImportRequest{KeepEmbeddings: opts.KeepEmbeddings, Origin: "memu:" + path}}
	for rows.Next() {
		// Every column is read as whatever SQLite holds (MemU stores vary:
		// text ids, float ids, significance as words); memuRow.memory
		// converts, with a warning where it changes or drops a value.
		var r memuRow
		if err := rows.Scan(&r.id, &r.content, &r.typ, &r.significance, &r.entities, &r.emotion,
			&r.source, &r.created, &r.updated, &r.embedding); err != nil {
			return nil, fmt.Errorf("memu: %s: row %d: %w", path, res.Rows+1, err)
		}
		res.Rows++
		m, name, warns, err := r.memory(opts)
		for _, w := range warns {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s", name, w))
		}
		if err != nil {
			return nil, fmt.Errorf("memu: %s: %s: %w", path, name, err)
		}
		if m == nil {
			res.Skipped++
			continue
		}
		res.Request.Memories = append(res.Request.Memories, core.ImportedMemory{Versions: []*core.Memory{m}, Name: "MemU " + name})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("memu: %s: %w", path, err)
	}
	return res, nil
}

// memuTable finds MemU's table (memories, or memory) and its columns.
func memuTable(ctx context.Context, db *sql.DB) (string, map[string]bool, error) {
	for _, t := range []string{"memories", "memory"} {
		rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, t)
		if err != nil {
			return "", nil, fmt.Errorf("not a readable SQLite database: %w", err)
		}
		cols := map[string]bool{}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return "", nil, err
			}
			cols[strings.ToLower(c)] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return "", nil, fmt.Errorf("not a readable SQLite database: %w", err)
		}
		if len(cols) == 0 {
			continue
		}
		if !cols["content"] {
			return "", nil, fmt.Errorf("%w: table %s has no content column, so it is not a MemU store", core.ErrInvalid, t)
		}
		return t, cols, nil
	}
	return "", nil, fmt.Errorf("%w: no memories table, so it is not a MemU store", core.ErrInvalid)
}

type memuRow struct {
	id, content, typ, significance, entities, emotion, source, created, updated, embedding any
}

// memuText reads a column as text ("" for NULL).
func memuText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case []byte:
		return string(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case time.Time:
		return t.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// memory converts the row; a nil memory (with a warning) skips it. name is
// how messages name the row: "row id <MemU's id>".
func (r *memuRow) memory(opts MemUOptions) (m *core.Memory, name string, warns []string, err error) {
	id := strings.TrimSpace(memuText(r.id))
	if f, ok := r.id.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		id = strconv.FormatInt(int64(f), 10) // 4.0 is row 4
	} else if ok {
		warns = append(warns, fmt.Sprintf("id %s is not a whole number; the source is memu:%s", id, id))
	}
	name = "row id " + id
	switch {
	case id == "":
		return nil, "row without an id", append(warns, "skipped: no id, so a second import could not recognise it"), nil
	case !utf8.ValidString(id) || len(id) > 256:
		return nil, "row with an unreadable id", append(warns, "skipped: the id is not UTF-8 text of at most 256 bytes"), nil
	}
	content := memuText(r.content)
	switch {
	case !utf8.ValidString(content):
		return nil, name, append(warns, "skipped: content is not valid UTF-8"), nil
	case strings.TrimSpace(content) == "":
		return nil, name, append(warns, "skipped: content is empty"), nil
	case len(content) > core.MaxContentBytes:
		return nil, name, append(warns, fmt.Sprintf("skipped: content is %d bytes, over memos' limit of %d", len(content), core.MaxContentBytes)), nil
	}
	m = &core.Memory{
		Content:          content,
		Type:             core.TypeNote,
		Significance:     5,
		EmotionalContext: strings.TrimSpace(memuText(r.emotion)),
		Source:           "memu:" + id,
		Trust:            core.Trust{Level: core.TrustImported, Score: core.TrustImported.DefaultScore()},
		Status:           core.StatusActive,
		Metadata:         map[string]any{},
	}
	if s := strings.TrimSpace(memuText(r.source)); s != "" {
		m.Metadata["memu_source"] = s
	}
	if len(m.Metadata) == 0 {
		m.Metadata = nil
	}
	if typ := memuText(r.typ); strings.TrimSpace(typ) != "" {
		if pt, err := core.ParseType(strings.ToLower(strings.TrimSpace(typ))); err == nil {
			m.Type = pt
		} else {
			warns = append(warns, fmt.Sprintf("type %q is not a memos type; stored as note", typ))
		}
	}
	m.Pool = m.Type.DefaultPool()
	if sig, ok, w := memuSignificance(r.significance); ok {
		m.Significance = sig
		if w != "" {
			warns = append(warns, w)
		}
	} else if w != "" {
		warns = append(warns, w)
	}
	m.Entities = memuEntities(memuText(r.entities))
	if m.CreatedAt, err = parseTime(r.created); err != nil {
		return nil, name, warns, fmt.Errorf("created_at: %w", err)
	}
	if m.UpdatedAt, err = parseTime(r.updated); err != nil {
		return nil, name, warns, fmt.Errorf("updated_at: %w", err)
	}
	switch {
	case m.CreatedAt.IsZero() && !m.UpdatedAt.IsZero():
		m.CreatedAt = m.UpdatedAt
		warns = append(warns, "no created_at; used updated_at")
	case m.CreatedAt.IsZero():
		// A fixed time, not the import's: a second import must find the row again.
		m.CreatedAt = time.Unix(0, 0).UTC()
		m.UpdatedAt = m.CreatedAt
		warns = append(warns, "no created_at or updated_at; recorded as 1970-01-01")
	case m.UpdatedAt.IsZero() || m.UpdatedAt.Before(m.CreatedAt):
		m.UpdatedAt = m.CreatedAt
	}
	if opts.KeepEmbeddings && r.embedding != nil {
		b, ok := r.embedding.([]byte)
		if !ok {
			warns = append(warns, "embedding is not a BLOB; it is embedded again")
		} else if len(b) > 0 {
			v, err := memuVector(b, opts.Dim)
			if err != nil {
				return nil, name, warns, fmt.Errorf("embedding: %w", err)
			}
			m.Embedding = core.Embedding{Model: opts.Model, Vector: v}
		}
	}
	return m, name, warns, nil
}

// memuSignificance reads a significance: a number (rounded, clamped to
// 1–10) or a numeric text. ok is false for NULL, "" or text that is not a
// number, which keep the default; warn says what changed.
func memuSignificance(v any) (sig int, ok bool, warn string) {
	var f float64
	switch t := v.(type) {
	case nil:
		return 0, false, ""
	case int64:
		f = float64(t)
	case float64:
		f = t
	default:
		s := strings.TrimSpace(memuText(v))
		if s == "" {
			return 0, false, ""
		}
		var err error
		if f, err = strconv.ParseFloat(s, 64); err != nil || math.IsNaN(f) {
			return 0, false, fmt.Sprintf("significance %q is not a number; stored as 5", s)
		}
	}
	r := math.Round(f)
	if r < 1 || r > 10 {
		return int(min(max(r, 1), 10)), true, fmt.Sprintf("significance %v is outside 1–10; clamped", f)
	}
	return int(r), true, ""
}

// memuEntities reads a JSON list of names or a comma-separated list.
func memuEntities(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return nil
	}
	var list []string
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		list = strings.Split(s, ",")
	}
	out := list[:0]
	for _, e := range list {
		if e = strings.TrimSpace(e); e != "" && utf8.ValidString(e) && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// timeLayouts are the text forms of time memos reads (MemU stores write them): RFC 3339 and
// SQLite's CURRENT_TIMESTAMP (UTC), with or without fractions.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"}

// memuTime reads a timestamp: text in timeLayouts, or Unix seconds (or
// milliseconds, when too large for seconds). NULL and "" give the zero time.
func parseTime(v any) (time.Time, error) {
	switch t := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return t.UTC(), nil
	case int64:
		return unixTime(float64(t)), nil
	case float64:
		return unixTime(t), nil
	case []byte:
		return parseTime(string(t))
	case string:
		s := strings.TrimSpace(t)
		if s == "" {
			return time.Time{}, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return unixTime(f), nil
		}
		for _, l := range timeLayouts {
			if tm, err := time.Parse(l, s); err == nil {
				return tm.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("%w: cannot read %q as a time (want RFC 3339, \"YYYY-MM-DD HH:MM:SS\" or Unix seconds)", core.ErrInvalid, s)
	}
	return time.Time{}, fmt.Errorf("%w: cannot read a %T as a time", core.ErrInvalid, v)
}

func unixTime(f float64) time.Time {
	if f > 1e11 { // milliseconds: seconds would be after the year 5000
		f /= 1000
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// memuVector decodes a little-endian float32 BLOB of dim values.
func memuVector(b []byte, dim int) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a whole number of float32 values", core.ErrInvalid, len(b))
	}
	if len(b)/4 != dim {
		return nil, fmt.Errorf("%w: %d dimensions, the store's model has %d", core.ErrDimensionMismatch, len(b)/4, dim)
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
