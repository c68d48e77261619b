package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
)

// This file holds the governance commands: the review queue, lessons,
// forget-source and the audit log.

func (a *app) quarantineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine",
		Short: "The review queue: memories held for a person to release or reject",
		Long: `Writes the governance policy finds questionable — an untrusted trust level or
score, a source matching governance.quarantine_sources, a contradiction of a
trusted memory, or memos add --quarantine — wait here, invisible to search,
explain and packs (unless --include-quarantined) until released or rejected.`,
	}
	cmd.AddCommand(a.quarantineListCmd(), a.quarantineReleaseCmd(), a.quarantineRejectCmd())
	return cmd
}

func (a *app) quarantineListCmd() *cobra.Command {
	var in api.ReviewIn
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the memories waiting for review, why, and what they contradict",
		Args:  nargs(0, 0, "no arguments"),
		RunE: a.readE(func(cmd *cobra.Command, _ []string) error {
			return a.runOp(cmd, "review", &in, func(out any, _ *core.Engine) func(io.Writer) {
				res := out.(*api.ReviewOut)
				return func(w io.Writer) {
					printReview(w, res.Items)
					if res.Next != 0 {
						fmt.Fprintf(w, "more wait: memos quarantine list --limit %d --after %d\n", in.Limit, res.Next)
					}
				}
			})
		}),
	}
	cmd.Flags().IntVar(&in.Limit, "limit", 0, "list at most this many (default: all)")
	cmd.Flags().Int64Var(&in.After, "after", 0, "list the memories whose id is above this (the page after one)")
	return cmd
}

func printReview(w io.Writer, items []core.ReviewItem) {
	if len(items) == 0 {
		fmt.Fprintln(w, "the review queue is empty")
		return
	}
	for _, it := range items {
		m := it.Memory
		fmt.Fprintf(w, "%d  %s\n", m.ID, oneLine(m.Content, 100))
		fmt.Fprintf(w, "    trust %s %.2f", m.Trust.Level, m.Trust.Score)
		if m.Source != "" {
			fmt.Fprintf(w, ", source %s", m.Source)
		}
		fmt.Fprintf(w, ", added %s\n", m.CreatedAt.Format(time.RFC3339))
		for _, r := range it.Reasons {
			fmt.Fprintf(w, "    why: %s\n", r)
		}
		for _, c := range it.Contradicts {
			fmt.Fprintf(w, "    contradicts %d (trust %s %.2f): %s\n", c.ID, c.Trust.Level, c.Trust.Score, oneLine(c.Content, 80))
		}
	}
	fmt.Fprintln(w, "release with: memos quarantine release <id>; reject with: memos quarantine reject <id> --reason \"…\"")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func (a *app) quarantineReleaseCmd() *cobra.Command {
	var trust, note string
	cmd := &cobra.Command{
		Use:     "release <id>",
		Short:   "Let a quarantined memory into recall (optionally with a new trust level)",
		Example: "  memos quarantine release 12 --trust certain --note \"checked with Alice\"",
		Args:    nargs(1, 1, "one memory id"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			id, err := parseID(args[0])
			if err != nil {
				return err
			}
			in := &api.ReleaseIn{ID: id, Trust: core.TrustLevel(trust), Note: note}
			return a.runOp(cmd, "quarantine-release", in, func(out any, _ *core.Engine) func(io.Writer) {
				m := out.(*core.Memory)
				return func(w io.Writer) {
					fmt.Fprintf(w, "released memory %d (version %d, trust %s %.2f)\n", m.ID, m.Version, m.Trust.Level, m.Trust.Score)
				}
			})
		}),
	}
	cmd.Flags().StringVar(&trust, "trust", "", "give it this trust level: certain, inferred, imported, contradicted")
	cmd.Flags().StringVar(&note, "note", "", "why it was released (recorded in the audit log)")
	return cmd
}

func (a *app) quarantineRejectCmd() *cobra.Command {
	var in api.RejectIn
	cmd := &cobra.Command{
		Use:     "reject <id> --reason \"…\"",
		Short:   "Forget a quarantined memory, with a deletion certificate",
		Example: `  memos quarantine reject 12 --reason "not true: Alice never lived in Porto"`,
		Args:    nargs(1, 1, "one memory id"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			return a.opOnID(cmd, args[0], &in.ID, "quarantine-reject", &in, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printCertificate(w, out.(*core.DeletionCertificate)) }
			})
		}),
	}
	cmd.Flags().StringVarP(&in.Reason, "reason", "r", "", "why it was rejected (required; recorded in the certificate)")
	return cmd
}

func (a *app) learnCmd() *cobra.Command {
	var in api.LearnIn
	cmd := &cobra.Command{
		Use:   "learn <guidance>",
		Short: "Store a lesson: procedural guidance whose standing follows its outcomes",
		Example: `  memos learn "run the migrations before deploying" --when "deploying the api"
  memos lesson outcome 7 --success`,
		Args: nargs(1, -1, "the guidance"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			in.Guidance = strings.Join(args, " ")
			if cmd.Flags().Changed("significance") && in.Significance == 0 {
				return api.SignificanceError(0)
			}
			return a.runOp(cmd, "learn", &in, func(out any, _ *core.Engine) func(io.Writer) {
				l := out.(*core.Lesson)
				return func(w io.Writer) {
					fmt.Fprintf(w, "learned lesson %d (score %.2f): %s\n", l.Memory.ID, l.Score, l.Memory.Content)
				}
			})
		}),
	}
	fs := cmd.Flags()
	fs.StringVar(&in.When, "when", "", "the situation the lesson applies to")
	fs.StringVar(&in.Source, "source", "", "where the lesson came from")
	fs.StringVar(&in.Session, "session", "", "the conversation or run it belongs to")
	fs.StringSliceVarP(&in.Entities, "entities", "e", nil, "entity names, comma-separated")
	fs.IntVarP(&in.Significance, "significance", "s", 0, "significance 1–10 (default 5; outcomes move it)")
	return cmd
}

func (a *app) lessonCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lesson",
		Short: "List lessons, show one, record an outcome",
		Long: `A lesson's score is the Beta(1,1) mean of its outcomes, (successes+1)/(n+2); it is
the lesson's trust score, significance is 10×score rounded. A lesson with at
least 3 outcomes and a score below 0.35 is demoted (trust contradicted); with
at least 5 and a score below 0.2 it is archived (kept, invisible to recall).`,
	}
	var lessons api.LessonsIn
	list := &cobra.Command{
		Use:   "list",
		Short: "List the lessons, best score first",
		Args:  nargs(0, 0, "no arguments"),
		RunE: a.readE(func(cmd *cobra.Command, _ []string) error {
			return a.runOp(cmd, "lessons", &lessons, func(out any, _ *core.Engine) func(io.Writer) {
				ls := out.(*api.LessonsOut).Lessons
				return func(w io.Writer) {
					if len(ls) == 0 {
						fmt.Fprintln(w, "no lessons yet: memos learn \"<guidance>\" --when \"<situation>\"")
					}
					tw := table(w)
					for _, l := range ls {
						fmt.Fprintf(tw, "%d\t%.2f\t+%d −%d\t%s\t%s\n", l.Memory.ID, l.Score, l.Successes, l.Failures, l.Memory.Status, oneLine(l.Memory.Content, 80))
					}
					tw.Flush()
				}
			})
		}),
	}
	list.Flags().BoolVar(&lessons.IncludeArchived, "include-archived", false, "also list lessons archived after failing repeatedly")
	a.renamed(list, map[string]string{"all": "include-archived"})
	var one api.HistoryIn
	show := &cobra.Command{
		Use:   "show <id>",
		Short: "Show a lesson with its outcome record",
		Args:  nargs(1, 1, "one lesson id"),
		RunE: a.readE(func(cmd *cobra.Command, args []string) error {
			return a.opOnID(cmd, args[0], &one.ID, "lesson", &one, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printLesson(w, out.(*core.Lesson)) }
			})
		}),
	}
	var (
		oc      api.OutcomeIn
		success bool
	)
	outcome := &cobra.Command{
		Use:   "outcome <id> --success=true|false",
		Short: "Record that following a lesson succeeded (--success) or failed (--success=false)",
		Example: `  memos lesson outcome 7 --success
  memos lesson outcome 7 --success=false --note "the migration locked the table"`,
		Args: nargs(1, 2, "a lesson id and --success=true or false"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			ok := success
			given := cmd.Flags().Changed("success")
			if len(args) == 2 {
				// The outcome used to be a word after the id.
				switch args[1] {
				case "success", "failure":
					ok = args[1] == "success"
				default:
					return core.Invalidf("outcome %q: give --success=true or --success=false", args[1])
				}
				if given && ok != success {
					return core.Invalidf("--success=%t and %q disagree; give --success only", success, args[1])
				}
				fmt.Fprintf(a.stderr, "memos: \"lesson outcome <id> %s\" is now \"lesson outcome <id> --success=%t\"; the old form goes away in the next release\n", args[1], ok)
				given = true
			}
			if given {
				oc.Success = &ok
			}
			return a.opOnID(cmd, args[0], &oc.ID, "lesson-outcome", &oc, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printLesson(w, out.(*core.Lesson)) }
			})
		}),
	}
	outcome.Flags().BoolVar(&success, "success", false, "true when following the lesson worked, false when it did not (required)")
	outcome.Flags().StringVar(&oc.Note, "note", "", "what happened (recorded in the audit log)")
	cmd.AddCommand(list, show, outcome)
	return cmd
}

func printLesson(w io.Writer, l *core.Lesson) {
	m := l.Memory
	tw := table(w)
	fmt.Fprintf(tw, "lesson\t%d (version %d)\n", m.ID, m.Version)
	fmt.Fprintf(tw, "content\t%s\n", m.Content)
	if l.When != "" {
		fmt.Fprintf(tw, "when\t%s\n", l.When)
	}
	fmt.Fprintf(tw, "outcomes\t%d successes, %d failures\n", l.Successes, l.Failures)
	fmt.Fprintf(tw, "score\t%.2f (significance %d, trust %s)\n", l.Score, m.Significance, m.Trust.Level)
	fmt.Fprintf(tw, "status\t%s\n", m.Status)
	tw.Flush()
}

func (a *app) forgetSourceCmd() *cobra.Command {
	var req api.ForgetSourceIn
	cmd := &cobra.Command{
		Use:   "forget-source <source>",
		Short: "Forget every memory from a source and everything derived from them",
		Long: `forget-source forgets every memory whose source is <source> or starts with it
followed by a separator (conversation:7 takes conversation:7#turn-3, not
conversation:70) and, transitively, every memory derived from them over
derived_from edges — each with a deletion certificate, in transactions of 200.
A memory derived also from memories that stay survives unless --strict.`,
		Example: `  memos forget-source conversation:7 --dry-run
  memos forget-source web:example.com --reason "site removed" --strict`,
		Args: nargs(1, 1, "one source"),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			req.Source = args[0]
			a.readOnly = req.DryRun
			return a.runOp(cmd, "forget-source", &req, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printForgetSource(w, out.(*core.ForgetSourceReport)) }
			})
		}),
	}
	fs := cmd.Flags()
	fs.BoolVar(&req.DryRun, "dry-run", false, "list what would be forgotten; forget nothing")
	fs.BoolVar(&req.Strict, "strict", false, "also forget memories derived from the source and from others")
	fs.StringVarP(&req.Reason, "reason", "r", "", "why (recorded in every certificate)")
	return cmd
}

func printForgetSource(w io.Writer, r *core.ForgetSourceReport) {
	verb := "forgot"
	if r.DryRun {
		verb = "would forget"
	}
	fmt.Fprintf(w, "%s %s from source %s and %s derived from them\n", verb,
		plural(len(r.Matched), "memory", "memories"), r.Source, plural(len(r.Derived), "memory", "memories"))
	if len(r.Matched) > 0 {
		fmt.Fprintf(w, "  from the source: %s\n", idList(r.Matched))
	}
	if len(r.Derived) > 0 {
		fmt.Fprintf(w, "  derived:         %s\n", idList(r.Derived))
	}
	if len(r.Kept) > 0 {
		fmt.Fprintf(w, "  kept (also derived from memories that stay; --strict forgets them): %s\n", idList(r.Kept))
	}
	for _, c := range r.Certificates {
		fmt.Fprintf(w, "  certificate: memory %d, content sha256 %s, audit entry #%d\n", c.MemoryID, c.ContentHash, c.AuditSeq)
	}
}

func idList(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}

func (a *app) auditCmd() *cobra.Command {
	var (
		in     api.AuditIn
		memory string
	)
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "The tamper-evident audit log: list, verify, export",
		Long: `The audit log records every write — provenance (source and derived_from),
updates with what changed (validity and status with old and new values),
quarantine decisions, lesson outcomes, deletions with their certificates and
model switches — each entry chained by SHA-256 to the one before it, and each
entry about a memory version binding that version's SHA-256.`,
		Example: `  memos audit --memory-id 12
  memos audit --last 20
  memos audit --action quarantine. --json
  memos audit verify
  memos audit export audit.json && memos audit verify audit.json`,
		Args: nargs(0, 0, "no arguments (see the subcommands)"),
		RunE: a.readE(func(cmd *cobra.Command, _ []string) error {
			if memory != "" {
				var err error
				if in.MemoryID, err = parseID(memory); err != nil {
					return err
				}
			}
			return a.runOp(cmd, "audit", &in, func(out any, _ *core.Engine) func(io.Writer) {
				log := out.(*api.AuditOut).Entries
				return func(w io.Writer) {
					tw := table(w)
					for _, e := range log {
						id := "-"
						if e.MemoryID != 0 {
							id = fmt.Sprint(e.MemoryID)
						}
						fmt.Fprintf(tw, "#%d\t%s\t%s\t%s\t%s\n", e.Seq, e.Time.Format(time.RFC3339), e.Action, id, e.Detail)
					}
					tw.Flush()
				}
			})
		}),
	}
	fs := cmd.Flags()
	fs.StringVar(&memory, "memory-id", "", "only entries about this memory id")
	fs.StringVar(&in.Action, "action", "", `only this action (remember, update, forget, …) or prefix ending in "." (quarantine.)`)
	fs.StringVar(&in.Source, "source", "", "only entries that name this source")
	fs.StringVar(&in.Since, "since", "", "only entries at or after this time")
	fs.StringVar(&in.Until, "until", "", "only entries before this time")
	fs.IntVar(&in.Last, "last", 0, "only the last N entries that match (reads the log from its end)")
	fs.Uint64Var(&in.Before, "before", 0, "only entries whose number (#) is below this one: with --last, the page before")

	cmd.AddCommand(a.auditVerifyCmd(), a.auditExportCmd())
	a.renamed(cmd, map[string]string{"memory": "memory-id"})
	return cmd
}

// auditVerifyCmd is memos audit verify.
func (a *app) auditVerifyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Check the chain and every stored version against it (or an exported FILE, with no store)",
		Long: `Verify recomputes every entry's hash and link, checks the head the store
recorded, checks every stored memory version — current record and version
rows — against the SHA-256 its audit entry bound, and checks that the store
holds exactly the memories the log records as written and not deleted. Exit
code 0 when all holds; otherwise 5 and a message listing every problem found
(the first 100). With FILE it checks an export made by memos audit export,
needing no store.`,
		Args: nargs(0, 1, "optionally an exported file"),
		RunE: a.readE(func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				fh, err := os.Open(args[0])
				if err != nil {
					return core.Invalidf("audit verify: %v", err)
				}
				defer fh.Close()
				rep, err := core.VerifyAuditExport(fh)
				if err != nil {
					return err
				}
				return a.emit(rep, func(w io.Writer) {
					fmt.Fprintf(w, "%s: %s verified, chain ends at %s\n", args[0], plural(rep.Entries, "entry", "entries"), rep.Head)
				})
			}
			return a.runOp(cmd, "audit-verify", &api.Empty{}, func(out any, _ *core.Engine) func(io.Writer) {
				return func(w io.Writer) { printAuditReport(w, out.(*core.AuditReport)) }
			})
		}),
	}
}

// auditExportCmd is memos audit export.
func (a *app) auditExportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "export FILE",
		Short: "Verify the log and write it to FILE, checkable later with memos audit verify FILE",
		Args:  nargs(1, 1, "one file"),
		RunE: a.readE(func(cmd *cobra.Command, args []string) error {
			return a.callOp(cmd, "audit-export", &api.Empty{}, func(_ context.Context, _ *core.Engine, _ *config.Config, out any) error {
				x := out.(*api.AuditExportOut)
				b, _ := x.JSON()
				tmp := args[0] + ".tmp"
				fh, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
				if err != nil {
					return core.Invalidf("audit export: %v", err)
				}
				_, err = fh.Write(b)
				if cerr := fh.Close(); err == nil && cerr != nil {
					err = cerr
				}
				if err == nil {
					err = os.Rename(tmp, args[0])
				}
				if err != nil {
					os.Remove(tmp)
					return err
				}
				rep := struct {
					Entries int    `json:"entries"`
					Head    string `json:"head"`
					File    string `json:"file"`
				}{len(x.Entries), x.Head, args[0]}
				return a.emit(rep, func(w io.Writer) {
					fmt.Fprintf(w, "exported %s to %s (head %s)\n", plural(rep.Entries, "entry", "entries"), args[0], rep.Head)
				})
			})
		}),
	}
}

func printAuditReport(w io.Writer, r *core.AuditReport) {
	fmt.Fprintf(w, "audit log verified: %s, chain ends at %s\n", plural(r.Entries, "entry", "entries"), r.Head)
	fmt.Fprintf(w, "%s and %s match the hashes their entries bound\n",
		plural(r.Memories, "current record", "current records"), plural(r.Versions, "version row", "version rows"))
	if r.Unbound > 0 {
		fmt.Fprintf(w, "%s written before the store recorded provenance (not checked)\n", plural(r.Unbound, "version was", "versions were"))
	}
}
