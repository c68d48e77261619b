package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench"
)

// This file holds the human-readable output: concise, aligned, one memory
// per line in lists. Everything here has a --json twin that carries more.

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// snippet flattens s to one line of at most n runes.
func snippet(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// quoteQuery shows a query in the quotes a shell would need.
func quoteQuery(q string) string {
	if strings.Contains(q, `"`) && !strings.Contains(q, "'") {
		return "'" + q + "'"
	}
	return fmt.Sprintf("%q", q)
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func printSearch(w io.Writer, res *core.SearchResult, ns string) {
	fmt.Fprintf(w, "%s search %s", res.Mode, quoteQuery(res.Query))
	if res.Keyword != "" && res.Keyword != res.Query {
		fmt.Fprintf(w, " → keyword query %s", res.Keyword)
	}
	fmt.Fprintln(w)
	if len(res.Hits) == 0 {
		scope := "namespace default"
		if ns != core.DefaultNamespace {
			scope = "namespaces " + ns + " and default"
		}
		fmt.Fprintf(w, "no memories match (searched %s)\n", scope)
		return
	}
	printQueryTime(w, res.Time)
	showNS := ns != core.DefaultNamespace
	// A question about time shows when each memory happened.
	showWhen := res.Time != nil
	tw := table(w)
	head := "#\tID\tSCORE\tTYPE\t"
	if showNS {
		head += "NAMESPACE\t"
	}
	if showWhen {
		head += "WHEN\t"
	}
	fmt.Fprintln(tw, head+"CONTENT")
	for i, h := range res.Hits {
		m := h.Memory
		line := fmt.Sprintf("%d\t%d\t%.4f\t%s\t", i+1, m.ID, h.Score, m.Type)
		if showNS {
			line += m.Namespace + "\t"
		}
		if showWhen {
			line += eventDay(core.EventTime(m)) + "\t"
		}
		content := snippet(m.Content, 72)
		for _, mn := range h.Mentions {
			content += fmt.Sprintf(" [%s = %s]", mn.Text, dayRange(mn.From, mn.To))
		}
		fmt.Fprintln(tw, line+content)
	}
	tw.Flush()
}

// printQueryTime says how the query's time words were read.
func printQueryTime(w io.Writer, qt *core.QueryTime) {
	if qt == nil || len(qt.Expressions) == 0 {
		return
	}
	var parts []string
	for _, e := range qt.Expressions {
		parts = append(parts, fmt.Sprintf("%q = %s", e.Text, dayRange(e.From, e.To)))
	}
	fmt.Fprintf(w, "time: %s (asked %s)\n", strings.Join(parts, ", "), qt.ReferenceTime.Format(time.RFC3339))
}

// eventDay renders an event time as a date (with the time of day when it has one).
func eventDay(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	t = t.UTC()
	if t.Hour() == 0 && t.Minute() == 0 {
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04")
}

// dayRange renders the interval [from, to) by its first and last day.
func dayRange(from, to time.Time) string {
	switch {
	case from.IsZero():
		return "before " + eventDay(to)
	case to.IsZero():
		return "from " + eventDay(from)
	}
	last := to.Add(-time.Nanosecond)
	if last.Sub(from) < 24*time.Hour && last.Day() == from.Day() {
		return eventDay(from)
	}
	return eventDay(from) + " to " + last.UTC().Format("2006-01-02")
}

func printMemory(w io.Writer, m *core.Memory) {
	tw := table(w)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	row("id", "%d", m.ID)
	row("version", "%d", m.Version)
	row("namespace", "%s", m.Namespace)
	row("type", "%s (%s pool)", m.Type, m.Pool)
	row("significance", "%d", m.Significance)
	if len(m.Entities) > 0 {
		row("entities", "%s", strings.Join(m.Entities, ", "))
	}
	if m.EmotionalContext != "" {
		row("emotion", "%s", m.EmotionalContext)
	}
	if m.Source != "" {
		row("source", "%s", m.Source)
	}
	if m.Session != "" {
		row("session", "%s", m.Session)
	}
	row("trust", "%s (%.2f)", m.Trust.Level, m.Trust.Score)
	row("status", "%s", m.Status)
	if !m.ValidFrom.IsZero() || !m.ValidTo.IsZero() {
		from, to := "always", "now"
		if !m.ValidFrom.IsZero() {
			from = m.ValidFrom.Format(time.RFC3339)
		}
		if !m.ValidTo.IsZero() {
			to = m.ValidTo.Format(time.RFC3339)
		}
		row("valid", "from %s to %s", from, to)
	}
	row("created", "%s", when(m.CreatedAt))
	row("updated", "%s", when(m.UpdatedAt))
	if m.AccessCount > 0 {
		row("accessed", "%s, last %s", plural(int(m.AccessCount), "time", "times"), when(m.LastAccessedAt))
	}
	if m.Embedding.Model != "" {
		row("embedding", "%s (%d dims)", m.Embedding.Model, m.Embedding.Dim())
	}
	if len(m.Metadata) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(m.Metadata)) {
			kv = append(kv, fmt.Sprintf("%s=%v", k, m.Metadata[k]))
		}
		row("metadata", "%s", strings.Join(kv, ", "))
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, m.Content)
}

func printHistory(w io.Writer, hs []*core.Memory) {
	tw := table(w)
	fmt.Fprintln(tw, "VERSION\tWRITTEN\tTYPE\tSIG\tCONTENT")
	for i, m := range hs {
		v := fmt.Sprint(m.Version)
		if i == len(hs)-1 {
			v += " (current)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", v, when(m.UpdatedAt), m.Type, m.Significance, snippet(m.Content, 64))
	}
	tw.Flush()
}

func printEdges(w io.Writer, id int64, es []core.Edge) {
	if len(es) == 0 {
		fmt.Fprintf(w, "memory %d has no edges\n", id)
		return
	}
	sources := slices.ContainsFunc(es, func(e core.Edge) bool { return e.Source != "" })
	tw := table(w)
	fmt.Fprint(tw, "FROM\tTO\tTYPE\tWEIGHT\tCREATED")
	if sources {
		fmt.Fprint(tw, "\tSOURCE")
	}
	fmt.Fprintln(tw)
	for _, e := range es {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%g\t%s", e.From, e.To, e.Type, e.Weight, when(e.CreatedAt))
		if sources {
			fmt.Fprintf(tw, "\t%s", e.Source)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func printCertificate(w io.Writer, c *core.DeletionCertificate) {
	fmt.Fprintf(w, "forgot memory %d: %s and %s removed\n", c.MemoryID,
		plural(c.Versions, "version", "versions"), plural(c.Edges, "edge", "edges"))
	fmt.Fprintln(w, "deletion certificate:")
	tw := table(w)
	fmt.Fprintf(tw, "  memory\t%d\n", c.MemoryID)
	fmt.Fprintf(tw, "  namespace\t%s\n", c.Namespace)
	if c.SourceHash != "" {
		fmt.Fprintf(tw, "  source sha256\t%s\n", c.SourceHash)
	}
	if c.Reason != "" {
		fmt.Fprintf(tw, "  reason\t%s\n", c.Reason)
	}
	fmt.Fprintf(tw, "  time\t%s\n", c.Time.Format(time.RFC3339))
	fmt.Fprintf(tw, "  content sha256\t%s\n", c.ContentHash)
	fmt.Fprintf(tw, "  audit entry\t#%d %s\n", c.AuditSeq, c.AuditHash)
	if sum, ok := erasureSums[c.Erasure]; ok {
		fmt.Fprintf(tw, "  erasure\t%s: %s\n", c.Erasure, sum)
	}
	for _, l := range []struct {
		name  string
		lines []string
	}{{"done", c.ErasureDone}, {"pending", c.ErasurePending}, {"out of reach", c.ErasureOutOfReach}} {
		for _, s := range l.lines {
			fmt.Fprintf(tw, "    %s\t%s\n", l.name, s)
		}
	}
	tw.Flush()
}

// erasureSums explain the values of a certificate's erasure.
var erasureSums = map[string]string{
	core.ErasureComplete:   "no byte of the content is left in the store's files",
	core.ErasurePending:    "some bytes are left, which the store removes by itself (forget --wait waits for it)",
	core.ErasureIncomplete: "some bytes stay in the store until an operator removes them",
	core.ErasureUnknown:    "the backend does not say what its delete leaves",
}

// counts renders a count map as "a 2, b 1", largest first, then by name.
func counts(m map[string]int) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func printStats(w io.Writer, s statsOut) {
	tw := table(w)
	store := s.Store.Backend
	if s.Store.Path != "" {
		store = s.Store.Path + " (" + s.Store.Backend + ")"
	}
	fmt.Fprintf(tw, "store\t%s\n", store)
	scope := core.DefaultNamespace
	if s.Store.Namespace != core.DefaultNamespace {
		scope = s.Store.Namespace + " + " + core.DefaultNamespace
	}
	fmt.Fprintf(tw, "scope\t%s\n", scope)
	fmt.Fprintf(tw, "memories\t%d (%s, %s)\n", s.Memories, plural(s.Versions, "version", "versions"), plural(s.Edges, "edge", "edges"))
	fmt.Fprintf(tw, "namespaces\t%s\n", counts(s.ByNamespace))
	fmt.Fprintf(tw, "pools\t%s\n", counts(s.ByPool))
	fmt.Fprintf(tw, "types\t%s\n", counts(s.ByType))
	fmt.Fprintf(tw, "statuses\t%s\n", counts(s.ByStatus))
	if s.Embedder.ID != "" {
		fmt.Fprintf(tw, "embedder\t%s (%d dims), %s\n", s.Embedder.ID, s.Embedder.Dim, plural(s.Vectors, "vector", "vectors"))
	}
	if f := s.Footprint; s.StoreMemories > 0 {
		var parts []string
		if f.DiskBytes > 0 {
			parts = append(parts, fmt.Sprintf("%s on disk (%s per memory)", bench.FormatBytes(f.DiskBytes), bench.FormatBytes(int64(f.DiskPerMemory))))
		}
		if f.IndexBytes > 0 {
			parts = append(parts, fmt.Sprintf("vector index (%s, %s) %s in memory (%s per memory)", s.VectorIndex, s.VectorPrecision, bench.FormatBytes(f.IndexBytes), bench.FormatBytes(int64(f.IndexPerMemory))))
		}
		if len(parts) > 0 {
			fmt.Fprintf(tw, "footprint\t%s, %s in the store\n", strings.Join(parts, ", "), plural(s.StoreMemories, "memory", "memories"))
		}
	}
	if len(s.Backend) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(s.Backend)) {
			kv = append(kv, fmt.Sprintf("%s %v", k, s.Backend[k]))
		}
		fmt.Fprintf(tw, "backend\t%s\n", strings.Join(kv, ", "))
	}
	tw.Flush()
}

// escapeControls makes text safe to print on a terminal: control characters
// other than newline and tab (ESC, CR, BEL, DEL, C1 controls such as CSI) and
// bidirectional overrides are shown as Go escapes (\x1b, \r, \u202e) instead
// of being obeyed. A memory's text comes from anywhere, and a terminal that
// obeys it can be made to hide, rewrite or fake output. Human output goes
// through it; JSON never does, since it must carry the exact text.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, mustEscape) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !mustEscape(r) {
			b.WriteRune(r)
			continue
		}
		switch {
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func mustEscape(r rune) bool {
	return (unicode.IsControl(r) && r != '\n' && r != '\t') || unicode.Is(unicode.Bidi_Control, r)
}
