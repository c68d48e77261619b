package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
)

// This file holds memos list and memos trace. Their flags are the fields of
// the list and trace operations (api.ListIn, api.TraceIn), with - for _.

func (a *app) listCmd() *cobra.Command {
	var (
		in                     api.ListIn
		pools, types, statuses []string
		trust                  []string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Browse memories, newest or most significant first, a page at a time",
		Long: `List shows the memories of the namespace (--namespace, or MEMOS_NAMESPACE) and
the shared "default" one, newest first (--sort significance: most significant
first), filtered by the flags. It prints a page of --limit memories and, when
there are more, the --cursor that continues the listing. Every page costs the
same however deep it is. Filters that no index serves (all but the
namespace, status and, newest first, the creation time) are checked on at
most a few thousand memories per page, so a page may hold fewer memories
than --limit, even none, and still have a next one.

Quarantined and archived memories are listed only when --statuses names them
(--statuses all lists every status).`,
		Example: `  memos list
  memos list --types preference,fact --entity Alice --limit 50
  memos list --statuses quarantined,archived --sort significance
  memos list --source-prefix conversation:42 --created-after 2025-01-01 --json`,
		Args: nargs(0, 0, "no arguments (filters are flags)"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			var err error
			if in.Pools, err = parsePools(pools); err != nil {
				return err
			}
			for _, s := range types {
				in.Types = append(in.Types, core.Type(s))
			}
			for _, s := range statuses {
				if s == "all" {
					in.Statuses = core.Statuses
					break
				}
				in.Statuses = append(in.Statuses, core.Status(s))
			}
			for _, s := range trust {
				in.Trust = append(in.Trust, core.TrustLevel(s))
			}
			if cmd.Flags().Changed("limit") && in.Limit <= 0 {
				return core.Invalidf("--limit %d must be at least 1", in.Limit)
			}
			return a.runOp(cmd, "list", &in, func(out any, eng *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printList(w, out.(*core.ListResult), eng.Namespace(), in.NamespaceOnly) }
			})
		}),
	}
	fs := cmd.Flags()
	fs.BoolVar(&in.NamespaceOnly, "namespace-only", false, `list the namespace alone, without the shared "default" one`)
	fs.StringSliceVar(&pools, "pools", nil, "only these pools (raw, memory, knowledge; comma-separated or repeated)")
	fs.StringSliceVar(&types, "types", nil, "only these types (comma-separated or repeated)")
	fs.StringSliceVar(&statuses, "statuses", nil, "only these statuses: active (default), quarantined, archived, or all")
	fs.StringSliceVar(&trust, "trust", nil, "only these trust levels (certain, inferred, imported, contradicted)")
	fs.StringVar(&in.SourcePrefix, "source-prefix", "", "only memories whose source starts with this, e.g. conversation:42")
	fs.StringVar(&in.Entity, "entity", "", "only memories about this entity (case-insensitive)")
	for _, f := range []struct {
		name string
		dst  *string
		what string
	}{
		{"created-after", &in.CreatedAfter, "created (learned) after"}, {"created-before", &in.CreatedBefore, "created before"},
		{"updated-after", &in.UpdatedAfter, "whose current version was written after"}, {"updated-before", &in.UpdatedBefore, "whose current version was written before"},
		{"valid-after", &in.ValidAfter, "still true after"}, {"valid-before", &in.ValidBefore, "already true before"},
	} {
		fs.StringVar(f.dst, f.name, "", "only memories "+f.what+" this time (RFC3339 or YYYY-MM-DD)")
	}
	fs.StringVar(&in.Sort, "sort", "recency", "recency (newest first) or significance (most significant first, then newest)")
	fs.IntVarP(&in.Limit, "limit", "l", core.DefaultListLimit, fmt.Sprintf("at most this many memories in the page (1–%d)", core.MaxListLimit))
	fs.StringVar(&in.Cursor, "cursor", "", "continue the listing: the cursor the previous page printed")
	a.renamed(cmd, map[string]string{"pool": "pools", "type": "types", "status": "statuses"})
	return cmd
}

func printList(w io.Writer, res *core.ListResult, ns string, only bool) {
	if len(res.Memories) == 0 && res.NextCursor == "" {
		scope := "namespaces " + ns + " and default"
		if ns == core.DefaultNamespace || only {
			scope = "namespace " + ns
		}
		fmt.Fprintf(w, "no memories match (listed %s)\n", scope)
		return
	}
	if len(res.Memories) > 0 {
		tw := table(w)
		fmt.Fprintln(tw, "ID\tCREATED\tTYPE\tSIG\tSTATUS\tSOURCE\tCONTENT")
		for _, m := range res.Memories {
			source := m.Source
			if source == "" {
				source = "-"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", m.ID, when(m.CreatedAt), m.Type, m.Significance, m.Status,
				snippet(source, 32), snippet(m.Content, 60))
		}
		tw.Flush()
	} else {
		fmt.Fprintln(w, "no memories match in this stretch of the listing; it goes on")
	}
	if res.NextCursor != "" {
		fmt.Fprintf(w, "more: repeat the command with --cursor %s\n", res.NextCursor)
	}
}

func (a *app) traceCmd() *cobra.Command {
	var in api.TraceIn
	cmd := &cobra.Command{
		Use:   "trace <id>",
		Short: "Show where a memory came from and what came from it",
		Long: `Trace shows a memory's provenance: its source; the memories it was derived
from or replaced, transitively (the turns capture extracted it from, the
duplicates consolidation merged into it, a knowledge page's members, the
memory it superseded); and the memories derived from it. Each is listed
once, at its distance from the memory, with the edge that led to it;
memories of other namespaces are left out.`,
		Example: `  memos trace 42
  memos trace 42 --max-depth 3 --json`,
		Args: nargs(1, 1, "one memory id"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			for _, f := range []struct {
				name string
				v    int
			}{{"max-depth", in.MaxDepth}, {"max-nodes", in.MaxNodes}} {
				if f.v < 1 {
					return core.Invalidf("--%s %d must be at least 1", f.name, f.v)
				}
			}
			return a.opOnID(cmd, args[0], &in.ID, "trace", &in, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printTrace(w, out.(*core.TraceResult)) }
			})
		}),
	}
	cmd.Flags().IntVar(&in.MaxDepth, "max-depth", core.DefaultTraceDepth, fmt.Sprintf("follow at most this many steps each way (1–%d)", core.MaxTraceDepth))
	cmd.Flags().IntVar(&in.MaxNodes, "max-nodes", core.DefaultTraceNodes, fmt.Sprintf("list at most this many memories in all (1–%d)", core.MaxTraceNodes))
	return cmd
}

func printTrace(w io.Writer, res *core.TraceResult) {
	m := res.Memory
	fmt.Fprintf(w, "memory %d, version %d (%s, %s, namespace %s), created %s\n", m.ID, m.Version, m.Type, m.Status, m.Namespace, when(m.CreatedAt))
	source := m.Source
	if source == "" {
		source = "none recorded"
	}
	fmt.Fprintf(w, "source: %s\n", source)
	fmt.Fprintf(w, "  %s\n", snippet(m.Content, 100))
	for _, part := range []struct {
		title string
		nodes []core.TraceNode
	}{{"derived from", res.DerivedFrom}, {"derived", res.Derived}} {
		if len(part.nodes) == 0 {
			fmt.Fprintf(w, "%s: nothing\n", part.title)
			continue
		}
		fmt.Fprintf(w, "%s:\n", part.title)
		tw := table(w)
		fmt.Fprintln(tw, "  DEPTH\tID\tVER\tVIA\tTYPE\tSOURCE\tCONTENT")
		for _, n := range part.nodes {
			via := fmt.Sprintf("%s %d", n.Via, n.Parent)
			if n.EdgeSource != "" {
				via += " (" + snippet(n.EdgeSource, 24) + ")"
			}
			source := n.Source
			if source == "" {
				source = "-"
			}
			fmt.Fprintf(tw, "  %d\t%d\t%d\t%s\t%s\t%s\t%s\n", n.Depth, n.ID, n.Version, via, n.Type, snippet(source, 32), snippet(n.Excerpt, 60))
		}
		tw.Flush()
	}
	if res.Truncated {
		fmt.Fprintln(w, "the trace stopped at its bounds with more to follow: raise --max-depth or --max-nodes")
	}
}
