// Package timeexpr finds dates and relative time expressions in English
// text and resolves them against a reference time: "yesterday", "last
// weekend", "two weeks ago", "in May", "on 8 May 2023", "2023-05-08",
// "before June 2023", "between March and May", "recently". The search
// pipeline uses it to read the time a question names (and to recognise
// questions that ask for a time: "when…", "what date…", "how long ago…"),
// and to find the dates a memory's content mentions.
//
// # Basics
//
// Parse returns every expression found, each with the byte span of the
// text it came from and the half-open interval [From, To) it denotes; a
// zero From or To leaves that side open ("before May" has no start).
// Intervals are computed in the reference time's location: "yesterday"
// is the calendar day before the reference's day there. Weeks start on
// Monday; "last week" is the calendar week before the reference's,
// "the past week" the seven days up to it.
//
// # Caveats
//
// The grammar is deliberately conservative, so that it rarely reads a date
// where none is meant: a month name counts only next to a day, a year, a
// preposition ("in May") or a modifier ("last March") — "May I ask" and
// "march on" are not dates; so does a weekday ("on Sunday", "last
// Sunday", not "the Sunday mass"); a bare year counts only after a
// preposition ("in 2022", "since 2016"); plural weekdays ("on Tuesdays")
// are habits, not dates. Expressions without a year resolve to the most recent such
// time at or before the reference ("in May" asked in April 2024 is May
// 2023), as questions to a memory are mostly about the past; "next" and
// "this" reach forward. Everything is deterministic and allocation-light;
// Parse never panics, whatever the input (a fuzz test checks it).
package timeexpr

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Expr is one time expression found in a text.
type Expr struct {
	// Text is the expression as written; Start and End are its byte
	// offsets in the parsed string (Text == s[Start:End]). The span
	// includes a leading preposition ("in May", "since 2016").
	Text       string
	Start, End int
	// From and To bound the interval [From, To) the expression denotes; a
	// zero value leaves that side open.
	From, To time.Time
}

// Contains reports whether t falls in the expression's interval.
func (e Expr) Contains(t time.Time) bool {
	return (e.From.IsZero() || !t.Before(e.From)) && (e.To.IsZero() || t.Before(e.To))
}

// Bounded reports whether both ends of the interval are set.
func (e Expr) Bounded() bool { return !e.From.IsZero() && !e.To.IsZero() }

// Ask says what kind of time a question asks for.
type Ask string

const (
	// AskNone: the question does not ask for a time.
	AskNone Ask = ""
	// AskWhen: "when did…", "what date…", "what year…", "what time…".
	AskWhen Ask = "when"
	// AskHowLong: "how long ago…", "how many days…", "how long has…".
	AskHowLong Ask = "how long"
	// AskOrder: "which … first", "in what order…".
	AskOrder Ask = "order"
)

// Question is what Parse finds in a question.
type Question struct {
	// Exprs are the time expressions, in order of appearance.
	Exprs []Expr
	// Ask says whether the question asks for a time, and AskStart/AskEnd
	// span the words that ask it ("how many days ago"); both 0 when Ask is
	// AskNone.
	Ask              Ask
	AskStart, AskEnd int
}

// Parse finds the time expressions in s, resolved against ref.
func Parse(s string, ref time.Time) []Expr {
	p := newParser(s, ref)
	var out []Expr
	for i := 0; i < len(p.toks); {
		if !p.canStart(i) {
			i++
			continue
		}
		if e, next, ok := p.phrase(i); ok {
			out = append(out, e)
			i = next
			continue
		}
		i++
	}
	return out
}

// ParseQuestion finds the time expressions of a question and whether it
// asks for a time.
func ParseQuestion(s string, ref time.Time) Question {
	q := Question{Exprs: Parse(s, ref)}
	p := newParser(s, time.Time{})
	q.Ask, q.AskStart, q.AskEnd = p.ask()
	return q
}

// Strip removes the spans of the expressions (and, when strip asks, of the
// words asking for a time) from s, leaving one space where each was.
func (q Question) Strip(s string, askWords bool) string {
	type span struct{ a, b int }
	var spans []span
	for _, e := range q.Exprs {
		spans = append(spans, span{e.Start, e.End})
	}
	if askWords && q.Ask != AskNone {
		spans = append(spans, span{q.AskStart, q.AskEnd})
	}
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	// Spans are few: order them by start with an insertion sort.
	for i := 1; i < len(spans); i++ {
		for j := i; j > 0 && spans[j].a < spans[j-1].a; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	for _, sp := range spans {
		if sp.a < last || sp.b > len(s) {
			continue
		}
		b.WriteString(s[last:sp.a])
		b.WriteByte(' ')
		last = sp.b
	}
	b.WriteString(s[last:])
	return strings.Join(strings.Fields(b.String()), " ")
}

// token is a word, a number or one punctuation character.
type token struct {
	w          string // lower case
	start, end int
	num        int  // value when isNum
	isNum      bool // all digits (at most 9)
	ord        bool // a number with an ordinal suffix: 8th, 1st
}

type parser struct {
	s    string
	toks []token
	ref  time.Time
	loc  *time.Location
}

func newParser(s string, ref time.Time) *parser {
	p := &parser{s: s, ref: ref, loc: ref.Location()}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if unicode.IsLetter(r2) || unicode.IsDigit(r2) {
					j += sz
					continue
				}
				// An apostrophe inside a word: "year's", "valentine's".
				if (r2 == '\'' || r2 == '’') && j+sz < len(s) {
					if r3, _ := utf8.DecodeRuneInString(s[j+sz:]); unicode.IsLetter(r3) {
						j += sz
						continue
					}
				}
				break
			}
			p.toks = append(p.toks, makeToken(s[i:j], i, j))
			i = j
		case unicode.IsSpace(r):
			i += size
		default:
			p.toks = append(p.toks, token{w: s[i : i+size], start: i, end: i + size})
			i += size
		}
		if len(p.toks) > 10000 { // bound the work on pathological input
			break
		}
	}
	return p
}

func makeToken(w string, start, end int) token {
	t := token{w: strings.ToLower(strings.ReplaceAll(w, "’", "'")), start: start, end: end}
	digits := 0
	for digits < len(t.w) && t.w[digits] >= '0' && t.w[digits] <= '9' {
		digits++
	}
	if digits == 0 || digits > 9 {
		return t
	}
	n := 0
	for _, c := range t.w[:digits] {
		n = n*10 + int(c-'0')
	}
	switch t.w[digits:] {
	case "":
		t.isNum, t.num = true, n
	case "st", "nd", "rd", "th":
		t.isNum, t.num, t.ord = true, n, true
	}
	return t
}

// starters are the words an expression can begin with, besides numbers,
// months, weekdays and seasons.
var starters = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`between from before until till prior after since in on during at of around
		over within for back the this last next past previous coming today tonight yesterday tomorrow recently
		lately earlier early mid late christmas xmas new halloween valentine's valentines independence
		thanksgiving easter a an couple few several`) {
		starters[w] = true
	}
	for w := range numberWords {
		starters[w] = true
	}
}

// canStart reports whether an expression may begin at token i: a cheap
// test that spares the rules most words of a text.
func (p *parser) canStart(i int) bool {
	t := p.toks[i]
	if t.isNum || starters[t.w] {
		return true
	}
	if _, ok := months[t.w]; ok {
		return true
	}
	if _, ok := weekdays[t.w]; ok {
		return true
	}
	_, ok := seasons[t.w]
	return ok
}

// word returns token i's lower-case text, or "" past the end.
func (p *parser) word(i int) string {
	if i < 0 || i >= len(p.toks) {
		return ""
	}
	return p.toks[i].w
}

func (p *parser) is(i int, ws ...string) bool {
	w := p.word(i)
	for _, x := range ws {
		if w == x {
			return true
		}
	}
	return false
}

// adjacent reports whether tokens i and i+1 touch (no space between).
func (p *parser) adjacent(i int) bool {
	return i+1 < len(p.toks) && p.toks[i].end == p.toks[i+1].start
}

// expr builds an Expr spanning tokens [i, j).
func (p *parser) expr(i, j int, from, to time.Time) Expr {
	a, b := p.toks[i].start, p.toks[j-1].end
	return Expr{Text: p.s[a:b], Start: a, End: b, From: from, To: to}
}

// phrase reads an expression starting at token i, with its preposition or
// range operator, and returns it and the index of the token after it.
func (p *parser) phrase(i int) (Expr, int, bool) {
	w := p.word(i)
	switch w {
	case "between":
		if a, j, ok := p.date(i+1, true); ok && p.is(j, "and") {
			if b, k, ok := p.date(j+1, true); ok && !a.From.IsZero() && !b.To.IsZero() && b.To.After(a.From) {
				return p.expr(i, k, a.From, b.To), k, true
			}
		}
	case "from":
		if a, j, ok := p.date(i+1, true); ok && p.is(j, "to", "until", "till", "through") {
			if b, k, ok := p.date(j+1, true); ok && !a.From.IsZero() && !b.To.IsZero() && b.To.After(a.From) {
				return p.expr(i, k, a.From, b.To), k, true
			}
		}
	case "before", "until", "till", "prior":
		k := i + 1
		if w == "prior" {
			if !p.is(k, "to") {
				return Expr{}, 0, false
			}
			k++
		}
		if d, j, ok := p.date(k, true); ok && !d.From.IsZero() {
			return p.expr(i, j, time.Time{}, d.From), j, true
		}
		return Expr{}, 0, false
	case "after":
		if d, j, ok := p.date(i+1, true); ok && !d.To.IsZero() {
			return p.expr(i, j, d.To, time.Time{}), j, true
		}
		return Expr{}, 0, false
	case "since":
		if d, j, ok := p.date(i+1, true); ok && !d.From.IsZero() {
			to := p.ref
			if !to.After(d.From) {
				to = time.Time{}
			}
			return p.expr(i, j, d.From, to), j, true
		}
		return Expr{}, 0, false
	case "in", "on", "during", "at", "of", "around", "over", "within", "for":
		k := i + 1
		if d, j, ok := p.date(k, true); ok {
			if w == "for" || w == "within" || w == "over" {
				// "for the past week", not "for May": only spans up to now.
				if !p.is(k, "the") && !p.is(k, "last", "past") {
					return Expr{}, 0, false
				}
			}
			return p.expr(i, j, d.From, d.To), j, true
		}
		return Expr{}, 0, false
	case "back":
		if p.is(i+1, "in") {
			if d, j, ok := p.date(i+2, true); ok {
				return p.expr(i, j, d.From, d.To), j, true
			}
		}
	}
	return p.date(i, false)
}

// date reads a date or a relative time at token i. ctx says a preposition
// precedes it, which lets a bare month or year count.
func (p *parser) date(i int, ctx bool) (Expr, int, bool) {
	if i >= len(p.toks) {
		return Expr{}, 0, false
	}
	for _, rule := range rules {
		if e, j, ok := rule(p, i, ctx); ok {
			return e, j, true
		}
	}
	return Expr{}, 0, false
}

// rules are tried in this order at every token that can start an expression.
var rules = []func(*parser, int, bool) (Expr, int, bool){
	(*parser).numeric, (*parser).relative, (*parser).ago, (*parser).partOf, (*parser).dayMonth,
	(*parser).monthFirst, (*parser).season, (*parser).holiday, (*parser).weekday, (*parser).year,
}

// --- calendar helpers ---

func (p *parser) day(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, 0, 0, 0, 0, p.loc)
}

// today is the start of the reference's day.
func (p *parser) today() time.Time {
	return p.day(p.ref.Year(), p.ref.Month(), p.ref.Day())
}

// monday is the start of the reference's week (weeks start on Monday).
func (p *parser) monday() time.Time {
	t := p.today()
	back := (int(t.Weekday()) + 6) % 7
	return t.AddDate(0, 0, -back)
}

func (p *parser) month(y int, m time.Month) (time.Time, time.Time) {
	a := p.day(y, m, 1)
	return a, a.AddDate(0, 1, 0)
}

// recentMonth is the year of the most recent month m that started at or
// before the reference.
func (p *parser) recentMonth(m time.Month) int {
	y := p.ref.Year()
	if m > p.ref.Month() {
		y--
	}
	return y
}

// recentDay is the most recent day (m, d) at or before the reference's day.
func (p *parser) recentDay(m time.Month, d int) (time.Time, bool) {
	if d < 1 || d > daysIn(2000, m) { // 2000 is a leap year: 29 February is valid
		return time.Time{}, false
	}
	y := p.ref.Year()
	for k := 0; k < 8; k++ { // 29 February: at most 8 years back
		if d <= daysIn(y-k, m) {
			t := p.day(y-k, m, d)
			if !t.After(p.today()) {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// --- vocabularies ---

var months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

var weekdays = map[string]time.Weekday{
	"monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday, "thursday": time.Thursday,
	"friday": time.Friday, "saturday": time.Saturday, "sunday": time.Sunday,
}

var numberWords = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
}

type unit int

const (
	noUnit unit = iota
	uDay
	uWeek
	uMonth
	uYear
	uWeekend
)

func unitOf(w string) unit {
	switch w {
	case "day", "days":
		return uDay
	case "week", "weeks":
		return uWeek
	case "fortnight":
		return uWeek // counted as two weeks by the caller
	case "month", "months":
		return uMonth
	case "year", "years":
		return uYear
	case "weekend", "weekends":
		return uWeekend
	}
	return noUnit
}

// count reads a quantity at token i: a number, a number word, "a couple
// of", "a few", "several". lo and hi bound a vague one.
func (p *parser) count(i int) (lo, hi, next int, ok bool) {
	t := p.word(i)
	switch {
	case i < len(p.toks) && p.toks[i].isNum && !p.toks[i].ord && p.toks[i].num > 0 && p.toks[i].num < 1000:
		n := p.toks[i].num
		return n, n, i + 1, true
	case t == "a" && p.is(i+1, "couple") && p.is(i+2, "of"), t == "couple" && p.is(i+1, "of"):
		j := i + 2
		if t == "a" {
			j = i + 3
		}
		return 1, 3, j, true
	case t == "a" && p.is(i+1, "few"), t == "few":
		j := i + 1
		if t == "a" {
			j = i + 2
		}
		return 2, 5, j, true
	case t == "several":
		return 3, 7, i + 1, true
	}
	if n, found := numberWords[t]; found {
		return n, n, i + 1, true
	}
	return 0, 0, 0, false
}

// --- rules ---

// numeric reads 2023-05-08, 2023/05/08, 5/8/2023 (month first) and 2023-05.
func (p *parser) numeric(i int, _ bool) (Expr, int, bool) {
	t := p.toks
	isN := func(k, minDigits, maxDigits int) bool {
		if k >= len(t) || !t[k].isNum || t[k].ord {
			return false
		}
		n := len(t[k].w)
		return n >= minDigits && n <= maxDigits
	}
	sep := func(k int, c string) bool { return p.is(k, c) && p.adjacent(k-1) && p.adjacent(k) }
	if isN(i, 4, 4) {
		for _, c := range []string{"-", "/"} {
			if sep(i+1, c) && isN(i+2, 1, 2) {
				y, m := t[i].num, t[i+2].num
				if m < 1 || m > 12 {
					return Expr{}, 0, false
				}
				if sep(i+3, c) && isN(i+4, 1, 2) {
					d := t[i+4].num
					if d < 1 || d > daysIn(y, time.Month(m)) {
						return Expr{}, 0, false
					}
					a := p.day(y, time.Month(m), d)
					return p.expr(i, i+5, a, a.AddDate(0, 0, 1)), i + 5, true
				}
				if c == "-" && !(i+3 < len(t) && p.adjacent(i+2)) {
					a, b := p.month(y, time.Month(m))
					return p.expr(i, i+3, a, b), i + 3, true
				}
			}
		}
	}
	if isN(i, 1, 2) && sep(i+1, "/") && isN(i+2, 1, 2) && sep(i+3, "/") && isN(i+4, 4, 4) {
		m, d, y := t[i].num, t[i+2].num, t[i+4].num
		if m < 1 || m > 12 || d < 1 || d > daysIn(y, time.Month(m)) {
			return Expr{}, 0, false
		}
		a := p.day(y, time.Month(m), d)
		return p.expr(i, i+5, a, a.AddDate(0, 0, 1)), i + 5, true
	}
	return Expr{}, 0, false
}

// yearAt reads a year (1900–2099) at token i.
func (p *parser) yearAt(i int) (int, bool) {
	if i >= len(p.toks) || !p.toks[i].isNum || p.toks[i].ord || len(p.toks[i].w) != 4 {
		return 0, false
	}
	y := p.toks[i].num
	return y, y >= 1900 && y <= 2099
}

// optYear reads an optional ", 2023" or "2023" after a date at token i.
func (p *parser) optYear(i int) (int, int, bool) {
	j := i
	if p.is(j, ",") {
		j++
	}
	if y, ok := p.yearAt(j); ok {
		return y, j + 1, true
	}
	return 0, i, false
}

// dayOf reads a day of the month at token i: 8, 8th.
func (p *parser) dayOf(i int) (int, bool) {
	if i >= len(p.toks) || !p.toks[i].isNum || len(p.toks[i].w) > 4 {
		return 0, false
	}
	d := p.toks[i].num
	return d, d >= 1 && d <= 31
}

// dayMonth reads "8 May", "8th of May", "the 8th of May", with an optional year.
func (p *parser) dayMonth(i int, _ bool) (Expr, int, bool) {
	k := i
	if p.is(k, "the") {
		k++
	}
	d, ok := p.dayOf(k)
	if !ok || (k > i && !p.toks[k].ord) {
		return Expr{}, 0, false
	}
	k++
	if p.is(k, "of") {
		k++
	}
	m, ok := months[p.word(k)]
	if !ok {
		return Expr{}, 0, false
	}
	k++
	return p.dayResult(i, k, m, d)
}

// dayResult resolves day d of month m, with the year read at token k if any.
func (p *parser) dayResult(i, k int, m time.Month, d int) (Expr, int, bool) {
	if y, j, ok := p.optYear(k); ok {
		if d > daysIn(y, m) {
			return Expr{}, 0, false
		}
		a := p.day(y, m, d)
		return p.expr(i, j, a, a.AddDate(0, 0, 1)), j, true
	}
	a, ok := p.recentDay(m, d)
	if !ok {
		return Expr{}, 0, false
	}
	return p.expr(i, k, a, a.AddDate(0, 0, 1)), k, true
}

// monthFirst reads "May 8", "May 8th, 2023", "May the 8th", "May 2023",
// "May, 2023", and a bare month after a preposition ("in May").
func (p *parser) monthFirst(i int, ctx bool) (Expr, int, bool) {
	m, ok := months[p.word(i)]
	if !ok {
		return Expr{}, 0, false
	}
	k := i + 1
	if p.is(k, "the") && k+1 < len(p.toks) && p.toks[k+1].ord {
		k++
	}
	if d, ok := p.dayOf(k); ok {
		return p.dayResult(i, k+1, m, d)
	}
	if y, j, ok := p.optYear(i + 1); ok {
		a, b := p.month(y, m)
		return p.expr(i, j, a, b), j, true
	}
	if !ctx { // a bare month needs a preposition: "in May", not "it may"
		return Expr{}, 0, false
	}
	a, b := p.month(p.recentMonth(m), m)
	return p.expr(i, i+1, a, b), i + 1, true
}

// year reads a bare year after a preposition: "in 2022", "since 2016".
func (p *parser) year(i int, ctx bool) (Expr, int, bool) {
	k := i
	if p.is(k, "the") && p.is(k+1, "year") {
		k += 2
		ctx = true
	}
	y, ok := p.yearAt(k)
	if !ok || !ctx {
		return Expr{}, 0, false
	}
	a := p.day(y, 1, 1)
	return p.expr(i, k+1, a, a.AddDate(1, 0, 0)), k + 1, true
}

// seasons: the months a (northern-hemisphere, meteorological) season starts
// and how long it lasts.
var seasons = map[string]time.Month{"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}

// seasonStart is the start of the season beginning in month m of year y.
func (p *parser) seasonStart(y int, m time.Month) time.Time { return p.day(y, m, 1) }

// season reads "summer", "the summer", "this/last/next summer", "summer
// 2023", "the summer of 2023". A bare season needs a preposition or "the".
func (p *parser) season(i int, ctx bool) (Expr, int, bool) {
	k, mod := i, ""
	switch {
	case p.is(k, "this", "last", "next", "past"):
		mod = p.word(k)
		k++
	case p.is(k, "the") && p.is(k+1, "past", "last"):
		mod = "last"
		k += 2
	case p.is(k, "the"):
		k++
		ctx = true
	}
	m, ok := seasons[p.word(k)]
	if !ok {
		return Expr{}, 0, false
	}
	k++
	if y, j, ok := p.optYear(k); ok || (p.is(k, "of") && func() bool { y, j, ok = p.optYear(k + 1); return ok }()) {
		a := p.seasonStart(y, m)
		return p.expr(i, j, a, a.AddDate(0, 3, 0)), j, true
	}
	if mod == "" && !ctx {
		return Expr{}, 0, false
	}
	// The season containing or most recently before the reference.
	y := p.ref.Year()
	cur := p.seasonStart(y, m)
	if cur.After(p.ref) {
		cur = p.seasonStart(y-1, m)
	}
	switch mod {
	case "last", "past":
		if !cur.AddDate(0, 3, 0).After(p.ref) {
			break // it ended: that is the last one
		}
		cur = cur.AddDate(-1, 0, 0)
	case "next":
		cur = cur.AddDate(1, 0, 0)
	case "this":
		// The current one, or this year's when it is still to come.
		if !cur.AddDate(0, 3, 0).After(p.ref) {
			if next := cur.AddDate(1, 0, 0); next.Year() == p.ref.Year() {
				cur = next
			}
		}
	}
	return p.expr(i, k, cur, cur.AddDate(0, 3, 0)), k, true
}

// holiday reads a few fixed-date and computed holidays, with an optional year.
func (p *parser) holiday(i int, _ bool) (Expr, int, bool) {
	k := i
	if p.is(k, "the") {
		k++
	}
	var m time.Month
	var d int
	var computed func(y int) time.Time
	switch {
	case p.is(k, "christmas", "xmas"):
		m, d = 12, 25
		k++
		if p.is(k, "eve") {
			d = 24
			k++
		} else if p.is(k, "day") {
			k++
		}
	case p.is(k, "new") && p.is(k+1, "year's", "years", "year"):
		k += 2
		switch {
		case p.is(k, "eve"):
			m, d = 12, 31
			k++
		case p.is(k, "day"):
			m, d = 1, 1
			k++
		default:
			m, d = 1, 1
		}
	case p.is(k, "halloween"):
		m, d = 10, 31
		k++
	case p.is(k, "valentine's", "valentines") && p.is(k+1, "day"):
		m, d = 2, 14
		k += 2
	case p.is(k, "independence") && p.is(k+1, "day"):
		m, d = 7, 4
		k += 2
	case p.is(k, "thanksgiving"):
		k++
		computed = func(y int) time.Time { // the fourth Thursday of November
			t := p.day(y, 11, 1)
			off := (int(time.Thursday) - int(t.Weekday()) + 7) % 7
			return t.AddDate(0, 0, off+21)
		}
	case p.is(k, "easter"):
		k++
		if p.is(k, "sunday") {
			k++
		}
		computed = func(y int) time.Time { em, ed := easter(y); return p.day(y, em, ed) }
	default:
		return Expr{}, 0, false
	}
	at := func(y int) time.Time {
		if computed != nil {
			return computed(y)
		}
		return p.day(y, m, d)
	}
	var a time.Time
	if y, j, ok := p.optYear(k); ok {
		a, k = at(y), j
	} else {
		a = at(p.ref.Year())
		if a.After(p.today()) {
			a = at(p.ref.Year() - 1)
		}
	}
	return p.expr(i, k, a, a.AddDate(0, 0, 1)), k, true
}

// easter returns the month and day of (Western) Easter Sunday in year y
// (the anonymous Gregorian algorithm).
func easter(y int) (time.Month, int) {
	a, b, c := y%19, y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return time.Month(month), day
}

// weekday reads "on Saturday", "last Saturday", "this Friday", "next
// Monday", "on Saturday night" (singular only: "on Tuesdays" is a habit).
// A bare weekday needs a preposition or a modifier: "the Sunday mass" is
// not a date.
func (p *parser) weekday(i int, ctx bool) (Expr, int, bool) {
	k, mod := i, ""
	if p.is(k, "last", "this", "next", "past", "previous", "coming") {
		mod = p.word(k)
		k++
	}
	wd, ok := weekdays[p.word(k)]
	if !ok || (mod == "" && !ctx) {
		return Expr{}, 0, false
	}
	k++
	if p.is(k, "morning", "afternoon", "evening", "night") {
		k++
	}
	t := p.today()
	back := (int(t.Weekday()) - int(wd) + 7) % 7
	var a time.Time
	switch mod {
	case "last", "past", "previous":
		if back == 0 {
			back = 7
		}
		a = t.AddDate(0, 0, -back)
	case "next", "coming":
		fwd := (int(wd) - int(t.Weekday()) + 7) % 7
		if fwd == 0 {
			fwd = 7
		}
		a = t.AddDate(0, 0, fwd)
	case "this":
		a = p.monday().AddDate(0, 0, (int(wd)+6)%7)
	default:
		a = t.AddDate(0, 0, -back)
	}
	return p.expr(i, k, a, a.AddDate(0, 0, 1)), k, true
}

// partOf reads "early May", "mid-May", "late 2022", "the end of May",
// "the beginning of 2023": a third (or the first or last ten days, or
// month) of a month or a year.
func (p *parser) partOf(i int, ctx bool) (Expr, int, bool) {
	k, part := i, ""
	switch {
	case p.is(k, "early", "late"):
		part = p.word(k)
		k++
	case p.is(k, "mid") && p.is(k+1, "-") && p.adjacent(k):
		part = "mid"
		k += 2
	case p.is(k, "mid"):
		part = "mid"
		k++
	case p.is(k, "the") && p.is(k+1, "end", "beginning", "start", "middle") && p.is(k+2, "of"):
		part = map[string]string{"end": "late", "beginning": "early", "start": "early", "middle": "mid"}[p.word(k+1)]
		k += 3
	default:
		return Expr{}, 0, false
	}
	d, j, ok := p.monthFirst(k, true)
	if !ok || !d.Bounded() {
		if d, j, ok = p.year(k, true); !ok {
			return Expr{}, 0, false
		}
	}
	span := d.To.Sub(d.From)
	if span > 40*24*time.Hour { // a year: thirds by month
		switch part {
		case "early":
			d.To = d.From.AddDate(0, 4, 0)
		case "mid":
			d.From, d.To = d.From.AddDate(0, 4, 0), d.From.AddDate(0, 8, 0)
		case "late":
			d.From = d.From.AddDate(0, 8, 0)
		}
	} else if span > 2*24*time.Hour { // a month: thirds by ten days
		switch part {
		case "early":
			d.To = d.From.AddDate(0, 0, 10)
		case "mid":
			d.From, d.To = d.From.AddDate(0, 0, 10), d.From.AddDate(0, 0, 20)
		case "late":
			d.From = d.From.AddDate(0, 0, 20)
		}
	} else {
		return Expr{}, 0, false // "early May 8": a day has no thirds here
	}
	return p.expr(i, j, d.From, d.To), j, true
}

// relative reads words relative to the reference: today, yesterday,
// tonight, last night, this morning, the day before yesterday, this/last/
// next/past week, weekend, month or year, the past N days, recently,
// lately, the other day, earlier this week.
func (p *parser) relative(i int, _ bool) (Expr, int, bool) {
	t := p.today()
	day := func(a time.Time, j int) (Expr, int, bool) { return p.expr(i, j, a, a.AddDate(0, 0, 1)), j, true }
	k := i
	w := p.word(k)
	switch w {
	case "today":
		return day(t, k+1)
	case "tonight":
		return p.expr(i, k+1, t.Add(18*time.Hour), t.AddDate(0, 0, 1)), k + 1, true
	case "yesterday", "tomorrow":
		a := t.AddDate(0, 0, -1)
		if w == "tomorrow" {
			a = t.AddDate(0, 0, 1)
		}
		if from, to, ok := dayPart(p.word(k + 1)); ok {
			return p.expr(i, k+2, a.Add(from), a.Add(to)), k + 2, true
		}
		return day(a, k+1)
	case "recently", "lately":
		return p.expr(i, k+1, t.AddDate(0, 0, -30), p.ref), k + 1, true
	case "earlier":
		if p.is(k+1, "today") {
			return p.expr(i, k+2, t, p.ref), k + 2, true
		}
		if p.is(k+1, "this") {
			if a, _, ok := p.thisUnit(unitOf(p.word(k + 2))); ok {
				return p.expr(i, k+3, a, p.ref), k + 3, true
			}
		}
		return Expr{}, 0, false
	case "the":
		switch {
		case p.is(k+1, "day") && p.is(k+2, "before") && p.is(k+3, "yesterday"):
			return day(t.AddDate(0, 0, -2), k+4)
		case p.is(k+1, "day") && p.is(k+2, "after") && p.is(k+3, "tomorrow"):
			return day(t.AddDate(0, 0, 2), k+4)
		case p.is(k+1, "other") && p.is(k+2, "day"):
			return p.expr(i, k+3, t.AddDate(0, 0, -7), t), k + 3, true
		case p.is(k+1, "past", "last", "previous"):
			if e, j, ok := p.lastUnit(i, k+2); ok {
				return e, j, true
			}
			return p.pastSpan(i, k+2)
		case p.is(k+1, "next", "coming"):
			return p.nextSpan(i, k+2)
		}
		return Expr{}, 0, false
	case "this":
		if from, to, ok := dayPart(p.word(k + 1)); ok {
			return p.expr(i, k+2, t.Add(from), t.Add(to)), k + 2, true
		}
		if a, b, ok := p.thisUnit(unitOf(p.word(k + 1))); ok && !p.is(k+1, "weeks", "months", "years", "days") {
			return p.expr(i, k+2, a, b), k + 2, true
		}
		if p.is(k+1, "past") { // "this past weekend"
			return p.lastUnit(i, k+2)
		}
	case "last":
		if p.is(k+1, "night") {
			return p.expr(i, k+2, t.AddDate(0, 0, -1).Add(18*time.Hour), t.Add(6*time.Hour)), k + 2, true
		}
		if e, j, ok := p.lastUnit(i, k+1); ok {
			return e, j, true
		}
		return p.pastSpan(i, k+1)
	case "past", "previous":
		if e, j, ok := p.lastUnit(i, k+1); ok {
			return e, j, true
		}
		return p.pastSpan(i, k+1)
	case "next", "coming":
		if u := unitOf(p.word(k + 1)); u != noUnit && !p.is(k+1, "days", "weeks", "months", "years", "weekends") {
			a, b, _ := p.thisUnit(u)
			switch u {
			case uDay:
				a, b = a.AddDate(0, 0, 1), b.AddDate(0, 0, 1)
			case uMonth:
				a, b = b, b.AddDate(0, 1, 0)
			case uYear:
				a, b = b, b.AddDate(1, 0, 0)
			default:
				a, b = a.AddDate(0, 0, 7), b.AddDate(0, 0, 7)
			}
			return p.expr(i, k+2, a, b), k + 2, true
		}
		if m, ok := months[p.word(k+1)]; ok {
			y := p.ref.Year()
			if m <= p.ref.Month() {
				y++
			}
			a, b := p.month(y, m)
			return p.expr(i, k+2, a, b), k + 2, true
		}
	}
	return Expr{}, 0, false
}

// dayPart is the span of a part of the day, from the day's start.
func dayPart(w string) (time.Duration, time.Duration, bool) {
	switch w {
	case "morning":
		return 5 * time.Hour, 12 * time.Hour, true
	case "afternoon":
		return 12 * time.Hour, 18 * time.Hour, true
	case "evening":
		return 17 * time.Hour, 24 * time.Hour, true
	case "night":
		return 18 * time.Hour, 30 * time.Hour, true
	}
	return 0, 0, false
}

// thisUnit is the calendar day, week, weekend, month or year of the reference.
func (p *parser) thisUnit(u unit) (time.Time, time.Time, bool) {
	t := p.today()
	switch u {
	case uDay:
		return t, t.AddDate(0, 0, 1), true
	case uWeek:
		m := p.monday()
		return m, m.AddDate(0, 0, 7), true
	case uWeekend:
		m := p.monday()
		return m.AddDate(0, 0, 5), m.AddDate(0, 0, 7), true
	case uMonth:
		a, b := p.month(p.ref.Year(), p.ref.Month())
		return a, b, true
	case uYear:
		a := p.day(p.ref.Year(), 1, 1)
		return a, a.AddDate(1, 0, 0), true
	}
	return time.Time{}, time.Time{}, false
}

// lastUnit reads, after "last"/"past", a unit ("week", "weekend", "month",
// "year") or a month name: the calendar one before the reference's.
func (p *parser) lastUnit(i, k int) (Expr, int, bool) {
	if m, ok := months[p.word(k)]; ok {
		y := p.ref.Year()
		if m >= p.ref.Month() {
			y--
		}
		a, b := p.month(y, m)
		return p.expr(i, k+1, a, b), k + 1, true
	}
	u := unitOf(p.word(k))
	if u == noUnit || p.is(k, "days", "weeks", "months", "years", "weekends", "fortnight") {
		return Expr{}, 0, false
	}
	a, b, _ := p.thisUnit(u)
	switch u {
	case uDay:
		a, b = a.AddDate(0, 0, -1), b.AddDate(0, 0, -1)
	case uWeek, uWeekend:
		a, b = a.AddDate(0, 0, -7), b.AddDate(0, 0, -7)
	case uMonth:
		a, b = a.AddDate(0, -1, 0), a
	case uYear:
		a, b = a.AddDate(-1, 0, 0), a
	}
	if p.word(i) == "the" || (p.word(i) == "past" && u != uWeekend) {
		// "the past week": the seven days up to the reference, not the
		// calendar week before; likewise month and year.
		switch u {
		case uWeek:
			a, b = p.today().AddDate(0, 0, -7), p.ref
		case uMonth:
			a, b = p.today().AddDate(0, -1, 0), p.ref
		case uYear:
			a, b = p.today().AddDate(-1, 0, 0), p.ref
		}
	}
	return p.expr(i, k+1, a, b), k + 1, true
}

// pastSpan reads, after "the past"/"the last"/"last"/"past", a count and
// a unit ("3 days", "few weeks", "couple of months", "week") or a single
// unit: the span of that length up to the reference.
func (p *parser) pastSpan(i, k int) (Expr, int, bool) {
	t := p.today()
	_, hi, j, ok := p.count(k)
	n := 1
	if ok {
		n = hi
	} else {
		j = k
	}
	u := unitOf(p.word(j))
	if u == noUnit || u == uWeekend {
		return Expr{}, 0, false
	}
	if p.is(j, "fortnight") {
		n *= 2
	}
	var a time.Time
	switch u {
	case uDay:
		a = t.AddDate(0, 0, -n)
	case uWeek:
		a = t.AddDate(0, 0, -7*n)
	case uMonth:
		a = t.AddDate(0, -n, 0)
	case uYear:
		a = t.AddDate(-n, 0, 0)
	}
	return p.expr(i, j+1, a, p.ref), j + 1, true
}

// nextSpan reads, after "the next"/"the coming", a count and a unit: the
// span of that length from the reference.
func (p *parser) nextSpan(i, k int) (Expr, int, bool) {
	t := p.today().AddDate(0, 0, 1)
	_, hi, j, ok := p.count(k)
	n := 1
	if ok {
		n = hi
	} else {
		j = k
	}
	var b time.Time
	switch unitOf(p.word(j)) {
	case uDay:
		b = t.AddDate(0, 0, n)
	case uWeek:
		b = t.AddDate(0, 0, 7*n)
	case uMonth:
		b = t.AddDate(0, n, 0)
	case uYear:
		b = t.AddDate(n, 0, 0)
	default:
		return Expr{}, 0, false
	}
	return p.expr(i, j+1, p.ref, b), j + 1, true
}

// ago reads "N days ago", "a week ago", "a few months ago", "two years
// ago": the day, the week around the day, the calendar month or the
// calendar year that far back; a vague count widens the interval.
func (p *parser) ago(i int, _ bool) (Expr, int, bool) {
	lo, hi, j, ok := p.count(i)
	if !ok {
		return Expr{}, 0, false
	}
	u := unitOf(p.word(j))
	if u == noUnit || u == uWeekend || !p.is(j+1, "ago") {
		return Expr{}, 0, false
	}
	if p.is(j, "fortnight") {
		lo, hi = lo*2, hi*2
	}
	t := p.today()
	end := j + 2
	var a, b time.Time
	switch u {
	case uDay:
		a, b = t.AddDate(0, 0, -hi), t.AddDate(0, 0, -lo+1)
	case uWeek:
		a, b = t.AddDate(0, 0, -7*hi-3), t.AddDate(0, 0, -7*lo+4)
	case uMonth:
		x, y := t.AddDate(0, -hi, 0), t.AddDate(0, -lo, 0)
		a, _ = p.month(x.Year(), x.Month())
		_, b = p.month(y.Year(), y.Month())
	case uYear:
		a, b = p.day(t.Year()-hi, 1, 1), p.day(t.Year()-lo+1, 1, 1)
	}
	return p.expr(i, end, a, b), end, true
}

// ask recognises a question that asks for a time and the words asking it.
func (p *parser) ask() (Ask, int, int) {
	n := min(len(p.toks), 8) // the asking words open the question (after a few words at most)
	span := func(i, j int) (int, int) { return p.toks[i].start, p.toks[j-1].end }
	for i := 0; i < n; i++ {
		w := p.word(i)
		switch {
		case w == "when" && p.asksWhen(i):
			a, b := span(i, i+1)
			return AskWhen, a, b
		case (w == "what" || w == "which") && p.is(i+1, "date", "day", "month", "year", "time", "week", "season", "dates", "days"):
			j := i + 2
			if p.is(i+1, "day") && p.is(j, "of") && p.is(j+1, "the") && p.is(j+2, "week", "month") {
				j += 3
			}
			a, b := span(i, j)
			return AskWhen, a, b
		case w == "how" && p.is(i+1, "long"):
			j := i + 2
			if p.is(j, "ago") {
				j++
			}
			a, b := span(i, j)
			return AskHowLong, a, b
		case w == "how" && p.is(i+1, "many", "much") && unitOf(p.word(i+2)) != noUnit || w == "how" && p.is(i+1, "much") && p.is(i+2, "time"):
			j := i + 3
			if p.is(j, "ago") {
				j++
			}
			a, b := span(i, j)
			return AskHowLong, a, b
		case w == "what" && p.is(i+1, "order"), w == "in" && p.is(i+1, "what", "which") && p.is(i+2, "order"):
			return AskOrder, 0, 0
		}
	}
	if p.is(0, "which", "who", "what") {
		for i := 1; i < len(p.toks); i++ {
			if p.is(i, "first", "earlier", "sooner") || (p.is(i, "the") && p.is(i+1, "order")) {
				return AskOrder, 0, 0
			}
		}
	}
	return AskNone, 0, 0
}

// asksWhen says whether the "when" at token i asks for a time rather than
// joining two clauses ("Who supports Caroline when she has a bad day?",
// "Stacking is more stable when a purine is present"): it opens the
// question, or an auxiliary follows it as in a question ("so when did I
// move?"), or it follows a verb of knowing or telling ("do you remember when
// I moved?", "remind me when the market is"; not "who called me when I was
// ill?").
func (p *parser) asksWhen(i int) bool {
	return i == 0 || p.is(i+1, whenAux...) || p.is(i-1, "remember", "recall", "know", "wonder", "wondering", "forgot") ||
		p.is(i-1, "me", "us") && p.is(i-2, "tell", "remind", "show")
}

// whenAux are the auxiliaries that follow an asking "when".
var whenAux = []string{"did", "do", "does", "was", "were", "is", "are", "am", "will", "would", "has", "have", "had",
	"can", "could", "should", "shall", "may", "might", "must"}
