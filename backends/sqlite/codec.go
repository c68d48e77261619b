package sqlite

import (
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// timeLayout is RFC 3339 with a fixed nine-digit fraction, always in UTC. The
// fixed width keeps stored times sortable as text (RFC3339Nano trims trailing
// zeros, which would sort "05Z" after "05.5Z"), and time.Parse with
// time.RFC3339Nano reads it back exactly.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// encodeTime renders t for storage: UTC, nanosecond precision, "" for the
// zero time. Years outside 0000–9999 cannot be written as RFC 3339.
func encodeTime(field string, t time.Time) (string, error) {
	if t.IsZero() {
		return "", nil
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return "", driver.Invalidf("%s %v is outside the years 0000–9999", field, t)
	}
	return t.Format(timeLayout), nil
}

// nullTime is encodeTime for nullable columns: NULL for the zero time.
func nullTime(field string, t time.Time) (any, error) {
	s, err := encodeTime(field, t)
	if err != nil || s == "" {
		return nil, err
	}
	return s, nil
}

// decodeTime parses a stored time; NULL and "" are the zero time. The result
// is in UTC with no monotonic reading, so it compares equal (==) to the
// t.UTC().Round(0) that was written.
func decodeTime(field string, s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s.String)
	if err != nil {
		// Rows imported with plain SQL may use SQLite's own formats.
		for _, layout := range importLayouts {
			if t, err2 := time.Parse(layout, s.String); err2 == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("%s %q is not an RFC 3339 time: %w", field, s.String, err)
	}
	return t.UTC(), nil
}

// importLayouts are the other time formats decodeTime accepts: SQLite's
// datetime() text and ISO 8601 without a zone (both read as UTC).
var importLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
}

// encodeVector packs v as little-endian float32s (MemU's embedding format);
// nil for an empty vector.
func encodeVector(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte, dim int) ([]float32, error) {
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

// encodeEntities stores entities as a JSON array ("[]" when there are none),
// the format of MemU's entities column.
func encodeEntities(es []string) (string, error) {
	if len(es) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(es)
	if err != nil {
		return "", driver.Invalidf("entities are not JSON-encodable: %v", err)
	}
	return string(b), nil
}

func decodeEntities(s sql.NullString) ([]string, error) {
	if !s.Valid || s.String == "" || s.String == "[]" || s.String == "null" {
		return nil, nil
	}
	var es []string
	if err := json.Unmarshal([]byte(s.String), &es); err != nil {
		return nil, fmt.Errorf("entities %q are not a JSON array of strings: %w", s.String, err)
	}
	if len(es) == 0 {
		return nil, nil
	}
	return es, nil
}

// encodeMetadata stores metadata as a JSON object, NULL when empty.
func encodeMetadata(md map[string]any) (any, error) {
	if len(md) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(md)
	if err != nil {
		return nil, driver.Invalidf("metadata is not JSON-encodable: %v", err)
	}
	return string(b), nil
}

// decodeMetadata reads a JSON object; numbers come back as float64, as from
// any JSON round trip.
func decodeMetadata(s sql.NullString) (map[string]any, error) {
	if !s.Valid || s.String == "" || s.String == "null" {
		return nil, nil
	}
	var md map[string]any
	if err := json.Unmarshal([]byte(s.String), &md); err != nil {
		return nil, fmt.Errorf("metadata %q is not a JSON object: %w", s.String, err)
	}
	if len(md) == 0 {
		return nil, nil
	}
	return md, nil
}

// memoryCols are the columns of a memory's versioned state, in the order
// memoryArgs binds and scanMemory reads them (followed, when reading, by the
// access statistics, which are not versioned). Both memories and
// memory_versions have them (in memory_versions, content and embedding may
// be NULL: see schemaV2).
const memoryCols = `id, version, namespace, pool, type, content, significance, entities,
	emotional_context, source, session, trust_level, trust_score, valid_from, valid_to,
	created_at, updated_at, status, metadata, embedding_model, embedding_dim, embedding`

// memoryArgs returns the values for memoryCols: args[5] is the content and
// the last one the encoded embedding.
func memoryArgs(m *driver.Memory) ([]any, error) {
	entities, err := encodeEntities(m.Entities)
	if err != nil {
		return nil, err
	}
	metadata, err := encodeMetadata(m.Metadata)
	if err != nil {
		return nil, err
	}
	validFrom, err := nullTime("valid_from", m.ValidFrom)
	if err != nil {
		return nil, err
	}
	validTo, err := nullTime("valid_to", m.ValidTo)
	if err != nil {
		return nil, err
	}
	created, err := encodeTime("created_at", m.CreatedAt)
	if err != nil {
		return nil, err
	}
	updated, err := encodeTime("updated_at", m.UpdatedAt)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(m.Trust.Score) || math.IsInf(m.Trust.Score, 0) {
		return nil, driver.Invalidf("trust score %v is not a finite number", m.Trust.Score)
	}
	return []any{
		m.ID, m.Version, m.Namespace, string(m.Pool), string(m.Type), m.Content, m.Significance, entities,
		m.EmotionalContext, m.Source, m.Session, string(m.Trust.Level), m.Trust.Score, validFrom, validTo,
		created, updated, string(m.Status), metadata, m.Embedding.Model, len(m.Embedding.Vector), encodeVector(m.Embedding.Vector),
	}, nil
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanMemory reads memoryCols followed by last_accessed_at and access_count.
func scanMemory(s scanner) (*driver.Memory, error) {
	var (
		m                                              driver.Memory
		pool, typ, trust, status                       string
		entities, metadata                             sql.NullString
		validFrom, validTo, created, updated, accessed sql.NullString
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
	if err := decodeMemory(&m, entities, metadata, validFrom, validTo, created, updated, accessed, vec, dim); err != nil {
		return nil, fmt.Errorf("memory %d version %d is stored in a form memos cannot read: %w", m.ID, m.Version, err)
	}
	return &m, nil
}

func decodeMemory(m *driver.Memory, entities, metadata, validFrom, validTo, created, updated, accessed sql.NullString, vec []byte, dim int) error {
	var err error
	if m.Entities, err = decodeEntities(entities); err != nil {
		return err
	}
	if m.Metadata, err = decodeMetadata(metadata); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		src  sql.NullString
		dst  *time.Time
	}{
		{"valid_from", validFrom, &m.ValidFrom},
		{"valid_to", validTo, &m.ValidTo},
		{"created_at", created, &m.CreatedAt},
		{"updated_at", updated, &m.UpdatedAt},
		{"last_accessed_at", accessed, &m.LastAccessedAt},
	} {
		if *f.dst, err = decodeTime(f.name, f.src); err != nil {
			return err
		}
	}
	m.Embedding.Vector, err = decodeVector(vec, dim)
	return err
}

// jsonIDs renders the ids of xs as a JSON array, for statements that take
// a list of ids through json_each.
func jsonIDs[T any](xs []T, id func(T) int64) string {
	b := make([]byte, 0, 12*len(xs)+2)
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id(x), 10)
	}
	return string(append(b, ']'))
}
