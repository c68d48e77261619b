package timeexpr

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// ref is a Tuesday evening.
var ref = time.Date(2023, 3, 21, 21, 43, 0, 0, time.UTC)

func d(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 0, 0, 0, 0, time.UTC) }

func TestParse(t *testing.T) {
	z := time.Time{}
	for _, tc := range []struct {
		in       string
		text     string // the span found ("" with from/to zero: nothing found)
		from, to time.Time
	}{
		{"what did I buy yesterday?", "yesterday", d(2023, 3, 20), d(2023, 3, 21)},
		{"what did I do today", "today", d(2023, 3, 21), d(2023, 3, 22)},
		{"the day before yesterday", "the day before yesterday", d(2023, 3, 19), d(2023, 3, 20)},
		{"yesterday morning", "yesterday morning", d(2023, 3, 20).Add(5 * time.Hour), d(2023, 3, 20).Add(12 * time.Hour)},
		{"what did we talk about this morning", "this morning", d(2023, 3, 21).Add(5 * time.Hour), d(2023, 3, 21).Add(12 * time.Hour)},
		{"where did I eat last night", "last night", d(2023, 3, 20).Add(18 * time.Hour), d(2023, 3, 21).Add(6 * time.Hour)},
		{"what did I buy last weekend?", "last weekend", d(2023, 3, 18), d(2023, 3, 20)},
		{"which bike did I fix the past weekend?", "the past weekend", d(2023, 3, 18), d(2023, 3, 20)},
		{"this past weekend", "this past weekend", d(2023, 3, 18), d(2023, 3, 20)},
		{"this weekend", "this weekend", d(2023, 3, 25), d(2023, 3, 27)},
		{"next weekend", "next weekend", d(2023, 4, 1), d(2023, 4, 3)},
		{"last week", "last week", d(2023, 3, 13), d(2023, 3, 20)},
		{"this week", "this week", d(2023, 3, 20), d(2023, 3, 27)},
		{"next week", "next week", d(2023, 3, 27), d(2023, 4, 3)},
		{"in the past week", "in the past week", d(2023, 3, 14), ref},
		{"last month", "last month", d(2023, 2, 1), d(2023, 3, 1)},
		{"during the past month", "during the past month", d(2023, 2, 21), ref},
		{"next month", "next month", d(2023, 4, 1), d(2023, 5, 1)},
		{"last year", "last year", d(2022, 1, 1), d(2023, 1, 1)},
		{"this year", "this year", d(2023, 1, 1), d(2024, 1, 1)},
		{"in the last 3 days", "in the last 3 days", d(2023, 3, 18), ref},
		{"over the past few weeks", "over the past few weeks", d(2023, 2, 14), ref},
		{"5 days ago", "5 days ago", d(2023, 3, 16), d(2023, 3, 17)},
		{"what did I buy 10 days ago?", "10 days ago", d(2023, 3, 11), d(2023, 3, 12)},
		{"two weeks ago", "two weeks ago", d(2023, 3, 4), d(2023, 3, 11)},
		{"a week ago", "a week ago", d(2023, 3, 11), d(2023, 3, 18)},
		{"a few days ago", "a few days ago", d(2023, 3, 16), d(2023, 3, 20)},
		{"a couple of months ago", "a couple of months ago", d(2022, 12, 1), d(2023, 3, 1)},
		{"3 months ago", "3 months ago", d(2022, 12, 1), d(2023, 1, 1)},
		{"two years ago", "two years ago", d(2021, 1, 1), d(2022, 1, 1)},
		{"in May", "in May", d(2022, 5, 1), d(2022, 6, 1)},
		{"in March", "in March", d(2023, 3, 1), d(2023, 4, 1)},
		{"When did Melanie go camping in June?", "in June", d(2022, 6, 1), d(2022, 7, 1)},
		{"May 2023", "May 2023", d(2023, 5, 1), d(2023, 6, 1)},
		{"in May, 2023", "in May, 2023", d(2023, 5, 1), d(2023, 6, 1)},
		{"on 8 May 2023", "on 8 May 2023", d(2023, 5, 8), d(2023, 5, 9)},
		{"on 8 May, 2023", "on 8 May, 2023", d(2023, 5, 8), d(2023, 5, 9)},
		{"the 8th of May", "the 8th of May", d(2022, 5, 8), d(2022, 5, 9)},
		{"May 8th, 2023", "May 8th, 2023", d(2023, 5, 8), d(2023, 5, 9)},
		{"on March 15th", "on March 15th", d(2023, 3, 15), d(2023, 3, 16)},
		{"the March 15th issue", "March 15th", d(2023, 3, 15), d(2023, 3, 16)},
		{"2023-05-08", "2023-05-08", d(2023, 5, 8), d(2023, 5, 9)},
		{"on 2023/05/08", "on 2023/05/08", d(2023, 5, 8), d(2023, 5, 9)},
		{"5/8/2023", "5/8/2023", d(2023, 5, 8), d(2023, 5, 9)},
		{"in 2023-05", "in 2023-05", d(2023, 5, 1), d(2023, 6, 1)},
		{"in 2022", "in 2022", d(2022, 1, 1), d(2023, 1, 1)},
		{"since 2016", "since 2016", d(2016, 1, 1), ref},
		{"before June 2023", "before June 2023", z, d(2023, 6, 1)},
		{"after 8 May 2023", "after 8 May 2023", d(2023, 5, 9), z},
		{"between March and May 2023", "between March and May 2023", d(2023, 3, 1), d(2023, 6, 1)},
		{"from 1 May 2023 to 3 May 2023", "from 1 May 2023 to 3 May 2023", d(2023, 5, 1), d(2023, 5, 4)},
		{"last Saturday", "last Saturday", d(2023, 3, 18), d(2023, 3, 19)},
		{"last Tuesday", "last Tuesday", d(2023, 3, 14), d(2023, 3, 15)},
		{"on Sunday", "on Sunday", d(2023, 3, 19), d(2023, 3, 20)},
		{"next Friday", "next Friday", d(2023, 3, 24), d(2023, 3, 25)},
		{"recently", "recently", d(2023, 2, 19), ref},
		{"the other day", "the other day", d(2023, 3, 14), d(2023, 3, 21)},
		{"during the summer", "during the summer", d(2022, 6, 1), d(2022, 9, 1)},
		{"last summer", "last summer", d(2022, 6, 1), d(2022, 9, 1)},
		{"summer 2021", "summer 2021", d(2021, 6, 1), d(2021, 9, 1)},
		{"the winter", "the winter", d(2022, 12, 1), d(2023, 3, 1)},
		{"in early May", "in early May", d(2022, 5, 1), d(2022, 5, 11)},
		{"mid-May 2023", "mid-May 2023", d(2023, 5, 11), d(2023, 5, 21)},
		{"the end of 2022", "the end of 2022", d(2022, 9, 1), d(2023, 1, 1)},
		{"at Christmas", "at Christmas", d(2022, 12, 25), d(2022, 12, 26)},
		{"on New Year's Eve", "on New Year's Eve", d(2022, 12, 31), d(2023, 1, 1)},
		{"Easter 2024", "Easter 2024", d(2024, 3, 31), d(2024, 4, 1)},
		{"Thanksgiving 2023", "Thanksgiving 2023", d(2023, 11, 23), d(2023, 11, 24)},
		// Not dates.
		{"May I ask you something?", "", z, z},
		{"they march on", "", z, z},
		{"what time do I wake up on Tuesdays?", "", z, z},
		{"I have 2023 photos", "", z, z},
		{"how many days ago did I buy a smoker?", "", z, z},
		{"a few people came", "", z, z},
		{"last but not least", "", z, z},
		{"before the move", "", z, z},
		{"between the Sunday mass and the Ash Wednesday service", "", z, z},
	} {
		got := Parse(tc.in, ref)
		if tc.text == "" {
			if len(got) != 0 {
				t.Errorf("Parse(%q) = %+v, want nothing", tc.in, got)
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("Parse(%q) found %d expressions %+v, want 1", tc.in, len(got), got)
			continue
		}
		e := got[0]
		if e.Text != tc.text || tc.in[e.Start:e.End] != e.Text {
			t.Errorf("Parse(%q) text %q [%d:%d], want %q", tc.in, e.Text, e.Start, e.End, tc.text)
		}
		if !e.From.Equal(tc.from) || !e.To.Equal(tc.to) {
			t.Errorf("Parse(%q) = [%v, %v), want [%v, %v)", tc.in, e.From, e.To, tc.from, tc.to)
		}
	}
}

func TestParseLocation(t *testing.T) {
	// Day boundaries follow the reference's location.
	tz := time.FixedZone("UTC+9", 9*3600)
	r := time.Date(2023, 3, 21, 1, 0, 0, 0, tz) // 2023-03-20 16:00 UTC
	got := Parse("yesterday", r)
	if len(got) != 1 || !got[0].From.Equal(time.Date(2023, 3, 20, 0, 0, 0, 0, tz)) {
		t.Fatalf("yesterday in UTC+9 = %+v", got)
	}
}

func TestParseSeveral(t *testing.T) {
	s := "what did I buy last weekend and on 8 May 2023?"
	got := Parse(s, ref)
	if len(got) != 2 || got[0].Text != "last weekend" || got[1].Text != "on 8 May 2023" {
		t.Fatalf("Parse(%q) = %+v", s, got)
	}
}

func TestAsk(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ask  Ask
		span string
	}{
		{"When did Caroline go to the LGBTQ support group?", AskWhen, "When"},
		{"What date did I move?", AskWhen, "What date"},
		{"what year did Jon start dancing", AskWhen, "what year"},
		{"What day of the week is the market?", AskWhen, "What day of the week"},
		{"How long ago was Caroline's 18th birthday?", AskHowLong, "How long ago"},
		{"How many days ago did I watch the Super Bowl?", AskHowLong, "How many days ago"},
		{"How many weeks had passed since the trip?", AskHowLong, "How many weeks"},
		{"How long has Caroline had her friends?", AskHowLong, "How long"},
		{"Which project did I start first, the Ferrari or the Zero?", AskOrder, ""},
		{"What is the order of the three events?", AskOrder, ""},
		{"What did I buy last weekend?", AskNone, ""},
		{"How many books did I read?", AskNone, ""},
		{"what does alice like", AskNone, ""},
		// "when" joining two clauses does not ask for a time.
		{"Who supports Caroline when she has a negative experience?", AskNone, ""},
		{"Auditory entrainment is strengthened when people see congruent visual information.", AskNone, ""},
		{"The PRDM1 gene, when combined with the PRDM14 gene, plays a role.", AskNone, ""},
		{"So, when did I move?", AskWhen, "when"},
		{"Do you remember when I bought the bike?", AskWhen, "when"},
		{"Can you remind me when the market opens?", AskWhen, "when"},
		{"Who called me when I was ill?", AskNone, ""},
	} {
		q := ParseQuestion(tc.in, ref)
		if q.Ask != tc.ask || tc.in[q.AskStart:q.AskEnd] != tc.span {
			t.Errorf("ParseQuestion(%q) asks %q %q, want %q %q", tc.in, q.Ask, tc.in[q.AskStart:q.AskEnd], tc.ask, tc.span)
		}
	}
}

func TestStrip(t *testing.T) {
	for _, tc := range []struct{ in, want, wantAsk string }{
		{"What did I buy last weekend?", "What did I buy ?", "What did I buy ?"},
		{"How many days ago did I buy a smoker?", "How many days ago did I buy a smoker?", "did I buy a smoker?"},
		{"When did Melanie go camping in June?", "When did Melanie go camping ?", "did Melanie go camping ?"},
		{"what does alice like", "what does alice like", "what does alice like"},
	} {
		q := ParseQuestion(tc.in, ref)
		if got := q.Strip(tc.in, false); got != tc.want {
			t.Errorf("Strip(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := q.Strip(tc.in, true); got != tc.wantAsk {
			t.Errorf("Strip(%q, ask words) = %q, want %q", tc.in, got, tc.wantAsk)
		}
	}
}

func TestEaster(t *testing.T) {
	for y, want := range map[int]time.Time{2023: d(2023, 4, 9), 2024: d(2024, 3, 31), 2025: d(2025, 4, 20), 2000: d(2000, 4, 23)} {
		m, day := easter(y)
		if got := d(y, m, day); !got.Equal(want) {
			t.Errorf("easter(%d) = %v, want %v", y, got, want)
		}
	}
}

// FuzzParse checks that Parse never panics, that every span is the text
// it reports, in order and without overlap, and that intervals are not
// empty.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"last weekend", "on 8 May 2023", "2023-05-08", "between March and May 2023",
		"5/8/2023", "the day before yesterday", "a couple of months ago", "2023-13-45", "Feb 30", "29 February",
		"mid-", "the end of", "from 3 May to", "’s", "in 2023-0", "since", "9999999999 days ago", "last"} {
		f.Add(s, int64(1679435000))
	}
	f.Fuzz(func(t *testing.T, s string, sec int64) {
		r := time.Unix(sec%(1<<36), 0).UTC()
		q := ParseQuestion(s, r)
		last := 0
		for _, e := range q.Exprs {
			if e.Start < last || e.End > len(s) || e.Start >= e.End || s[e.Start:e.End] != e.Text {
				t.Fatalf("bad span %+v in %q", e, s)
			}
			last = e.End
			if e.Bounded() && !e.To.After(e.From) {
				t.Fatalf("empty interval %+v in %q", e, s)
			}
		}
		if q.AskEnd < q.AskStart || q.AskEnd > len(s) {
			t.Fatalf("bad ask span %d:%d in %q", q.AskStart, q.AskEnd, s)
		}
		out := q.Strip(s, true)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("Strip(%q) = %q: not UTF-8", s, out)
		}
		_ = strings.TrimSpace(out)
	})
}

func BenchmarkParse(b *testing.B) {
	s := "Caroline: I went to the LGBTQ support group yesterday and it was so powerful, see you next week"
	for b.Loop() {
		Parse(s, ref)
	}
}
