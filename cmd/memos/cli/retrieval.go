package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
)

// This file holds the commands of the retrieval pipeline beyond plain
// search: explain, pack, set-validity and supersede, and the clock and
// ranking flags they share with search.

// rankFlags are the clock, pool and MMR flags of search, explain and pack.
type rankFlags struct {
	fs                 *pflag.FlagSet
	validAt, asOf      string
	refTime            string
	temporal           string
	mmr                bool
	mmrLambda          float64
	noExpand           bool
	includeQuarantined bool
}

func addRankFlags(cmd *cobra.Command, expand bool) *rankFlags {
	f := &rankFlags{fs: cmd.Flags()}
	fs := cmd.Flags()
	fs.StringVar(&f.validAt, "valid-at", "", "what was true at this time (RFC3339 or YYYY-MM-DD; default: now, or --as-of)")
	fs.StringVar(&f.temporal, "temporal", "", "the same as --valid-at")
	fs.BoolVar(&f.includeQuarantined, "include-quarantined", false, "also show memories waiting in the review queue")
	fs.StringVar(&f.asOf, "as-of", "", "what the store believed at this time: each memory's version current then")
	fs.StringVar(&f.refTime, "reference-time", "", "when the question was asked (RFC3339 or YYYY-MM-DD; default now): what its time words, such as \"yesterday\", \"last weekend\" or \"in May\", are read against")
	fs.BoolVar(&f.mmr, "mmr", false, "re-rank by maximal marginal relevance so that paraphrases do not take every slot")
	fs.Float64Var(&f.mmrLambda, "mmr-lambda", 0, "MMR's balance of relevance against novelty, 0–1 (default search.mmr_lambda)")
	if expand {
		fs.BoolVar(&f.noExpand, "no-expand", false, "no graph or session expansion")
	}
	return f
}

// searchIn is the input of search and explain: the query and the flags.
func (f *rankFlags) searchIn(query, mode string, limit int, pools, types []string) (*api.SearchIn, error) {
	if limit <= 0 {
		return nil, core.Invalidf("--limit %d must be at least 1", limit)
	}
	fl, err := f.filters(pools, types)
	if err != nil {
		return nil, err
	}
	return &api.SearchIn{Query: query, Mode: mode, Limit: limit, NoExpand: f.noExpand, Filters: fl}, nil
}

// filters are the flags' values as the operations take them.
func (f *rankFlags) filters(pools, types []string) (api.Filters, error) {
	var fl api.Filters
	var err error
	if fl.Pools, err = parsePools(pools); err != nil {
		return fl, err
	}
	if fl.Types, err = parseTypes(types); err != nil {
		return fl, err
	}
	fl.ValidAt = f.validAt
	if f.fs.Changed("temporal") {
		if f.fs.Changed("valid-at") {
			return fl, core.Invalidf("--temporal and --valid-at are the same setting; give one")
		}
		fl.ValidAt = f.temporal
	}
	fl.AsOf, fl.ReferenceTime = f.asOf, f.refTime
	fl.MMR, fl.MMRLambda, fl.IncludeQuarantined = f.mmr, f.mmrLambda, f.includeQuarantined
	return fl, nil
}

// parsePools reads --pools values; "all" (or none) means every pool.
func parsePools(ss []string) ([]core.Pool, error) {
	var out []core.Pool
	for _, s := range ss {
		if s == "all" {
			return nil, nil
		}
		p, err := core.ParsePool(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func parseTypes(ss []string) ([]core.Type, error) {
	var out []core.Type
	for _, s := range ss {
		t, err := core.ParseType(s)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func (a *app) explainCmd() *cobra.Command {
	var (
		mode         string
		limit        int
		pools, types []string
		rank         *rankFlags
	)
	cmd := &cobra.Command{
		Use:   "explain <query>",
		Short: "Show how a search ranked every candidate",
		Long: `Explain runs a search and lists every candidate before the relevance gate:
its keyword rank and score, vector rank and similarity, fused (RRF) score, the
significance, trust, recency and pool factors, the gate's verdict, the
expansion that added it, the MMR decision and its final rank. Candidates left
out before weighting (not valid at the time asked, another pool, ...) come
last with the reason. It records no access statistics.`,
		Example: `  memos explain "what does alice like"
  memos explain "alice's lab" --mmr --json`,
		Args: nargs(1, -1, "a query"),
		RunE: a.readE(func(cmd *cobra.Command, args []string) error {
			in, err := rank.searchIn(strings.Join(args, " "), mode, limit, pools, types)
			if err != nil {
				return err
			}
			return a.runOp(cmd, "explain", in, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printExplain(w, out.(*api.ExplainOut).Explanation) }
			})
		}),
	}
	fs := cmd.Flags()
	fs.StringVarP(&mode, "mode", "m", "hybrid", "hybrid, keyword, vector or fts")
	fs.IntVarP(&limit, "limit", "l", 10, "at most this many results (1–1000)")
	fs.StringSliceVar(&pools, "pools", nil, "only these pools (raw, memory, knowledge, or all; comma-separated or repeated)")
	fs.StringSliceVarP(&types, "types", "t", nil, "only these types (comma-separated or repeated)")
	rank = addRankFlags(cmd, true)
	a.renamed(cmd, rankRenamed)
	return cmd
}

// rankRenamed are the old names of search's, explain's and pack's flags.
var rankRenamed = map[string]string{"pool": "pools", "type": "types", "ref-time": "reference-time"}

func printExplain(w io.Writer, x *core.Explanation) {
	fmt.Fprintf(w, "%s search %s", x.Mode, quoteQuery(x.Query))
	if x.Keyword != "" && x.Keyword != x.Query {
		fmt.Fprintf(w, " → keyword query %s", x.Keyword)
	}
	fmt.Fprintf(w, "\nvalid at %s", x.ValidAt.Format(time.RFC3339))
	if !x.AsOf.IsZero() {
		fmt.Fprintf(w, ", as of %s", x.AsOf.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "; %d candidates, %d returned\n", len(x.Candidates), len(x.Result.Hits))
	printQueryTime(w, x.Result.Time)
	if x.Rerank != "" {
		fmt.Fprintf(w, "reranker: %s\n", x.Rerank)
	}
	if len(x.Feedback) > 0 {
		fmt.Fprintf(w, "query feedback added: %s\n", strings.Join(x.Feedback, " "))
	}
	tw := table(w)
	fmt.Fprintln(tw, "RANK\tID\tKW\tKW SCORE\tVEC\tSIM\tFUSED\tSIG\tTRUST\tREC\tPOOL\tSCORE\tVERDICT\tCONTENT")
	num := func(rank int) string {
		if rank == 0 {
			return "-"
		}
		return fmt.Sprint(rank)
	}
	for _, c := range x.Candidates {
		verdict := c.Gate
		switch {
		case c.Filtered != "":
			verdict = "filtered: " + c.Filtered
		case c.Origin != "":
			verdict = "expansion: " + c.Origin
		}
		if c.FeedbackRank > 0 {
			verdict += fmt.Sprintf("; feedback #%d", c.FeedbackRank)
		}
		if c.RerankScore != nil {
			verdict += fmt.Sprintf("; rerank %.4g", *c.RerankScore)
		}
		if c.TimeFactor != 0 && c.TimeFactor != 1 {
			verdict += fmt.Sprintf("; time ×%.2f (%s)", c.TimeFactor, eventDay(c.EventTime))
		}
		if c.LengthFactor != 0 && c.LengthFactor != 1 {
			verdict += fmt.Sprintf("; long turn ×%.2f", c.LengthFactor)
		}
		if c.Diversity != 0 && c.Diversity != 1 {
			verdict += fmt.Sprintf("; placed at ×%.2f (session diversity)", c.Diversity)
		}
		if c.MMR != "" {
			verdict += "; mmr " + c.MMR
		}
		kw, kwScore := num(c.KeywordRank), "-"
		if c.KeywordRank > 0 {
			kwScore = fmt.Sprintf("%.3g", c.KeywordScore)
		} else if c.HistoryRank > 0 {
			kw = "h" + num(c.HistoryRank)
		}
		sim := "-"
		if c.VectorRank > 0 {
			sim = fmt.Sprintf("%.3f", c.Similarity)
		}
		if c.Filtered != "" {
			fmt.Fprintf(tw, "-\t%d\t%s\t%s\t%s\t%s\t%.4f\t\t\t\t\t\t%s\t\n", c.ID, kw, kwScore, num(c.VectorRank), sim, c.Fused, verdict)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%.4f\t%.2f\t%.2f\t%.2f\t%.2f\t%.4f\t%s\t%s\n", num(c.Rank), c.ID, kw, kwScore,
			num(c.VectorRank), sim, c.Fused, c.Significance, c.Trust, c.Recency, c.PoolFactor, c.Score, verdict, snippet(c.Content, 48))
	}
	tw.Flush()
	for _, c := range x.Candidates {
		if c.Status == core.StatusQuarantined {
			fmt.Fprintf(w, "memory %d is quarantined (waiting for review)\n", c.ID)
		}
		if len(c.Contradicts) > 0 {
			fmt.Fprintf(w, "memory %d contradicts (or is contradicted by) %s\n", c.ID, idList(c.Contradicts))
		}
	}
}

func (a *app) packCmd() *cobra.Command {
	var (
		req          api.PackIn
		format       string
		pools, types []string
		rank         *rankFlags
	)
	cmd := &cobra.Command{
		Use:   "pack [query]",
		Short: "Build a token-budgeted context pack for a prompt",
		Long: `Pack selects the memories that matter for a query — with citations (id,
version, source, times, trust), graph neighbours and the lessons that apply —
and fits them to a token budget counted with the cl100k_base BPE tokenizer.
The same store and query give the same pack, byte for byte. --bootstrap packs
the namespace's most significant, most used memories for the start of a
session instead. --format md (default) prints prompt-ready Markdown; --format
json (or --json) the pack with its token accounting.`,
		Example: `  memos pack "what does alice like" --budget 800
  memos pack "deploying the web app" --format json
  memos pack --bootstrap --budget 400 --namespace project:infra`,
		Args: nargs(0, -1, "a query (or --bootstrap)"),
		RunE: a.readE(func(cmd *cobra.Command, args []string) error {
			req.Query = strings.Join(args, " ")
			if format != "md" && format != "json" {
				return core.Invalidf("--format %q: want md or json", format)
			}
			var err error
			if req.Filters, err = rank.filters(pools, types); err != nil {
				return err
			}
			if req.Budget <= 0 {
				return core.Invalidf("--budget %d must be at least 1", req.Budget)
			}
			return a.callOp(cmd, "context-pack", &req, func(_ context.Context, _ *core.Engine, _ *config.Config, out any) error {
				pk := out.(*core.Pack)
				if a.json || format == "json" {
					b, err := pk.JSON()
					if err != nil {
						return err
					}
					_, err = a.stdout.Write(b)
					return err
				}
				_, err = io.WriteString(a.stdout, escapeControls(pk.Markdown()))
				return err
			})
		}),
	}
	fs := cmd.Flags()
	fs.IntVarP(&req.Budget, "budget", "b", 800, "the most tokens (cl100k_base) the pack may take")
	fs.BoolVar(&req.Bootstrap, "bootstrap", false, "pack the namespace's most significant, most used memories (no query)")
	fs.StringVarP(&format, "format", "f", "md", "md or json")
	fs.IntVarP(&req.Limit, "limit", "l", 20, "the most memories considered (1–200)")
	fs.IntVar(&req.Lessons, "lessons", 3, "the most lessons included (-1: none)")
	fs.IntVar(&req.Neighbours, "neighbours", 5, "the most graph neighbours included (-1: none)")
	fs.StringSliceVar(&pools, "pools", nil, "only these pools (raw, memory, knowledge, or all; comma-separated or repeated)")
	fs.StringSliceVarP(&types, "types", "t", nil, "only these types (comma-separated or repeated)")
	rank = addRankFlags(cmd, false)
	a.renamed(cmd, rankRenamed)
	return cmd
}

func (a *app) setValidityCmd() *cobra.Command {
	var (
		in       api.SetValidityIn
		from, to string
	)
	cmd := &cobra.Command{
		Use:   "set-validity <id>",
		Short: "Set when a memory was true (writes a new version)",
		Long: `set-validity sets a memory's event-time interval: --valid-from is when what it
records became true, --valid-to when it stopped being true (either may be
empty: since always, still true). The previous interval stays in its history.`,
		Example: `  memos set-validity 12 --valid-from 2024-01-01 --valid-to 2024-06-30
  memos set-validity 12 --valid-to 2025-03-01T12:00:00Z`,
		Args: nargs(1, 1, "one memory id"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("valid-from") {
				in.ValidFrom = &from
			}
			if cmd.Flags().Changed("valid-to") {
				in.ValidTo = &to
			}
			return a.opOnID(cmd, args[0], &in.ID, "set-validity", &in, func(out any, _ *core.Engine) func(io.Writer) {
				m := out.(*core.Memory)
				return func(w io.Writer) {
					fmt.Fprintf(w, "memory %d is now at version %d, valid %s\n", m.ID, m.Version, validity(m))
				}
			})
		}),
	}
	cmd.Flags().StringVar(&from, "valid-from", "", "when it became true (RFC3339 or YYYY-MM-DD; empty: since always)")
	cmd.Flags().StringVar(&to, "valid-to", "", "when it stopped being true (empty: still true)")
	a.renamed(cmd, map[string]string{"from": "valid-from", "to": "valid-to"})
	return cmd
}

func validity(m *core.Memory) string {
	from, to := "since always", "still true"
	if !m.ValidFrom.IsZero() {
		from = "from " + m.ValidFrom.Format(time.RFC3339)
	}
	if !m.ValidTo.IsZero() {
		to = "until " + m.ValidTo.Format(time.RFC3339)
	}
	return from + ", " + to
}

func (a *app) supersedeCmd() *cobra.Command {
	var attrs *attrFlags
	cmd := &cobra.Command{
		Use:   "supersede <old id> <new content|->",
		Short: "Replace a memory with a new one, keeping the old one's history",
		Long: `supersede stores the new content as a new memory, valid from --valid-from
(default now), ends the old memory's validity there, and links
new —supersedes→ old. Searches valid now find the new memory; searches with an
earlier --valid-at or --as-of still find the old one. Attributes not given
are taken from the old memory, but for --source and --entities: the new
memory has only those it is given, so forget-source of the old one's source
leaves it alone.`,
		Example: `  memos supersede 12 "Alice's home lab runs Proxmox on four nodes"
  memos supersede 12 "Bob moved to Lisbon" --valid-from 2025-02-01`,
		Args: nargs(2, 2, "an old memory id and the new content"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			old, err := parseID(args[0])
			if err != nil {
				return err
			}
			content, err := a.content(args[1])
			if err != nil {
				return err
			}
			at, err := attrs.attrs()
			if err != nil {
				return err
			}
			return a.runOp(cmd, "supersede", &api.SupersedeIn{ID: old, Content: content, Attrs: at}, func(out any, _ *core.Engine) func(io.Writer) {
				m := out.(*core.Memory)
				return func(w io.Writer) {
					fmt.Fprintf(w, "added memory %d, valid %s; it supersedes memory %d\n", m.ID, validity(m), old)
				}
			})
		}),
	}
	attrs = a.addAttrFlags(cmd)
	return cmd
}
