package driver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxContentBytes is the largest content a memory may hold. Longer documents
// belong in several memories (chunks) linked by derived_from edges.
const MaxContentBytes = 64 << 10

// Memory is one node of the memory graph, at one version.
//
// A change never overwrites a memory: it writes a new version with the same
// ID and Version+1. Backends return fresh values; callers own them.
type Memory struct {
	ID        int64  `json:"id"`
	Version   int    `json:"version"`
	Namespace string `json:"namespace"`
	Pool      Pool   `json:"pool"`
	Type      Type   `json:"type"`
	Content   string `json:"content"`
	// Significance on MemU's 1–10 scale (default 5).
	Significance     int      `json:"significance"`
	Entities         []string `json:"entities,omitempty"`
	EmotionalContext string   `json:"emotional_context,omitempty"`
	// Source says where the memory came from, e.g. "conversation:42#turn-7".
	Source string `json:"source,omitempty"`
	// Session is the conversation or run the memory belongs to.
	Session string `json:"session,omitempty"`
	Trust   Trust  `json:"trust"`
	// ValidFrom and ValidTo bound event time: when the memory was true. A zero
	// ValidFrom means "since always", a zero ValidTo "still true".
	ValidFrom time.Time `json:"valid_from,omitzero"`
	ValidTo   time.Time `json:"valid_to,omitzero"`
	// CreatedAt is when memos first learned the memory (ingest time of version 1);
	// UpdatedAt is when this version was written.
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	Status    Status         `json:"status"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// Access statistics; updating them does not write a new version.
	LastAccessedAt time.Time `json:"last_accessed_at,omitzero"`
	AccessCount    int64     `json:"access_count"`
	Embedding      Embedding `json:"embedding,omitzero"`
}

// Embedding is a memory's vector with the model that produced it.
type Embedding struct {
	Model  string    `json:"model"`
	Vector []float32 `json:"-"`
}

// Dim is the embedding's dimension (0 when there is none).
func (e Embedding) Dim() int { return len(e.Vector) }

// MarshalJSON reports the model and dimension, not the raw vector.
func (e Embedding) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"model":%q,"dim":%d}`, e.Model, len(e.Vector)), nil
}

// UnmarshalJSON reads what MarshalJSON writes. Only the model is kept: JSON
// does not carry the vector, so the embedding is empty until one is computed.
func (e *Embedding) UnmarshalJSON(b []byte) error {
	var v struct {
		Model string `json:"model"`
		Dim   int    `json:"dim"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = Embedding{Model: v.Model}
	return nil
}

// ValidAt reports whether the memory's event-time interval contains t.
func (m *Memory) ValidAt(t time.Time) bool {
	if !m.ValidFrom.IsZero() && t.Before(m.ValidFrom) {
		return false
	}
	return m.ValidTo.IsZero() || t.Before(m.ValidTo)
}

// Clone returns a deep copy of m.
func (m *Memory) Clone() *Memory {
	c := *m
	c.Entities = append([]string(nil), m.Entities...)
	if m.Metadata != nil {
		c.Metadata = make(map[string]any, len(m.Metadata))
		for k, v := range m.Metadata {
			c.Metadata[k] = v
		}
	}
	c.Embedding.Vector = append([]float32(nil), m.Embedding.Vector...)
	return &c
}

// Pool groups memories by how distilled they are.
type Pool string

const (
	PoolRaw       Pool = "raw"       // verbatim turns and documents
	PoolMemory    Pool = "memory"    // distilled facts, preferences, events, relationships
	PoolKnowledge Pool = "knowledge" // knowledge pages and lessons
)

// Pools lists every pool in a stable order.
var Pools = []Pool{PoolRaw, PoolMemory, PoolKnowledge}

// ParsePool validates a pool name.
func ParsePool(s string) (Pool, error) {
	for _, p := range Pools {
		if string(p) == s {
			return p, nil
		}
	}
	return "", invalidf("unknown pool %q (want one of raw, memory, knowledge)", s)
}

// Type says what kind of thing a memory records.
type Type string

const (
	TypeFact         Type = "fact"
	TypePreference   Type = "preference"
	TypeEvent        Type = "event"
	TypeRelationship Type = "relationship"
	TypeTurn         Type = "turn"     // a conversation turn
	TypeDocument     Type = "document" // a document or a chunk of one
	TypeLesson       Type = "lesson"   // procedural guidance
	TypeKnowledge    Type = "knowledge"
	TypeNote         Type = "note"
)

// Types lists every memory type in a stable order.
var Types = []Type{TypeFact, TypePreference, TypeEvent, TypeRelationship, TypeTurn,
	TypeDocument, TypeLesson, TypeKnowledge, TypeNote}

// ParseType validates a type name.
func ParseType(s string) (Type, error) {
	for _, t := range Types {
		if string(t) == s {
			return t, nil
		}
	}
	names := make([]string, len(Types))
	for i, t := range Types {
		names[i] = string(t)
	}
	return "", invalidf("unknown type %q (want one of %s)", s, strings.Join(names, ", "))
}

// DefaultPool is the pool a memory of type t goes to when none is given.
func (t Type) DefaultPool() Pool {
	switch t {
	case TypeTurn, TypeDocument:
		return PoolRaw
	case TypeLesson, TypeKnowledge:
		return PoolKnowledge
	default:
		return PoolMemory
	}
}

// TrustLevel says how far a memory is to be believed.
type TrustLevel string

const (
	TrustCertain      TrustLevel = "certain"
	TrustInferred     TrustLevel = "inferred"
	TrustImported     TrustLevel = "imported"
	TrustContradicted TrustLevel = "contradicted"
)

// TrustLevels lists every trust level in a stable order.
var TrustLevels = []TrustLevel{TrustCertain, TrustInferred, TrustImported, TrustContradicted}

// ParseTrustLevel validates a trust level name.
func ParseTrustLevel(s string) (TrustLevel, error) {
	for _, l := range TrustLevels {
		if string(l) == s {
			return l, nil
		}
	}
	return "", invalidf("unknown trust level %q (want one of certain, inferred, imported, contradicted)", s)
}

// DefaultScore is the trust score given to a level when no score is set.
func (l TrustLevel) DefaultScore() float64 {
	switch l {
	case TrustCertain:
		return 1.0
	case TrustInferred:
		return 0.8
	case TrustImported:
		return 0.6
	case TrustContradicted:
		return 0.2
	}
	return 0.5
}

// Trust is a memory's trust level and score in [0,1]. The score feeds ranking:
// a low-trust memory needs a stronger match to surface.
type Trust struct {
	Level TrustLevel `json:"level"`
	Score float64    `json:"score"`
}

// Status is a memory's lifecycle state.
type Status string

const (
	StatusActive      Status = "active"      // visible to recall
	StatusQuarantined Status = "quarantined" // waiting for review, invisible to recall
	StatusArchived    Status = "archived"    // kept for history, invisible to recall
)

// Statuses lists every status in a stable order.
var Statuses = []Status{StatusActive, StatusQuarantined, StatusArchived}

// ParseStatus validates a status name.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	return "", invalidf("unknown status %q (want one of active, quarantined, archived)", s)
}

// DefaultNamespace is shared by every scope: a scoped read returns the
// requested namespace and this one.
const DefaultNamespace = "default"

var namespaceRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9][A-Za-z0-9._@/-]{0,127}$`)

// ValidateNamespace checks that ns is "default" or "<prefix>:<name>". The
// prefixes project, harness, user, agent and run are a convention, not a
// closed set: any lower-case prefix of letters, digits, _ and - (at most 32
// bytes) is accepted.
func ValidateNamespace(ns string) error {
	if ns == DefaultNamespace || namespaceRE.MatchString(ns) {
		return nil
	}
	return invalidf("malformed namespace %q (want \"default\" or <prefix>:<name> such as project:infra or team:web — a lower-case prefix, then a name of letters, digits, . _ @ / -)", ns)
}

// EdgeType names a typed relation between two memories. The well-known types
// are constants; others are allowed if they are lower_snake_case.
type EdgeType string

const (
	EdgeRelatesTo        EdgeType = "relates_to"
	EdgeSupports         EdgeType = "supports"
	EdgeContradicts      EdgeType = "contradicts"
	EdgeDerivedFrom      EdgeType = "derived_from"
	EdgeTemporalPrecedes EdgeType = "temporal_precedes"
)

var edgeTypeRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ValidateEdgeType checks that t is lower_snake_case, at most 64 bytes.
func ValidateEdgeType(t EdgeType) error {
	if !edgeTypeRE.MatchString(string(t)) {
		return invalidf("malformed edge type %q (want lower_snake_case such as relates_to)", t)
	}
	return nil
}

// Edge is a typed, weighted, directed relation From → To.
type Edge struct {
	From      int64     `json:"from"`
	To        int64     `json:"to"`
	Type      EdgeType  `json:"type"`
	Weight    float64   `json:"weight"`
	CreatedAt time.Time `json:"created_at"`
	Source    string    `json:"source,omitempty"`
}

// visible reports whether s has a character a reader can see: not only
// whitespace, control characters (NUL, escapes) and invisible format
// characters (zero-width spaces and joiners, the byte-order mark).
func visible(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return !unicode.IsSpace(r) && !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r)
	})
}

// CheckUTF8 is the one UTF-8 rule of every surface (library, CLI, HTTP,
// MCP, imports): text that is not valid UTF-8 is ErrInvalid naming field
// and the position (1-based) of the first byte that is not, never stored
// with the bad bytes replaced.
func CheckUTF8(field, s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	return invalidf("%s is not valid UTF-8 (byte %d)", field, i+1)
}

// ValidateContent checks the content rules shared by every write.
func ValidateContent(s string) error {
	if err := CheckUTF8("content", s); err != nil {
		return err
	}
	if !visible(s) {
		return invalidf("content is empty (it holds only whitespace, control or invisible characters such as NUL or zero-width spaces)")
	}
	if len(s) > MaxContentBytes {
		return invalidf("content is %d bytes, over the limit of %d; split it into several memories", len(s), MaxContentBytes)
	}
	return nil
}

// Validate checks every field of m that a caller can set. It does not check
// ID, Version or the timestamps, which the engine assigns.
func (m *Memory) Validate() error {
	if err := ValidateContent(m.Content); err != nil {
		return err
	}
	if err := ValidateNamespace(m.Namespace); err != nil {
		return err
	}
	if _, err := ParsePool(string(m.Pool)); err != nil {
		return err
	}
	if _, err := ParseType(string(m.Type)); err != nil {
		return err
	}
	if _, err := ParseStatus(string(m.Status)); err != nil {
		return err
	}
	if m.Significance < 1 || m.Significance > 10 {
		return invalidf("significance %d is outside 1–10", m.Significance)
	}
	if _, err := ParseTrustLevel(string(m.Trust.Level)); err != nil {
		return err
	}
	if m.Trust.Score < 0 || m.Trust.Score > 1 || m.Trust.Score != m.Trust.Score {
		return invalidf("trust score %v is outside [0,1]", m.Trust.Score)
	}
	if !m.ValidFrom.IsZero() && !m.ValidTo.IsZero() && !m.ValidTo.After(m.ValidFrom) {
		return invalidf("valid_to %s is not after valid_from %s", m.ValidTo.Format(time.RFC3339), m.ValidFrom.Format(time.RFC3339))
	}
	for i, e := range m.Entities {
		if err := CheckUTF8(fmt.Sprintf("entities[%d]", i), e); err != nil {
			return err
		}
		if strings.TrimSpace(e) == "" {
			return invalidf("entity names must be non-empty")
		}
	}
	for _, s := range []struct{ name, v string }{{"source", m.Source}, {"session", m.Session}, {"emotional_context", m.EmotionalContext}} {
		if err := CheckUTF8(s.name, s.v); err != nil {
			return err
		}
		if len(s.v) > 4096 {
			return invalidf("%s is %d bytes, over the limit of 4096", s.name, len(s.v))
		}
	}
	return nil
}
