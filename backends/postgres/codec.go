package postgres

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// Times are stored as text: RFC 3339 in UTC with a fixed nine-digit
// fraction. timestamptz keeps microseconds only, and the contract is that a
// time comes back as the same instant to the nanosecond; the fixed width keeps
// the text sortable, which Touch relies on.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// encodeTime renders t for storage; NULL (nil) for the zero time.
func encodeTime(field string, t time.Time) (*string, error) {
	if t.IsZero() {
		return nil, nil
	}
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return nil, driver.Invalidf("%s %v is outside the years 0000–9999", field, t)
	}
	s := t.Format(timeLayout)
	return &s, nil
}

func decodeTime(field string, s *string) (time.Time, error) {
	if s == nil || *s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not an RFC 3339 time: %w", field, *s, err)
	}
	return t.UTC(), nil
}

// encodeVector packs v as little-endian float32s (the sqlite backend's and
// MemU's format), nil for no vector.
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

// encodeJSON stores v as JSON text, nil when empty. Text rather than jsonb:
// jsonb reorders keys and normalises numbers; the store keeps what it got.
func encodeJSON(what string, v any, empty bool) (*string, error) {
	if empty {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, driver.Invalidf("%s is not JSON-encodable: %v", what, err)
	}
	s := string(b)
	return &s, nil
}

// memoryCols are the columns of a memory's versioned state, in the order
// memoryArgs binds and scanMemory reads them (followed, when reading, by the
// access statistics, which are not versioned). Both memories and
// memory_versions have them.
const memoryCols = `id, version, namespace, pool, type, content, significance, entities,
	emotional_context, source, session, trust_level, trust_score, valid_from, valid_to,
	created_at, updated_at, status, metadata, embedding_model, embedding_dim, embedding`

const nMemoryCols = 22

// memoryArgs returns the values for memoryCols.
func memoryArgs(m *driver.Memory) ([]any, error) {
	entities, err := encodeJSON("entities", m.Entities, len(m.Entities) == 0)
	if err != nil {
		return nil, err
	}
	metadata, err := encodeJSON("metadata", m.Metadata, len(m.Metadata) == 0)
	if err != nil {
		return nil, err
	}
	var times [4]*string
	for i, f := range []struct {
		name string
		t    time.Time
	}{{"valid_from", m.ValidFrom}, {"valid_to", m.ValidTo}, {"created_at", m.CreatedAt}, {"updated_at", m.UpdatedAt}} {
		if times[i], err = encodeTime(f.name, f.t); err != nil {
			return nil, err
		}
	}
	if math.IsNaN(m.Trust.Score) || math.IsInf(m.Trust.Score, 0) {
		return nil, driver.Invalidf("trust score %v is not a finite number", m.Trust.Score)
	}
	return []any{
		m.ID, m.Version, m.Namespace, string(m.Pool), string(m.Type), m.Content, m.Significance, entities,
		m.EmotionalContext, m.Source, m.Session, string(m.Trust.Level), m.Trust.Score, times[0], times[1],
		times[2], times[3], string(m.Status), metadata, m.Embedding.Model, len(m.Embedding.Vector), encodeVector(m.Embedding.Vector),
	}, nil
}

// scanner is pgx.Row or pgx.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanMemory reads memoryCols followed by last_accessed_at and access_count.
func scanMemory(s scanner) (*driver.Memory, error) {
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
	if entities != nil {
		if err := json.Unmarshal([]byte(*entities), &m.Entities); err != nil {
			return fmt.Errorf("entities %q are not a JSON array of strings: %w", *entities, err)
		}
		if len(m.Entities) == 0 {
			m.Entities = nil
		}
	}
	if metadata != nil {
		if err := json.Unmarshal([]byte(*metadata), &m.Metadata); err != nil {
			return fmt.Errorf("metadata %q is not a JSON object: %w", *metadata, err)
		}
		if len(m.Metadata) == 0 {
			m.Metadata = nil
		}
	}
	var err error
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
		if *f.dst, err = decodeTime(f.name, times[i]); err != nil {
			return err
		}
	}
	m.Embedding.Vector, err = decodeVector(vec, dim)
	return err
}
