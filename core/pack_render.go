package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

// TokenizerName is the BPE encoding packs count tokens with: OpenAI's
// cl100k_base, whose vocabulary is compiled into the binary (no download).
const TokenizerName = "cl100k_base"

var cl100k = sync.OnceValues(func() (tokenizer.Codec, error) { return tokenizer.Get(tokenizer.Cl100kBase) })

// tokenCache remembers counts of recently counted texts; packs count the
// same memories again and again.
var tokenCache struct {
	sync.Mutex
	m map[string]int
}

// CountTokens returns the number of cl100k_base tokens in s.
func CountTokens(s string) (int, error) {
	tokenCache.Lock()
	n, ok := tokenCache.m[s]
	tokenCache.Unlock()
	if ok {
		return n, nil
	}
	enc, err := cl100k()
	if err != nil {
		return 0, fmt.Errorf("load the %s tokenizer: %w", TokenizerName, err)
	}
	if n, err = enc.Count(s); err != nil {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	if len(s) <= 4096 {
		tokenCache.Lock()
		if tokenCache.m == nil || len(tokenCache.m) >= 50_000 {
			tokenCache.m = make(map[string]int)
		}
		tokenCache.m[s] = n
		tokenCache.Unlock()
	}
	return n, nil
}

const (
	memoriesTitle   = "Memories"
	lessonsTitle    = "Lessons"
	neighboursTitle = "Related memories"
)

func (pk *Pack) header() string {
	if pk.Bootstrap {
		return fmt.Sprintf("# Context from memory\nSession start, namespace %s.\n", pk.Namespace)
	}
	h := fmt.Sprintf("# Context from memory\nQuery: %s\n", oneLine(pk.Query))
	if t := pk.Time; t != nil && len(t.Expressions) > 0 {
		var parts []string
		for _, e := range t.Expressions {
			parts = append(parts, fmt.Sprintf("%q = %s", oneLine(e.Text), span(e.From, e.To)))
		}
		// The day only: a pack without a reference time reads "last week"
		// against now, and stays the same bytes for the whole day.
		h += fmt.Sprintf("Time: %s (asked %s)\n", strings.Join(parts, ", "), t.ReferenceTime.UTC().Format("2006-01-02"))
	}
	return h
}

// span renders the interval [from, to) by its first and last day.
func span(from, to time.Time) string {
	last := func() string { return day(to.Add(-time.Nanosecond).Truncate(24 * time.Hour)) }
	switch {
	case from.IsZero():
		return "before " + day(to)
	case to.IsZero():
		return "from " + day(from)
	case to.Sub(from) <= 24*time.Hour && from.Equal(from.Truncate(24*time.Hour)):
		return day(from)
	case to.Sub(from) < 24*time.Hour:
		return day(from) + " to " + day(to)
	}
	return day(from) + " to " + last()
}

func sectionHeader(title string) string { return "\n## " + title + "\n" }

// Markdown renders the pack as prompt-ready Markdown: a header, then the
// memories, lessons and related memories as bullet lists, each line citing
// the memory as [#id vN] with its type, source, validity, ingest date and
// trust. Its cl100k_base token count is pk.Tokens.
func (pk *Pack) Markdown() string {
	var b strings.Builder
	b.WriteString(pk.header())
	for _, s := range []struct {
		title string
		items []PackItem
	}{{memoriesTitle, pk.Memories}, {lessonsTitle, pk.Lessons}, {neighboursTitle, pk.Neighbours}} {
		if len(s.items) == 0 {
			continue
		}
		b.WriteString(sectionHeader(s.title))
		for i := range s.items {
			b.WriteString(s.items[i].markdown())
		}
	}
	return b.String()
}

// JSON renders the pack as indented JSON with a final newline.
func (pk *Pack) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(pk, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// markdown is the item's bullet line.
func (it *PackItem) markdown() string {
	var meta []string
	meta = append(meta, string(it.Type))
	if it.Source != "" {
		meta = append(meta, "source "+oneLine(it.Source))
	}
	if it.Via != "" {
		meta = append(meta, "via: "+it.Via)
	}
	switch {
	case !it.ValidFrom.IsZero() && !it.ValidTo.IsZero():
		meta = append(meta, "valid "+day(it.ValidFrom)+" to "+day(it.ValidTo))
	case !it.ValidFrom.IsZero():
		meta = append(meta, "valid since "+day(it.ValidFrom))
	case !it.ValidTo.IsZero():
		meta = append(meta, "valid until "+day(it.ValidTo))
	}
	for _, m := range it.Mentions {
		meta = append(meta, fmt.Sprintf("%q = %s", oneLine(m.Text), span(m.From, m.To)))
	}
	meta = append(meta, "recorded "+day(it.UpdatedAt))
	meta = append(meta, fmt.Sprintf("trust %s %.2f", it.Trust.Level, it.Trust.Score))
	content := strings.ReplaceAll(strings.TrimSpace(it.Content), "\n", "\n  ")
	return fmt.Sprintf("- [#%d v%d] %s (%s)\n", it.ID, it.Version, content, strings.Join(meta, "; "))
}

// day renders t as a date, with the time of day when it has one.
func day(t time.Time) string {
	t = t.UTC()
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04Z")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
