package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
)

func (a *app) consolidateCmd() *cobra.Command {
	return a.consolidationCmd("consolidate", false,
		"Merge duplicate memories and archive stale ones (history is kept)",
		`Consolidate tidies the namespace: memories that say the same thing
(embedding cosine ≥ consolidate.duplicate_similarity and word overlap ≥
consolidate.duplicate_overlap) are merged into the most trusted one, which
keeps their entities, sources and access counts and is derived_from them; the
others are archived. Memories of low significance not used for
consolidate.stale_after, and superseded memories whose validity ended that
long ago, are archived. Lessons, knowledge pages and memories of significance
7 or more are never touched. Nothing is deleted: archived memories keep their
history and --as-of still sees them.`,
		`  memos consolidate --dry-run
  memos consolidate --json`)
}

func (a *app) dreamCmd() *cobra.Command {
	return a.consolidationCmd("dream", true,
		"Consolidate, then distil clusters of memories into knowledge pages",
		`Dream consolidates (see memos consolidate), then clusters the namespace's
memories (by embedding neighbourhood and shared entities) and writes one
knowledge page per cluster of at least consolidate.page_min_size memories: a
summary by the configured summarizer (summarizer.name: extractive, offline, or
llm) that cites its members, with a derived_from edge to each. A page whose
members changed is refreshed as a new version; an unchanged one is left alone.`,
		`  memos dream --dry-run
  memos dream
  memos search "alice's home lab" --pool knowledge`)
}

func (a *app) consolidationCmd(use string, pages bool, short, long, example string) *cobra.Command {
	in := api.ConsolidateIn{Pages: pages}
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long, Example: example,
		Args: nargs(0, 0, "no arguments"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			a.readOnly = in.DryRun
			return a.runOp(cmd, "consolidate", &in, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printConsolidation(w, out.(*api.ConsolidateOut).ConsolidateReport) }
			})
		}),
	}
	cmd.Flags().BoolVar(&in.DryRun, "dry-run", false, "report what would change; write nothing")
	return cmd
}

func printConsolidation(w io.Writer, rep *core.ConsolidateReport) {
	would := ""
	if rep.DryRun {
		would = "would be "
	}
	for _, m := range rep.Merges {
		fmt.Fprintf(w, "merge: %v %sarchived into %d\n", m.Merged, would, m.Survivor)
	}
	for _, a := range rep.Archived {
		fmt.Fprintf(w, "archive: %d %sarchived (%s)\n", a.ID, would, a.Reason)
	}
	for _, p := range rep.Pages {
		id := fmt.Sprint(p.ID)
		if p.ID == 0 {
			id = "(new)"
		}
		fmt.Fprintf(w, "page %s: %s%s, stands for %s\n", id, would, p.Action, plural(len(p.Members), "memory", "memories"))
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "%s merged, %s archived as stale, %s; active memories %d → %d (%v)\n",
		plural(len(rep.Merges), "group", "groups"), plural(len(rep.Archived), "memory", "memories"),
		plural(len(rep.Pages), "page", "pages"), rep.Before, rep.After, rep.Took.Round(time.Millisecond))
}
