package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/bench"
)

// nargs returns a cobra argument check whose errors are usage errors.
func nargs(min, max int, usage string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) < min || (max >= 0 && len(a) > max) {
			return core.Invalidf("%s takes %s, got %d argument(s); quote text that contains spaces", cmd.CommandPath(), usage, len(a))
		}
		return nil
	}
}

func (a *app) addCmd() *cobra.Command {
	var (
		attrs                    *attrFlags
		quarantine               bool
		contradicts, derivedFrom []int64
	)
	cmd := &cobra.Command{
		Use:   "add <content|->",
		Short: "Remember something (\"-\" reads the content from standard input)",
		Example: `  memos add "Alice prefers open-source tools" --type preference --significance 6 --entities Alice
  memos add "Alice's home lab runs Proxmox on three nodes" --type fact --source conversation:7#turn-3
  cat notes.md | memos add - --type document --source file:notes.md`,
		Args: nargs(1, 1, "one content argument"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			content, err := a.content(args[0])
			if err != nil {
				return err
			}
			at, err := attrs.attrs()
			if err != nil {
				return err
			}
			in := &api.RememberIn{Content: content, Attrs: at,
				Provenance: api.Provenance{Quarantine: quarantine, Contradicts: contradicts, DerivedFrom: derivedFrom}}
			return a.runOp(cmd, "remember", in, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printAdded(w, out.(*core.Memory)) }
			})
		}),
	}
	attrs = a.addAttrFlags(cmd)
	fs := cmd.Flags()
	fs.BoolVar(&quarantine, "quarantine", false, "hold the memory for review (invisible to recall until released)")
	fs.Int64SliceVar(&contradicts, "contradicts", nil, "ids of memories this one contradicts (a contradicts edge each; the governance policy decides who waits)")
	fs.Int64SliceVar(&derivedFrom, "derived-from", nil, "ids of memories this one was derived from (a derived_from edge each; forget-source follows them)")
	return cmd
}

// printAdded prints what add stored.
func printAdded(w io.Writer, m *core.Memory) {
	fmt.Fprintf(w, "added memory %d (%s, %s pool, significance %d, namespace %s)\n",
		m.ID, m.Type, m.Pool, m.Significance, m.Namespace)
	if m.Status == core.StatusQuarantined {
		fmt.Fprintf(w, "it waits in the review queue: memos quarantine list; memos quarantine release %d\n", m.ID)
	}
}

func (a *app) searchCmd() *cobra.Command {
	var (
		mode         string
		limit        int
		pools, types []string
		rank         *rankFlags
	)
	cmd := &cobra.Command{
		Use:   "search <query>",
		Short: "Find the memories that match a query",
		Long: `Search reads the query as natural language by default (--mode hybrid): stop
words are dropped, the other words OR-ed, and keyword and vector candidates
fused and ranked by relevance, significance, trust and recency. --mode keyword
and --mode vector use one retriever. --mode fts takes FTS5 query syntax:
AND, OR, NOT, "phrases", prefix*, (parentheses) and NEAR(a b, N).

A search sees the namespace given by --namespace (or MEMOS_NAMESPACE) plus
the shared "default" namespace, nothing else.`,
		Example: `  memos search "what does alice like"
  memos search 'preference AND "open-source"' --mode fts
  memos search "config*" --namespace project:infra --json`,
		Args: nargs(1, -1, "a query"),
		RunE: a.readE(func(cmd *cobra.Command, args []string) error {
			in, err := rank.searchIn(strings.Join(args, " "), mode, limit, pools, types)
			if err != nil {
				return err
			}
			return a.runOp(cmd, "search", in, func(out any, eng *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printSearch(w, out.(*core.SearchResult), eng.Namespace()) }
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

func (a *app) getCmd() *cobra.Command {
	var in api.IDIn
	cmd := &cobra.Command{
		Use:   "get <id>",
		Short: "Show a memory (its current version, or --version N)",
		Args:  nargs(1, 1, "one memory id"),
		RunE: a.readE(func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("version") && in.Version <= 0 {
				return core.Invalidf("--version %d is not a positive integer", in.Version)
			}
			return a.opOnID(cmd, args[0], &in.ID, "get", &in, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printMemory(w, out.(*core.Memory)) }
			})
		}),
	}
	cmd.Flags().IntVar(&in.Version, "version", 0, "show this version instead of the current one")
	return cmd
}

func (a *app) updateCmd() *cobra.Command {
	var attrs *attrFlags
	cmd := &cobra.Command{
		Use:   "update <id> [content|-]",
		Short: "Write a new version of a memory (the old one stays in its history)",
		Long: `Update writes a new version with the attributes given changed. A text flag
given as "" clears the attribute (--valid-to "": still true; --source "": no
source); --metadata key=value sets one key and --metadata key= removes it, the
other keys stay.`,
		Example: `  memos update 2 "Alice's home lab runs Proxmox on four nodes"
  memos update 2 --significance 7 --metadata reviewed=yes --valid-to ""`,
		Args: nargs(1, 2, "a memory id and optionally new content"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			in := &api.UpdateIn{}
			if len(args) == 2 {
				c, err := a.content(args[1])
				if err != nil {
					return err
				}
				in.Content = &c
			}
			if err := attrs.update(in); err != nil {
				return err
			}
			return a.opOnID(cmd, args[0], &in.ID, "update", in, func(out any, _ *core.Engine) func(io.Writer) {
				m := out.(*core.Memory)
				return func(w io.Writer) { fmt.Fprintf(w, "memory %d is at version %d\n", m.ID, m.Version) }
			})
		}),
	}
	attrs = a.addAttrFlags(cmd)
	return cmd
}

func (a *app) historyCmd() *cobra.Command {
	var in api.HistoryIn
	return &cobra.Command{
		Use:   "history <id>",
		Short: "List every version of a memory, oldest first",
		Args:  nargs(1, 1, "one memory id"),
		RunE: a.readE(func(cmd *cobra.Command, args []string) error {
			return a.opOnID(cmd, args[0], &in.ID, "history", &in, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printHistory(w, out.(*api.VersionsOut).Versions) }
			})
		}),
	}
}

func (a *app) revertCmd() *cobra.Command {
	var in api.RevertIn
	return &cobra.Command{
		Use:   "revert <id> <version>",
		Short: "Write a new version of a memory equal to an old one",
		Args:  nargs(2, 2, "a memory id and a version"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			var err error
			if in.Version, err = parseVersion(args[1]); err != nil {
				return err
			}
			return a.opOnID(cmd, args[0], &in.ID, "revert", &in, func(out any, _ *core.Engine) func(io.Writer) {
				m := out.(*core.Memory)
				return func(w io.Writer) {
					fmt.Fprintf(w, "memory %d reverted to version %d: now at version %d\n", m.ID, in.Version, m.Version)
				}
			})
		}),
	}
}

func (a *app) linkCmd() *cobra.Command {
	var (
		in     api.LinkIn
		weight float64
	)
	cmd := &cobra.Command{
		Use:   "link <from> <to>",
		Short: "Add a typed edge between two memories",
		Long: `Link adds (or replaces) a directed, typed, weighted edge. Types:
relates_to, supports, contradicts, derived_from, temporal_precedes, supersedes,
and any type the configuration declares with its weight in search.edge_factors
(e.g. blocks: 0.7); another type is refused, so a typo does not become a new type.`,
		Example: "  memos link 1 2 --type relates_to",
		Args:    nargs(2, 2, "two memory ids"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			var err error
			if in.From, in.To, err = parseIDs(args); err != nil {
				return err
			}
			if cmd.Flags().Changed("weight") {
				in.Weight = &weight
			}
			return a.runOp(cmd, "link", &in, func(out any, _ *core.Engine) func(io.Writer) {
				e := out.(*core.Edge)
				return func(w io.Writer) {
					fmt.Fprintf(w, "linked %d → %d (%s, weight %g)\n", e.From, e.To, e.Type, e.Weight)
				}
			})
		}),
	}
	cmd.Flags().StringVarP(&in.Type, "type", "t", string(core.EdgeRelatesTo), "edge type")
	cmd.Flags().Float64VarP(&weight, "weight", "w", 1, "edge weight (a positive number)")
	cmd.Flags().StringVar(&in.Source, "source", "", "where the relation came from")
	return cmd
}

func (a *app) unlinkCmd() *cobra.Command {
	var in api.UnlinkIn
	cmd := &cobra.Command{
		Use:   "unlink <from> <to>",
		Short: "Remove a typed edge",
		Args:  nargs(2, 2, "two memory ids"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			var err error
			if in.From, in.To, err = parseIDs(args); err != nil {
				return err
			}
			return a.runOp(cmd, "unlink", &in, func(out any, _ *core.Engine) func(io.Writer) {
				u := out.(*api.UnlinkOut)
				return func(w io.Writer) { fmt.Fprintf(w, "unlinked %d → %d (%s)\n", u.From, u.To, u.Type) }
			})
		}),
	}
	cmd.Flags().StringVarP(&in.Type, "type", "t", string(core.EdgeRelatesTo), "edge type")
	return cmd
}

func parseIDs(args []string) (from, to int64, err error) {
	if from, err = parseID(args[0]); err != nil {
		return 0, 0, err
	}
	if to, err = parseID(args[1]); err != nil {
		return 0, 0, err
	}
	return from, to, nil
}

func (a *app) edgesCmd() *cobra.Command {
	var in api.HistoryIn
	return &cobra.Command{
		Use:   "edges <id>",
		Short: "List the edges that start or end at a memory",
		Args:  nargs(1, 1, "one memory id"),
		RunE: a.readE(func(cmd *cobra.Command, args []string) error {
			return a.opOnID(cmd, args[0], &in.ID, "edges", &in, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printEdges(w, in.ID, out.(*api.EdgesOut).Edges) }
			})
		}),
	}
}

func (a *app) forgetCmd() *cobra.Command {
	var in api.ForgetIn
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "forget <id>",
		Short: "Remove every version, index entry, vector and edge of a memory",
		Long: `Forget removes a memory completely — all versions, keyword and vector index
entries and edges — and prints a deletion certificate: a SHA-256 of the
forgotten content (never the content itself) chained into the audit log.
The id is never reused.

The certificate's erasure lines say, in the backend's words, what is left
of the content's bytes: "complete" when none is left in the store's files;
"pending" while a reader of an older snapshot (another memos process in the
middle of a read) still uses them, and the store erases them as soon as it
can, at the latest when it is next opened; "incomplete" when some stay
until an operator removes them (PostgreSQL keeps them in freed space and in
its write-ahead log). With --wait, forget waits for a pending erasure (up to
a minute, or the duration given) and exits 0 once nothing is pending; if
time runs out it prints the certificate and exits 7: the memory is
forgotten, its erasure still pending.`,
		Example: `  memos forget 2 --reason "user asked"
  memos forget 2 --wait          # also wait for what the store erases by itself
  memos forget 2 --wait=10s`,
		Args: nargs(1, 1, "one memory id"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			var err error
			if in.ID, err = parseID(args[0]); err != nil {
				return err
			}
			if wait < 0 {
				return core.Invalidf("--wait %v: a duration must not be negative", wait)
			}
			return a.callOp(cmd, "forget", &in, func(ctx context.Context, eng *core.Engine, _ *config.Config, out any) error {
				c := out.(*core.DeletionCertificate)
				var werr error
				if wait > 0 && c.Erasure == core.ErasurePending {
					slog.Info("memos: memory forgotten; waiting for readers of older snapshots to end so that its bytes can be erased", "id", in.ID, "wait", wait)
					wctx, cancel := context.WithTimeout(ctx, wait)
					werr = eng.WaitErased(wctx)
					cancel()
					if werr == nil {
						c.ErasureStatus = eng.Erasure(ctx)
					}
				}
				if err := a.emit(c, func(w io.Writer) { printCertificate(w, c) }); err != nil {
					return err
				}
				if werr != nil {
					return fmt.Errorf("memory %d is forgotten (certificate above), but %w", in.ID, werr)
				}
				return nil
			})
		}),
	}
	cmd.Flags().StringVarP(&in.Reason, "reason", "r", "", "why the memory is forgotten (recorded in the certificate)")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long (--wait alone: 1m) for a pending erasure of the content's bytes")
	cmd.Flags().Lookup("wait").NoOptDefVal = "1m"
	return cmd
}

// statsOut is stats' JSON: where the store is, then the engine's figures.
type statsOut struct {
	Store storeInfo `json:"store"`
	*core.Stats
	Footprint footprint `json:"footprint"`
}

// newStatsOut is stats' answer for the store of cfg.
func newStatsOut(cfg *config.Config, st *core.Stats) (statsOut, error) {
	fp, err := footprintOf(cfg, st)
	return statsOut{Store: storeOf(cfg), Stats: st, Footprint: fp}, err
}

// footprint is what the store costs per memory, on disk and in memory.
type footprint struct {
	// DiskBytes is the space the store takes on disk, as du counts it: its
	// files (sqlite: the database, -wal and -shm; bolt: its directory) or,
	// for a database server, the size it reports, plus the vector
	// snapshot. 0 when unknown.
	DiskBytes     int64   `json:"disk_bytes"`
	DiskPerMemory float64 `json:"disk_bytes_per_memory"`
	// IndexBytes is the vector index's own estimate of the memory it holds.
	IndexBytes     int64   `json:"vector_index_bytes"`
	IndexPerMemory float64 `json:"vector_index_bytes_per_memory"`
}

// footprintOf divides the store's sizes by the memories in the whole store.
func footprintOf(cfg *config.Config, st *core.Stats) (footprint, error) {
	var f footprint
	if path := storeOf(cfg).Path; path != "" {
		paths := []string{path}
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			paths = append(paths, path+"-wal", path+"-shm", path+"-journal")
		}
		if snap := vectorSnapshot(cfg); snap != "" {
			paths = append(paths, snap)
		}
		for _, p := range paths {
			_, alloc, err := bench.DiskUsage(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return f, fmt.Errorf("stats: size of %s: %w", p, err)
			}
			f.DiskBytes += alloc
		}
	} else if n, ok := st.Backend["size_bytes"].(int64); ok {
		// A store without a path (a database) keeps the vector snapshot in
		// it (driver.BlobStore), or none: its size counts it.
		f.DiskBytes = n
	}
	f.IndexBytes = st.VectorIndexBytes
	if st.StoreMemories > 0 {
		f.DiskPerMemory = float64(f.DiskBytes) / float64(st.StoreMemories)
		f.IndexPerMemory = float64(f.IndexBytes) / float64(st.StoreMemories)
	}
	return f, nil
}

type storeInfo struct {
	Home      string `json:"home"`
	Backend   string `json:"backend"`
	Path      string `json:"path,omitempty"`
	Namespace string `json:"namespace"`
}

func (a *app) statsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Count the memories, versions and edges in scope",
		Args:  nargs(0, 0, "no arguments"),
		RunE: a.readE(func(cmd *cobra.Command, _ []string) error {
			return a.callOp(cmd, "stats", &api.Empty{}, func(_ context.Context, _ *core.Engine, cfg *config.Config, res any) error {
				out, err := newStatsOut(cfg, res.(*core.Stats))
				if err != nil {
					return err
				}
				return a.emit(out, func(w io.Writer) { printStats(w, out) })
			})
		}),
	}
}

func storeOf(cfg *config.Config) storeInfo {
	s := storeInfo{Home: cfg.Home, Backend: cfg.Backend, Namespace: cfg.Namespace}
	for _, v := range cfg.Values {
		if v.Key == "backends."+cfg.Backend+".path" {
			s.Path, _ = v.Value.(string)
		}
	}
	return s
}
