// Package sqlrow is the row code the SQL backends (sqlite, postgres) share:
// how a memory, an edge, a change and an audit entry are laid out in
// columns and read back, the paging loops of Scan, Changes and Audit, the
// reads both backends run alike (Reads, over each backend's Statements:
// the SQL dialect is data), and the error cases every SQL driver has
// alike. It imports only the contract (core/driver) and knows no driver: a
// row is anything with Scan(dest ...any) error, as database/sql's and
// pgx's rows are.
package sqlrow

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// TimeLayout is RFC 3339 with a fixed nine-digit fraction, always in UTC.
// The fixed width keeps stored times sortable as text (RFC3339Nano trims
// trailing zeros, which would sort "05Z" after "05.5Z"), and time.Parse with
// time.RFC3339Nano reads it back exactly, to the nanosecond.
const TimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// EncodeTime renders t for storage: UTC, nanosecond precision, "" for the
// zero time. Years outside 0000–9999 cannot be written as RFC 3339.
func EncodeTime(field string, t time.Time) (string, error) {
	if t.IsZero() {
		return "", nil
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return "", driver.Invalidf("%s %v is outside the years 0000–9999", field, t)
	}
	return t.Format(TimeLayout), nil
}

// NullTime is EncodeTime for nullable columns: nil (NULL) for the zero time.
func NullTime(field string, t time.Time) (any, error) {
	s, err := EncodeTime(field, t)
	if err != nil || s == "" {
		return nil, err
	}
	return s, nil
}

// DecodeTime parses a stored time; NULL (nil) and "" are the zero time. The
// result is in UTC with no monotonic reading, so it compares equal (==) to
// the t.UTC().Round(0) that was written.
func DecodeTime(field string, s *string) (time.Time, error) {
	if s == nil || *s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		// Rows imported with plain SQL may use SQLite's own formats.
		for _, layout := range importLayouts {
			if t, err2 := time.Parse(layout, *s); err2 == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("%s %q is not an RFC 3339 time: %w", field, *s, err)
	}
	return t.UTC(), nil
}

// importLayouts are the other time formats DecodeTime accepts: SQLite's
// datetime() text and ISO 8601 without a zone (both read as UTC).
var importLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
}

// EncodeVector packs v as little-endian float32s (MemU's embedding format);
// nil for an empty vector.
func EncodeVector(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector unpacks what EncodeVector wrote for a vector of dim
// dimensions.
func DecodeVector(b []byte, dim int) ([]float32, error) {
	if len(b) != 4*dim {
		return nil, fmt.Errorf("embedding is %d bytes, want %d for dimension %d", len(b), 4*dim, dim)
	}
	if dim == 0 {
		return nil, nil
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// encodeJSON stores v as JSON text, nil (NULL) when empty. Text rather than
// a JSON column type: the store keeps what it got (jsonb, for one, reorders
// keys and normalises numbers).
func encodeJSON(what string, v any, empty bool) (any, error) {
	if empty {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, driver.Invalidf("%s is not JSON-encodable: %v", what, err)
	}
	return string(b), nil
}

// decodeEntities reads a JSON array of strings; NULL, "", "[]" and "null"
// are no entities.
func decodeEntities(s *string) ([]string, error) {
	if s == nil || *s == "" || *s == "[]" || *s == "null" {
		return nil, nil
	}
	var es []string
	if err := json.Unmarshal([]byte(*s), &es); err != nil {
		return nil, fmt.Errorf("entities %q are not a JSON array of strings: %w", *s, err)
	}
	if len(es) == 0 {
		return nil, nil
	}
	return es, nil
}

// decodeMetadata reads a JSON object; numbers come back as float64, as from
// any JSON round trip.
func decodeMetadata(s *string) (map[string]any, error) {
	if s == nil || *s == "" || *s == "null" {
		return nil, nil
	}
	var md map[string]any
	if err := json.Unmarshal([]byte(*s), &md); err != nil {
		return nil, fmt.Errorf("metadata %q is not a JSON object: %w", *s, err)
	}
	if len(md) == 0 {
		return nil, nil
	}
	return md, nil
}

// MemoryCols are the columns of a memory's versioned state, in the order
// MemoryArgs binds and ScanMemory reads them (followed, when reading, by
// the access statistics, which are not versioned). A backend's memories and
// memory_versions tables both have them.
const MemoryCols = `id, version, namespace, pool, type, content, significance, entities,
	emotional_context, source, session, trust_level, trust_score, valid_from, valid_to,
	created_at, updated_at, status, metadata, embedding_model, embedding_dim, embedding`

// NMemoryCols is the number of MemoryCols.
const NMemoryCols = 22

// Content and Embedding are the indexes of the content and the encoded
// embedding in MemoryArgs' values.
const (
	Content   = 5
	Embedding = NMemoryCols - 1
)

// MemoryArgs returns the values for MemoryCols. With memu set, the columns
// take MemU's forms where a value is empty (entities "[]", created_at and
// updated_at ""); otherwise every empty value is NULL (nil).
func MemoryArgs(m *driver.Memory, memu bool) ([]any, error) {
	entities, err := encodeJSON("entities", m.Entities, len(m.Entities) == 0)
	if err != nil {
		return nil, err
	}
	if entities == nil && memu {
		entities = "[]"
	}
	metadata, err := encodeJSON("metadata", m.Metadata, len(m.Metadata) == 0)
	if err != nil {
		return nil, err
	}
	var times [4]any
	for i, f := range []struct {
		name string
		t    time.Time
	}{{"valid_from", m.ValidFrom}, {"valid_to", m.ValidTo}, {"created_at", m.CreatedAt}, {"updated_at", m.UpdatedAt}} {
		if times[i], err = NullTime(f.name, f.t); err != nil {
			return nil, err
		}
		if times[i] == nil && memu && i >= 2 {
			times[i] = ""
		}
	}
	if math.IsNaN(m.Trust.Score) || math.IsInf(m.Trust.Score, 0) {
		return nil, driver.Invalidf("trust score %v is not a finite number", m.Trust.Score)
	}
	return []any{
		m.ID, m.Version, m.Namespace, string(m.Pool), string(m.Type), m.Content, m.Significance, entities,
		m.EmotionalContext, m.Source, m.Session, string(m.Trust.Level), m.Trust.Score, times[0], times[1],
		times[2], times[3], string(m.Status), metadata, m.Embedding.Model, len(m.Embedding.Vector), EncodeVector(m.Embedding.Vector),
	}, nil
}

// Prefixed returns MemoryCols with every column qualified by alias.
func Prefixed(alias string) string {
	cols := strings.Split(MemoryCols, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// VersionCols returns MemoryCols for the version row aliased v (in the
// table memory_versions) of the memory aliased m, with the content and
// embedding a version row leaves out (NULL: the same as the next
// version's) taken from the first later version that has them, or from the
// current row; later is a further condition on the later version row
// aliased n.
func VersionCols(later string) string {
	cols := strings.Split(Prefixed("v"), ", ")
	next := func(col string) string {
		return `coalesce((SELECT n.` + col + ` FROM memory_versions AS n
			WHERE n.id = v.id AND n.version > v.version` + later + ` AND n.` + col + ` IS NOT NULL
			ORDER BY n.version LIMIT 1), m.` + col + `)`
	}
	for i, c := range cols {
		switch c {
		case "v.content":
			cols[i] = `coalesce(v.content, ` + next("content") + `)`
		case "v.embedding":
			cols[i] = `CASE WHEN v.embedding IS NULL AND v.embedding_dim > 0 THEN ` + next("embedding") + ` ELSE v.embedding END`
		}
	}
	return strings.Join(cols, ", ")
}

// Scanner is one row of a result: *sql.Row, *sql.Rows, pgx.Row, pgx.Rows.
type Scanner interface{ Scan(dest ...any) error }

// ScanMemory reads MemoryCols followed by last_accessed_at and
// access_count.
func ScanMemory(s Scanner) (*driver.Memory, error) {
	var (
		m                                              driver.Memory
		pool, typ, trust, status                       string
		entities, metadata                             *string
		validFrom, validTo, created, updated, accessed *string
		dim                                            int
		vec                                            []byte
	)
	err := s.Scan(&m.ID, &m.Version, &m.Namespace, &pool, &typ, &m.Content, &m.Significance, &entities,
		&m.EmotionalContext, &m.Source, &m.Session, &trust, &m.Trust.Score, &validFrom, &validTo,
		&created, &updated, &status, &metadata, &m.Embedding.Model, &dim, &vec,
		&accessed, &m.AccessCount)
	if err != nil {
		return nil, err
	}
	m.Pool, m.Type, m.Trust.Level, m.Status = driver.Pool(pool), driver.Type(typ), driver.TrustLevel(trust), driver.Status(status)
	if err := decodeMemory(&m, entities, metadata, [5]*string{validFrom, validTo, created, updated, accessed}, vec, dim); err != nil {
		return nil, fmt.Errorf("memory %d version %d is stored in a form memos cannot read: %w", m.ID, m.Version, err)
	}
	return &m, nil
}

func decodeMemory(m *driver.Memory, entities, metadata *string, times [5]*string, vec []byte, dim int) error {
	var err error
	if m.Entities, err = decodeEntities(entities); err != nil {
		return err
	}
	if m.Metadata, err = decodeMetadata(metadata); err != nil {
		return err
	}
	for i, f := range []struct {
		name string
		dst  *time.Time
	}{
		{"valid_from", &m.ValidFrom},
		{"valid_to", &m.ValidTo},
		{"created_at", &m.CreatedAt},
		{"updated_at", &m.UpdatedAt},
		{"last_accessed_at", &m.LastAccessedAt},
	} {
		if *f.dst, err = DecodeTime(f.name, times[i]); err != nil {
			return err
		}
	}
	m.Embedding.Vector, err = DecodeVector(vec, dim)
	return err
}

// EdgeCols are the columns ScanEdge reads.
const EdgeCols = `from_id, to_id, type, weight, created_at, source`

// ScanEdge reads EdgeCols.
func ScanEdge(s Scanner) (driver.Edge, error) {
	var e driver.Edge
	var typ string
	var created *string
	if err := s.Scan(&e.From, &e.To, &typ, &e.Weight, &created, &e.Source); err != nil {
		return e, err
	}
	e.Type = driver.EdgeType(typ)
	var err error
	if e.CreatedAt, err = DecodeTime("created_at", created); err != nil {
		return e, fmt.Errorf("edge %d→%d: %w", e.From, e.To, err)
	}
	return e, nil
}

// ScanChange reads a change-log row: seq, id, deleted, namespace, pool,
// status, embedding_model, embedding_dim, embedding.
func ScanChange(s Scanner) (driver.Change, error) {
	var (
		c                   driver.Change
		seq                 int64
		pool, status, model string
		dim                 int
		vec                 []byte
	)
	if err := s.Scan(&seq, &c.ID, &c.Deleted, &c.Namespace, &pool, &status, &model, &dim, &vec); err != nil {
		return c, err
	}
	c.Seq, c.Pool, c.Status = uint64(seq), driver.Pool(pool), driver.Status(status)
	c.Embedding.Model = model
	var err error
	if c.Embedding.Vector, err = DecodeVector(vec, dim); err != nil {
		return c, fmt.Errorf("memory %d: %w", c.ID, err)
	}
	return c, nil
}

// AuditCols are the columns ScanAudit reads.
const AuditCols = `seq, time, action, memory_id, detail, prev_hash, hash`

// ScanAudit reads AuditCols.
func ScanAudit(s Scanner) (driver.AuditEntry, error) {
	var e driver.AuditEntry
	var seq int64
	var tm *string
	if err := s.Scan(&seq, &tm, &e.Action, &e.MemoryID, &e.Detail, &e.PrevHash, &e.Hash); err != nil {
		return e, err
	}
	e.Seq = uint64(seq)
	var err error
	if e.Time, err = DecodeTime("time", tm); err != nil {
		return e, fmt.Errorf("audit entry %d: %w", seq, err)
	}
	return e, nil
}

// ScanSessionMember reads id, valid_from and created_at.
func ScanSessionMember(s Scanner) (driver.SessionMember, error) {
	var m driver.SessionMember
	var from, created *string
	if err := s.Scan(&m.ID, &from, &created); err != nil {
		return m, err
	}
	var err error
	if m.ValidFrom, err = DecodeTime("valid_from", from); err != nil {
		return m, fmt.Errorf("memory %d: %w", m.ID, err)
	}
	if m.CreatedAt, err = DecodeTime("created_at", created); err != nil {
		return m, fmt.Errorf("memory %d: %w", m.ID, err)
	}
	return m, nil
}

// CommonError maps the errors every SQL backend's dbError treats alike, and
// reports whether err was one of them: nil; context errors, passed through
// wrapped with op (also when the driver reports something else once ctx is
// done); and a transaction used after it ended (ended: err is the driver's
// error for that), which wraps driver.ErrClosed.
func CommonError(ctx context.Context, op string, err error, ended bool) (handled bool, mapped error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return true, fmt.Errorf("%s: %w", op, err)
	case ctx != nil && ctx.Err() != nil:
		return true, fmt.Errorf("%s: %w", op, ctx.Err())
	case ended:
		return true, fmt.Errorf("%s: the transaction has ended (a ReadTx or Tx must not be used after its View or Update returns): %w", op, driver.ErrClosed)
	}
	return false, nil
}

// ScanPages is the loop of ReadTx.Scan: it reads pages of at most size
// memories in id order after opts.AfterID with page(after, n), up to
// opts.Limit memories in all (0: no limit), and calls fn for each.
func ScanPages(opts driver.ScanOptions, size int, page func(after int64, n int) ([]*driver.Memory, error), fn func(*driver.Memory) error) error {
	if err := driver.CheckScan(opts); err != nil {
		return err
	}
	after, left := opts.AfterID, opts.Limit
	for {
		n := size
		if opts.Limit > 0 {
			n = min(n, left)
		}
		ms, err := page(after, n)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if err := fn(m); err != nil {
				return err
			}
		}
		if len(ms) < n {
			return nil
		}
		after = ms[len(ms)-1].ID
		if opts.Limit > 0 {
			if left -= len(ms); left == 0 {
				return nil
			}
		}
	}
}

// ChangePages is the loop of ReadTx.Changes: it reads pages of changes in
// (Seq, ID) order after (afterSeq, afterID) with page, n at most, starting
// after every change at since, and calls fn for each. The pages hold size
// changes, or, when grow is larger, grow from size to grow, doubling: a
// caller that stops early (is the store empty?) or follows a short tail
// reads one small page, and one that reads the whole log few large ones.
func ChangePages(since uint64, size, grow int, page func(afterSeq, afterID int64, n int) ([]driver.Change, error), fn func(driver.Change) error) error {
	if since > math.MaxInt64 {
		return nil
	}
	// (since, MaxInt64) excludes every change at since itself.
	afterSeq, afterID := int64(since), int64(math.MaxInt64)
	for n := size; ; n = max(n, min(2*n, grow)) {
		cs, err := page(afterSeq, afterID, n)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if err := fn(c); err != nil {
				return err
			}
		}
		if len(cs) < n {
			return nil
		}
		last := cs[len(cs)-1]
		afterSeq, afterID = int64(last.Seq), last.ID
	}
}

// AuditPages is the loop of ReadTx.Audit: it reads pages of size entries in
// Seq order after after with page, and calls fn for each.
func AuditPages(size int, page func(after int64) ([]driver.AuditEntry, error), fn func(driver.AuditEntry) error) error {
	var after int64
	for {
		es, err := page(after)
		if err != nil {
			return err
		}
		for _, e := range es {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(es) < size {
			return nil
		}
		after = int64(es[len(es)-1].Seq)
	}
}

// AuditBackPages is the loop of ReadTx.AuditBefore: it reads pages of
// entries below before (0: every entry) newest first with page, the first
// of 32 entries and each next one twice as large up to size (a reader of
// the latest entries usually stops in the first), and calls fn for each.
func AuditBackPages(before uint64, size int, page func(before int64, n int) ([]driver.AuditEntry, error), fn func(driver.AuditEntry) error) error {
	b := int64(before)
	if before == 0 || before > math.MaxInt64 {
		b = math.MaxInt64
	}
	n := min(32, size)
	for {
		es, err := page(b, n)
		if err != nil {
			return err
		}
		for _, e := range es {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(es) < n {
			return nil
		}
		b = int64(es[len(es)-1].Seq)
		n = min(2*n, size)
	}
}
