package govern

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/secret"
)

// Config is the governance policy: which writes wait in the review
// queue (status quarantined, invisible to recall until a person releases
// them), how contradictions are detected and handled, and how lesson
// outcomes demote and archive a lesson. The zero value takes the defaults
// documented on each field.
type Config struct {
	// QuarantineLevels: a new memory with one of these trust levels is
	// quarantined (default none; e.g. [imported] holds every imported memory
	// for review).
	QuarantineLevels []driver.TrustLevel `koanf:"quarantine_levels" json:"quarantine_levels"`
	// QuarantineBelow: a new memory whose trust score is below this is
	// quarantined (default 0: off).
	QuarantineBelow float64 `koanf:"quarantine_below" json:"quarantine_below"`
	// QuarantineSources: a new memory whose source matches one of these
	// patterns is quarantined. Patterns are path.Match globs over the whole
	// source, so "web:*" holds everything from the web (default none).
	QuarantineSources []string `koanf:"quarantine_sources" json:"quarantine_sources"`
	// Secrets is the secret detector: a new memory whose content looks like
	// it holds a credential — a provider's API key or token, a JSON web
	// token, a private key block, a password in a URL, a match of one of
	// Secrets.Patterns, or a long random-looking string — is quarantined,
	// with the rule that matched (never the secret) as its reason. On by
	// default; see package secret for the rules.
	Secrets secret.Config `koanf:"secrets" json:"secrets"`

	// Contradictions selects what happens when a new memory contradicts a
	// trusted one (see TrustedScore): "quarantine" (default) holds the
	// newcomer for review, "demote" lowers the older memory's trust to
	// contradicted, "flag" only records the contradicts edge, "off" turns
	// detection off (an explicit Input.Contradicts is still recorded and
	// handled like "flag"). A contradiction of a memory that is not trusted
	// is always only flagged.
	Contradictions string `koanf:"contradictions" json:"contradictions"`
	// TrustedScore: a memory of trust level certain, or with a trust score at
	// least this, counts as trusted (default 0.9).
	TrustedScore float64 `koanf:"trusted_score" json:"trusted_score"`
	// ContradictionSimilarity is the least cosine similarity between a new
	// memory and an older one for the detector to compare them (default
	// 0.75). ContradictionOverlap is the least share of content words the two
	// must have in common once numbers, dates and negations are set aside
	// (Jaccard, default 0.5). Both guard against a noisy detector.
	ContradictionSimilarity float64 `koanf:"contradiction_similarity" json:"contradiction_similarity"`
	ContradictionOverlap    float64 `koanf:"contradiction_overlap" json:"contradiction_overlap"`

	// LessonDemoteBelow: a lesson with at least LessonMinOutcomes outcomes
	// whose score (see LessonScore) falls below this is demoted to trust
	// level contradicted (default 0.35). LessonArchiveBelow: with at least
	// LessonArchiveOutcomes outcomes and a score below this it is archived
	// (default 0.2). Defaults 3 and 5 outcomes.
	LessonDemoteBelow     float64 `koanf:"lesson_demote_below" json:"lesson_demote_below"`
	LessonArchiveBelow    float64 `koanf:"lesson_archive_below" json:"lesson_archive_below"`
	LessonMinOutcomes     int     `koanf:"lesson_min_outcomes" json:"lesson_min_outcomes"`
	LessonArchiveOutcomes int     `koanf:"lesson_archive_outcomes" json:"lesson_archive_outcomes"`
}

// The contradiction policies of Config.Contradictions.
const (
	ContradictQuarantine = "quarantine"
	ContradictDemote     = "demote"
	ContradictFlag       = "flag"
	ContradictOff        = "off"
)

// Defaults returns g with every zero field at its default.
func Defaults(g Config) Config {
	if g.Contradictions == "" {
		g.Contradictions = ContradictQuarantine
	}
	if g.TrustedScore == 0 {
		g.TrustedScore = 0.9
	}
	if g.ContradictionSimilarity == 0 {
		g.ContradictionSimilarity = 0.75
	}
	if g.ContradictionOverlap == 0 {
		g.ContradictionOverlap = 0.5
	}
	if g.LessonDemoteBelow == 0 {
		g.LessonDemoteBelow = 0.35
	}
	if g.LessonArchiveBelow == 0 {
		g.LessonArchiveBelow = 0.2
	}
	if g.LessonMinOutcomes == 0 {
		g.LessonMinOutcomes = 3
	}
	if g.LessonArchiveOutcomes == 0 {
		g.LessonArchiveOutcomes = 5
	}
	return g
}

func (g *Config) validate() error {
	for _, l := range g.QuarantineLevels {
		if _, err := driver.ParseTrustLevel(string(l)); err != nil {
			return fmt.Errorf("governance.quarantine_levels: %w", err)
		}
	}
	for _, p := range g.QuarantineSources {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return driver.Invalidf("governance.quarantine_sources: malformed pattern %q (want a glob such as web:*)", p)
		}
	}
	switch g.Contradictions {
	case ContradictQuarantine, ContradictDemote, ContradictFlag, ContradictOff:
	default:
		return driver.Invalidf("governance.contradictions %q is unknown (want quarantine, demote, flag or off)", g.Contradictions)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"quarantine_below", g.QuarantineBelow}, {"trusted_score", g.TrustedScore},
		{"contradiction_similarity", g.ContradictionSimilarity}, {"contradiction_overlap", g.ContradictionOverlap},
		{"lesson_demote_below", g.LessonDemoteBelow}, {"lesson_archive_below", g.LessonArchiveBelow}} {
		if f.v < 0 || f.v > 1 || f.v != f.v {
			return driver.Invalidf("governance.%s %v is outside [0,1]", f.name, f.v)
		}
	}
	if g.LessonMinOutcomes < 0 || g.LessonArchiveOutcomes < 0 {
		return driver.Invalidf("governance: lesson outcome counts must not be negative")
	}
	return nil
}

// Policy is a checked Config, defaults applied, with its secret detector
// compiled: what the engine consults on every write.
type Policy struct {
	Config
	secrets *secret.Detector // nil: off
}

// NewPolicy applies the defaults to g and checks it (ErrInvalid names the
// setting at fault).
func NewPolicy(g Config) (*Policy, error) {
	secrets, err := secret.New(g.Secrets)
	if err != nil {
		return nil, err
	}
	p := &Policy{Config: Defaults(g), secrets: secrets}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// Reasons returns why the quarantine policy holds the new memory m for
// review (none: it does not): the configured rules, then the secret
// detector.
func (p *Policy) Reasons(m *driver.Memory) []string {
	why := p.quarantineReasons(m)
	if f, ok := p.secrets.Find(m.Content); ok {
		why = append(why, "content "+f.Reason())
	}
	return why
}

// quarantineReasons returns why the policy's levels, score and sources hold
// m for review (none: they do not).
func (g *Config) quarantineReasons(m *driver.Memory) []string {
	var why []string
	if slices.Contains(g.QuarantineLevels, m.Trust.Level) {
		why = append(why, fmt.Sprintf("trust level %s is held for review", m.Trust.Level))
	}
	if g.QuarantineBelow > 0 && m.Trust.Score < g.QuarantineBelow {
		why = append(why, fmt.Sprintf("trust score %.2f is below %.2f", m.Trust.Score, g.QuarantineBelow))
	}
	if m.Source != "" {
		for _, p := range g.QuarantineSources {
			if ok, _ := path.Match(p, m.Source); ok {
				why = append(why, fmt.Sprintf("source %s matches %s", m.Source, p))
				break
			}
		}
	}
	return why
}

// Trusted reports whether m counts as trusted for contradiction handling.
func (p *Policy) Trusted(m *driver.Memory) bool {
	return m.Trust.Level == driver.TrustCertain || m.Trust.Score >= p.TrustedScore
}

// SourceMatches reports whether source is s or starts with s followed by a
// character that cannot continue a name (anything but a letter, digit, _ or
// -): "conversation:7" matches "conversation:7" and "conversation:7#turn-3"
// but not "conversation:70". This is how forget-source reads its argument.
func SourceMatches(source, s string) bool {
	rest, ok := strings.CutPrefix(source, s)
	if !ok || s == "" {
		return false
	}
	if rest == "" {
		return true
	}
	c := rest[0]
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') ||
		strings.HasSuffix(s, ":") || strings.HasSuffix(s, "/") || strings.HasSuffix(s, "#")
}
