// Package secret finds credentials in text: API keys and tokens of common
// providers (AWS, GitHub, GitLab, Slack, OpenAI and Anthropic style, Stripe,
// Google), JSON web tokens, private key blocks, passwords in URLs, patterns
// a user adds, and long random-looking strings. The engine's quarantine
// policy holds a new memory whose content matches for review
// (governance.secrets), so that a secret an agent picked up does not surface
// in recall until a person has looked at it.
//
// A Finding names the rule that matched and where, never the matched text:
// the reason is kept in the audit log, which outlives the memory.
package secret

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memos-go/memos/core/driver"
)

// Config configures the detector. The zero value is the default: every
// built-in rule on, the generic rule at DefaultMinLength and
// DefaultMinEntropy.
type Config struct {
	// Disable turns the detector off.
	Disable bool `koanf:"disable" json:"disable,omitempty"`
	// Patterns are extra regular expressions (RE2 syntax, as in Go's regexp
	// package); content with a match is held as "pattern N".
	Patterns []string `koanf:"patterns" json:"patterns,omitempty"`
	// MinLength and MinEntropy tune the generic rule: a run of at least
	// MinLength characters of the base64 and URL-safe alphabets that mixes
	// upper case, lower case and digits and whose Shannon entropy is at
	// least MinEntropy bits per character looks like a random key.
	// Defaults DefaultMinLength and DefaultMinEntropy; a negative
	// MinEntropy turns the generic rule off.
	MinLength  int     `koanf:"min_length" json:"min_length,omitempty"`
	MinEntropy float64 `koanf:"min_entropy" json:"min_entropy,omitempty"`
}

// The generic rule's defaults (see Config), measured on real conversations
// (the LoCoMo and LongMemEval dev turns, see the package test): no turn is
// held while random keys of 24 characters and more are.
const (
	DefaultMinLength  = 24
	DefaultMinEntropy = 3.8
)

// Finding is a match: which rule, what it looks like, and where. It never
// holds the matched text.
type Finding struct {
	Rule string // e.g. "aws_access_key", "pattern 2"
	What string // e.g. "an AWS access key id"
	// Offset is the byte offset of the match in the text.
	Offset int
}

// Reason is the finding as a quarantine reason.
func (f Finding) Reason() string {
	return fmt.Sprintf("looks like a secret: %s at byte %d (rule %s)", f.What, f.Offset, f.Rule)
}

type rule struct {
	name, what string
	re         *regexp.Regexp
	// real, if set, says whether the match at loc (with its groups) is a
	// secret rather than a placeholder.
	real func(s string, loc []int) bool
	// hints, if any, are strings a match must contain (one of them; in
	// lower case when fold): the regexp runs only on text that holds one,
	// which spares most texts every regexp.
	hints []string
	fold  bool
}

// rules are the built-in rules, most specific first.
var rules = []rule{
	{"private_key", "a private key block", regexp.MustCompile(`-----BEGIN[A-Z0-9 ]{0,32} PRIVATE KEY(?: BLOCK)?-----`), nil,
		[]string{"PRIVATE KEY"}, false},
	{"aws_access_key", "an AWS access key id", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b`), nil,
		[]string{"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "AROA", "APKA"}, false},
	{"github_token", "a GitHub token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`), nil,
		[]string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, false},
	{"gitlab_token", "a GitLab token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`), nil, []string{"glpat-"}, false},
	{"slack_token", "a Slack token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), nil, []string{"xox"}, false},
	{"slack_webhook", "a Slack webhook URL", regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9_/-]{20,}`), nil,
		[]string{"hooks.slack.com"}, false},
	{"stripe_key", "a Stripe key", regexp.MustCompile(`\b[srp]k_(?:live|test)_[A-Za-z0-9]{16,}`), nil, []string{"k_live_", "k_test_"}, false},
	{"api_key", "an API key of the sk- kind (OpenAI, Anthropic)", regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), nil, []string{"sk-"}, false},
	{"google_api_key", "a Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), nil, []string{"AIza"}, false},
	{"jwt", "a JSON web token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), nil, []string{"eyJ"}, false},
	{"docker_token", "a Docker access token", regexp.MustCompile(`\bdckr\\?_pat\\?_[A-Za-z0-9_-]{20,}`), nil, []string{"dckr"}, false},
	{"url_password", "a password in a URL", regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://([^\s:/@]{1,64}):([^\s/@]{1,128})@[A-Za-z0-9.-]+`), realPassword,
		[]string{"://"}, false},
	{"url_credential", "a credential in a URL query", regexp.MustCompile(`(?i)[?&](?:access_token|api_?key|auth|client_secret|key|password|secret|sig|signature|token)=[A-Za-z0-9%._~+/-]{16,}`), nil,
		[]string{"token=", "key=", "auth=", "secret=", "password=", "sig=", "signature="}, true},
}

// placeholders are passwords of examples and defaults, not secrets.
var placeholders = map[string]bool{"password": true, "passwd": true, "pass": true, "pwd": true, "secret": true,
	"admin": true, "root": true, "changeme": true, "example": true, "test": true, "user": true, "username": true,
	"guest": true, "postgres": true, "mysql": true, "yourpassword": true, "mypassword": true, "your_password": true}

// realPassword says whether the password of a url_password match is not a
// placeholder: a word of examples (password, admin, …), the user name
// again, or a template (<password>, ${PASSWORD}, ***).
func realPassword(s string, loc []int) bool {
	user, pass := s[loc[2]:loc[3]], s[loc[4]:loc[5]]
	return !placeholders[strings.ToLower(pass)] && pass != user &&
		!strings.ContainsAny(pass, "<>{}[]$*%") && strings.Trim(pass, "x.") != ""
}

// Detector finds secrets in text. A nil *Detector finds none.
type Detector struct {
	rules      []rule
	minLength  int
	minEntropy float64
}

// New returns the detector c describes, or nil (which finds nothing) when
// c disables it. A pattern that does not compile is an ErrInvalid naming
// it.
func New(c Config) (*Detector, error) {
	if c.Disable {
		return nil, nil
	}
	d := &Detector{rules: rules, minLength: c.MinLength, minEntropy: c.MinEntropy}
	if d.minLength == 0 {
		d.minLength = DefaultMinLength
	}
	if d.minEntropy == 0 {
		d.minEntropy = DefaultMinEntropy
	}
	if d.minLength < 8 {
		return nil, driver.Invalidf("governance.secrets.min_length %d is below 8", c.MinLength)
	}
	if d.minEntropy > 8 || math.IsNaN(d.minEntropy) {
		return nil, driver.Invalidf("governance.secrets.min_entropy %v is over 8 bits per character (negative: off)", c.MinEntropy)
	}
	for i, p := range c.Patterns {
		re, err := regexp.Compile(p)
		if err != nil || p == "" {
			msg := "it is empty"
			if err != nil {
				msg = err.Error()
			}
			return nil, driver.Invalidf("governance.secrets.patterns: pattern %d %q does not compile (%s); write it in Go regexp (RE2) syntax", i+1, p, msg)
		}
		d.rules = append(d.rules, rule{name: fmt.Sprintf("pattern %d", i+1), what: "a match of a configured pattern", re: re})
	}
	return d, nil
}

// Find returns the first rule, in rule order, that matches s.
func (d *Detector) Find(s string) (Finding, bool) {
	if d == nil {
		return Finding{}, false
	}
	lower := "" // s in lower case, for the hints of rules that fold case
	for _, r := range d.rules {
		if len(r.hints) > 0 {
			in := s
			if r.fold {
				if lower == "" {
					lower = strings.ToLower(s)
				}
				in = lower
			}
			if !slices.ContainsFunc(r.hints, func(h string) bool { return strings.Contains(in, h) }) {
				continue
			}
		}
		if r.real == nil {
			if loc := r.re.FindStringIndex(s); loc != nil {
				return Finding{Rule: r.name, What: r.what, Offset: loc[0]}, true
			}
			continue
		}
		for _, loc := range r.re.FindAllStringSubmatchIndex(s, -1) {
			if r.real(s, loc) {
				return Finding{Rule: r.name, What: r.what, Offset: loc[0]}, true
			}
		}
	}
	if d.minEntropy >= 0 {
		if off, ok := d.random(s); ok {
			return Finding{Rule: "high_entropy", What: fmt.Sprintf("a random-looking string of %d or more characters", d.minLength), Offset: off}, true
		}
	}
	return Finding{}, false
}

// urlRE matches a URL: random-looking ids in links (documents, videos,
// playlists) are addresses, not secrets; a credential in a URL is the
// url_password and url_credential rules' business.
var urlRE = regexp.MustCompile(`(?i)\b(?:[a-z][a-z0-9+.-]{1,20}://|www\.)[^\s<>"'()\[\]{}]+`)

// random finds a run of base64 or URL-safe characters outside URLs that
// looks random (see Config.MinLength) and returns its offset.
func (d *Detector) random(s string) (int, bool) {
	var urls [][]int
	if strings.Contains(s, "://") || strings.Contains(s, "www.") || strings.Contains(s, "WWW.") {
		urls = urlRE.FindAllStringIndex(s, -1)
	}
	start := -1
	for i := 0; i <= len(s); i++ {
		if len(urls) > 0 && i == urls[0][0] {
			i, start = urls[0][1]-1, -1 // resume after the URL
			urls = urls[1:]
			continue
		}
		if i < len(s) && tokenByte(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= d.minLength && d.looksRandom(s[start:i]) {
			return start, true
		}
		start = -1
	}
	return 0, false
}

func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("+/=_-", c) >= 0
}

// looksRandom reports whether tok mixes upper case, lower case and digits,
// has at least the detector's entropy per character and is not made of
// words (see wordy).
func (d *Detector) looksRandom(tok string) bool {
	var upper, lower, digit bool
	var counts [128]int
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		counts[c]++
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	if !upper || !lower || !digit {
		return false
	}
	return entropy(counts[:], utf8.RuneCountInString(tok)) >= d.minEntropy && !wordy(tok)
}

// wordy reports whether at least half of tok's letters are in words, as in
// identifiers (SomeVeryLongClassName2) and paths (src/widgets/app_bar): a
// word is a run of four or more lower-case letters, after at most one
// capital, with a vowel (a, e, i, o, u, y) for every three letters and no
// more than three consonants in a row. Random strings of mixed case have
// few such runs (at 24 characters, 1 in 100 is wordy; at 32, 1 in 300).
func wordy(tok string) bool {
	letters, inWords := 0, 0
	for i := 0; i < len(tok); {
		if !isLetter(tok[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(tok) && tok[j] >= 'a' && tok[j] <= 'z' {
			j++
		}
		if word(tok[i:j]) {
			inWords += j - i
		}
		letters += j - i
		i = j
	}
	return 2*inWords >= letters
}

// word reports whether seg (a capital or lower-case letter, then lower-case
// letters) reads like a word; see wordy.
func word(seg string) bool {
	if len(seg) < 4 {
		return false
	}
	vowels, run := 0, 0
	for i := 0; i < len(seg); i++ {
		switch seg[i] | 0x20 { // lower case
		case 'a', 'e', 'i', 'o', 'u', 'y':
			vowels++
			run = 0
		default:
			if run++; run > 3 {
				return false
			}
		}
	}
	return 3*vowels >= len(seg)-1
}

func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isLetter(c byte) bool { return isUpper(c) || c >= 'a' && c <= 'z' }

// entropy is the Shannon entropy, in bits per character, of n characters
// with the given counts.
func entropy(counts []int, n int) float64 {
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(n)
			h -= p * math.Log2(p)
		}
	}
	return h
}
