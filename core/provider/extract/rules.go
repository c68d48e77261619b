// Package extract holds memos' built-in extractors, which turn conversation
// turns into memory-pool memories for Engine.Capture: Rules, an offline,
// deterministic extractor of first-person statements, and LLM, which asks a
// chat model (any OpenAI-compatible server, or Ollama) with a JSON schema.
// Both register themselves ("rules", "llm"); programs pick them by import.
package extract

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/text"
)

// RulesName is the rule-based extractor's registered name.
const RulesName = "rules"

// RulesConfig configures Rules; the zero value is the default.
type RulesConfig struct {
	// MinWords drops statements shorter than this many words (default 4):
	// "I love it." carries nothing a search could use.
	MinWords int `koanf:"min_words"`
}

// Rules extracts, from each turn, the sentences in which the speaker states
// something about themselves: identity (name, work, home, origin),
// relationships (my sister, my boss, …), preferences (I love, I prefer, my
// favourite …), plans (I'm going to, I will, …) and things they did (I went,
// I started, …). Each becomes one memory, rewritten in the third person
// with the speaker's name ("Caroline: I love painting" → "Caroline loves
// painting"), typed fact, relationship, preference or event, with a
// significance on MemU's scale (identity 7, relationships 6, strong
// preferences 6, other preferences and plans 5, past events 4), the
// speaker and the capitalised names in it as entities, and the first
// emotion word as emotional context. It needs no model and is
// deterministic: the same turns give the same memories.
type Rules struct{ cfg RulesConfig }

var _ driver.Extractor = (*Rules)(nil)

func init() {
	driver.RegisterExtractor(RulesName, driver.NewExtractorDriver(RulesName, OpenRules))
}

// OpenRules returns the rule-based extractor.
func OpenRules(_ context.Context, cfg RulesConfig) (*Rules, error) {
	if cfg.MinWords < 0 {
		return nil, driver.Invalidf("extractor rules: min_words %d is negative", cfg.MinWords)
	}
	cfg.Defaults()
	return &Rules{cfg: cfg}, nil
}

var _ driver.Defaulter = (*RulesConfig)(nil)

// Defaults sets the fields of c left zero to the values OpenRules applies.
func (c *RulesConfig) Defaults() {
	if c.MinWords == 0 {
		c.MinWords = 4
	}
}

// rule is one kind of statement. Rules are tried in order; the first that
// matches a sentence decides its type.
type rule struct {
	re           *regexp.Regexp
	typ          driver.Type
	significance int
}

// adverbList are the words that may stand between "I" and its verb.
var adverbList = []string{"really", "just", "also", "always", "absolutely", "definitely", "actually",
	"still", "totally", "usually", "finally", "recently", "truly", "never", "often"}

// adverbs matches one optional adverb and its space, for the rules.
var adverbs = `(?:(?:` + strings.Join(adverbList, "|") + `) )?`

var rules = []rule{
	{regexp.MustCompile(`(?i)\b(?:my name is|i(?: am|'m|’m) (?:a|an) [a-z]+|i work (?:as|at|for|in)|i live (?:in|at|near)|i(?: grew up| was born) in|i(?: am|'m|’m) from|i identify as|i(?: am|'m|’m) \d+ years old)\b`), driver.TypeFact, 7},
	{regexp.MustCompile(`(?i)\bmy (?:wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?|son|daughter|kids?|children|mom|mum|mother|dad|father|parents|sister|brother|siblings?|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|(?:best )?friends?|boss|manager|colleague|coworker|co-worker|roommate|neighbou?r|dog|cat|pet)\b`), driver.TypeRelationship, 6},
	{regexp.MustCompile(`(?i)\b(?:i ` + adverbs + `(?:love|adore|hate|can't stand|cannot stand|can’t stand)|my favou?rite)\b`), driver.TypePreference, 6},
	{regexp.MustCompile(`(?i)\b(?:i ` + adverbs + `(?:like|prefer|enjoy|dislike|am into|'m into|’m into)|i(?: am|'m|’m) (?:a (?:big |huge )?)?fan of|i(?: am|'m|’m) (?:really )?into)\b`), driver.TypePreference, 5},
	{regexp.MustCompile(`(?i)\b(?:i(?: am|'m|’m) (?:going to|planning to|planning on|thinking about|hoping to|about to)|i ` + adverbs + `(?:will|plan to|want to|intend to|hope to|aim to)|i'll|i’ll)\b`), driver.TypeEvent, 5},
	{regexp.MustCompile(`(?i)\b(?:i|we) ` + adverbs + `(?:went|visited|started|joined|finished|got|moved|bought|attended|took|made|met|adopted|signed up|ran|painted|travell?ed|learned|learnt|won|lost|graduated|celebrated|volunteered|tried|built|wrote|read|saw|had|received|decided|quit|left|began|completed|created|found)\b`), driver.TypeEvent, 4},
}

var emotions = regexp.MustCompile(`(?i)\b(happy|excited|thrilled|glad|grateful|thankful|proud|sad|upset|angry|mad|furious|frustrated|anxious|worried|nervous|scared|afraid|stressed|overwhelmed|lonely|relieved|disappointed|heartbroken|hopeful|inspired|motivated|nostalgic)\b`)

// Extract implements driver.Extractor.
func (r *Rules) Extract(ctx context.Context, turns []driver.Turn) ([]driver.Extraction, error) {
	var out []driver.Extraction
	for i, t := range turns {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		speaker := strings.TrimSpace(t.Speaker)
		if speaker == "" {
			speaker = "The user"
		}
		for _, s := range text.Sentences(t.Text) {
			if len(strings.Fields(s)) < r.cfg.MinWords {
				continue
			}
			for _, rl := range rules {
				if !rl.re.MatchString(s) {
					continue
				}
				x := driver.Extraction{
					Content:      thirdPerson(s, speaker),
					Type:         rl.typ,
					Significance: rl.significance,
					Entities:     entities(s, speaker),
					Turns:        []int{i},
				}
				if m := emotions.FindString(s); m != "" {
					x.EmotionalContext = strings.ToLower(m)
				}
				out = append(out, x)
				break
			}
		}
	}
	return out, nil
}

// entities returns the speaker and the capitalised words of s that are not
// a sentence's first word or "I", in order of appearance.
func entities(s, speaker string) []string {
	out := []string{speaker}
	words := strings.Fields(s)
	for k, w := range words {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		if w == "" || k == 0 || w == "I" || strings.HasPrefix(w, "I'") || strings.HasPrefix(w, "I’") {
			continue
		}
		if r := []rune(w); unicode.IsUpper(r[0]) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// contractions of "I" and what they become after the speaker's name.
var contractions = map[string]string{
	"i'm": "is", "i’m": "is", "i've": "has", "i’ve": "has", "i'd": "would", "i’d": "would", "i'll": "will", "i’ll": "will",
}

// thirdPerson rewrites a first-person sentence about the speaker: I → the
// speaker's name (with the verb agreeing), my/mine → name's, me/myself →
// name.
func thirdPerson(s, name string) string {
	words := strings.Fields(s)
	out := make([]string, 0, len(words))
	for k := 0; k < len(words); k++ {
		w := words[k]
		core, tail := splitPunct(w)
		lw := strings.ToLower(core)
		switch {
		case contractions[lw] != "":
			out = append(out, name, contractions[lw]+tail)
		case lw == "i":
			out = append(out, name+tail)
			if tail != "" {
				continue
			}
			// The verb agrees with the name, past any adverb between them.
			for k+1 < len(words) {
				next, ntail := splitPunct(words[k+1])
				k++
				if slices.Contains(adverbList, strings.ToLower(next)) {
					out = append(out, next+ntail)
					continue
				}
				out = append(out, conjugate(next)+ntail)
				break
			}
		case lw == "my":
			out = append(out, name+"'s"+tail)
		case lw == "mine":
			out = append(out, name+"'s"+tail)
		case lw == "me" || lw == "myself":
			out = append(out, name+tail)
		default:
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

func splitPunct(w string) (string, string) {
	i := len(w)
	for i > 0 && strings.ContainsRune(`.,!?;:"”)`, rune(w[i-1])) {
		i--
	}
	return w[:i], w[i:]
}

var irregular = map[string]string{"am": "is", "have": "has", "do": "does", "go": "goes", "was": "was", "were": "was"}

var unchanged = map[string]bool{
	"will": true, "would": true, "can": true, "could": true, "should": true, "might": true, "must": true,
	"may": true, "shall": true, "did": true, "went": true, "got": true, "made": true, "took": true,
	"met": true, "ran": true, "saw": true, "bought": true, "had": true, "came": true, "found": true,
	"gave": true, "knew": true, "left": true, "felt": true, "thought": true, "told": true, "became": true,
	"began": true, "wrote": true, "read": true, "won": true, "lost": true, "learnt": true, "built": true,
	"quit": true, "cannot": true,
}

// conjugate puts a first-person present verb in the third person singular;
// past forms and modals stay as they are.
func conjugate(v string) string {
	lv := strings.ToLower(v)
	if r, ok := irregular[lv]; ok {
		return r
	}
	switch {
	case lv == "don't" || lv == "don’t":
		return "doesn't"
	case unchanged[lv], strings.HasSuffix(lv, "ed"), strings.ContainsAny(lv, "'’"):
		return v
	case strings.HasSuffix(lv, "s"), strings.HasSuffix(lv, "sh"), strings.HasSuffix(lv, "ch"),
		strings.HasSuffix(lv, "x"), strings.HasSuffix(lv, "z"), strings.HasSuffix(lv, "o"):
		return v + "es"
	case strings.HasSuffix(lv, "y") && len(lv) > 1 && !strings.ContainsRune("aeiou", rune(lv[len(lv)-2])):
		return v[:len(v)-1] + "ies"
	}
	return v + "s"
}
