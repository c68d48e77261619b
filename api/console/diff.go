package console

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/memos-go/memos/core"
)

// segment is a run of a word diff: kept ("="), removed ("-") or added ("+").
type segment struct {
	Op   string
	Text string
}

// maxDiffCells bounds the longest-common-subsequence table of a word diff;
// beyond it the diff shows the old text removed and the new one added.
const maxDiffCells = 4 << 20

// diffWords compares a and b word by word (whitespace kept with the word
// before it), by longest common subsequence.
func diffWords(a, b string) []segment {
	x, y := words(a), words(b)
	if a == b {
		return []segment{{"=", a}}
	}
	if (len(x)+1)*(len(y)+1) > maxDiffCells {
		return []segment{{"-", a}, {"+", b}}
	}
	// l[i][j] is the LCS length of x[i:] and y[j:].
	w := len(y) + 1
	l := make([]int32, (len(x)+1)*w)
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				l[i*w+j] = l[(i+1)*w+j+1] + 1
			} else {
				l[i*w+j] = max(l[(i+1)*w+j], l[i*w+j+1])
			}
		}
	}
	var out []segment
	add := func(op, s string) {
		if n := len(out); n > 0 && out[n-1].Op == op {
			out[n-1].Text += s
			return
		}
		out = append(out, segment{op, s})
	}
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			add("=", x[i])
			i, j = i+1, j+1
		case l[(i+1)*w+j] >= l[i*w+j+1]:
			add("-", x[i])
			i++
		default:
			add("+", y[j])
			j++
		}
	}
	for ; i < len(x); i++ {
		add("-", x[i])
	}
	for ; j < len(y); j++ {
		add("+", y[j])
	}
	return out
}

// words splits s into words, each with the whitespace after it.
func words(s string) []string {
	var out []string
	start, inSpace := 0, false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if inSpace && !sp {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// change is one attribute that differs between two versions.
type change struct {
	Field, Old, New string
}

// changes lists the attributes (not the content) that differ from a to b.
func changes(a, b *core.Memory) []change {
	f := func(m *core.Memory) [][2]string {
		return [][2]string{
			{"type", string(m.Type)}, {"pool", string(m.Pool)}, {"status", string(m.Status)},
			{"significance", fmt.Sprint(m.Significance)}, {"trust", fmt.Sprintf("%s %.2f", m.Trust.Level, m.Trust.Score)},
			{"entities", strings.Join(m.Entities, ", ")}, {"source", m.Source}, {"session", m.Session},
			{"emotional context", m.EmotionalContext}, {"valid from", when(m.ValidFrom)}, {"valid to", when(m.ValidTo)},
			{"namespace", m.Namespace},
		}
	}
	fa, fb := f(a), f(b)
	var out []change
	for i := range fa {
		if fa[i][1] != fb[i][1] {
			out = append(out, change{fa[i][0], fa[i][1], fb[i][1]})
		}
	}
	return out
}

// when formats a time for a page ("" for the zero time).
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// funcs are the templates' helpers; none returns unescaped HTML.
var funcs = template.FuncMap{
	"when": when,
	"num": func(f float64) string {
		if f == 0 {
			return "–"
		}
		return fmt.Sprintf("%.3f", f)
	},
	// unit clamps a score into [0,1] for a <meter>.
	"unit":    func(f float64) float64 { return math.Max(0, math.Min(1, f)) },
	"join":    func(ss []string) string { return strings.Join(ss, ", ") },
	"memlink": memLink,
	"has": func(list any, v string) bool {
		switch l := list.(type) {
		case []core.Pool:
			return slices.Contains(l, core.Pool(v))
		case []core.Type:
			return slices.Contains(l, core.Type(v))
		case []core.Status:
			return slices.Contains(l, core.Status(v))
		case []core.TrustLevel:
			return slices.Contains(l, core.TrustLevel(v))
		}
		return false
	},
	"str": func(v any) string { return fmt.Sprint(v) },
	"excerpt": func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		return string(r[:n]) + "…"
	},
	"withns": func(items []core.PackItem, ns string) any {
		return struct {
			Items []core.PackItem
			NS    string
		}{items, ns}
	},
	"deref": func(f *float64) float64 {
		if f == nil {
			return 0
		}
		return *f
	},
}
