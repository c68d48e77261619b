package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
)

func (a *app) quickstartCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "quickstart",
		Short: "A 30-second guided tour on a throwaway store",
		Long: `Quickstart creates a fresh store in a temporary directory (or in --home, which
must not hold a store yet), remembers a handful of memories, searches them in
natural language and in FTS5 syntax, updates one and shows its history, links
two, forgets one with a deletion certificate and prints the statistics —
printing each step as the memos command that does the same. It needs no
server, no key and no download. The store is kept so you can explore it.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			home := ""
			if !cmd.Root().PersistentFlags().Changed("home") {
				dir, err := os.MkdirTemp("", "memos-quickstart-")
				if err != nil {
					return fmt.Errorf("create a temporary store directory: %w", err)
				}
				home = dir
			}
			cfg, err := a.loadConfig(cmd, home)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			eng, err := a.open(ctx, cfg)
			if err != nil {
				return err
			}
			t := &tour{a: a, ctx: ctx, eng: eng, cfg: cfg}
			err = t.run()
			if cerr := eng.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("close store: %w", cerr)
			}
			if err != nil {
				return err
			}
			if a.json {
				return a.emit(struct {
					Home  string     `json:"home"`
					Steps []tourStep `json:"steps"`
				}{cfg.Home, t.steps}, nil)
			}
			return nil
		}),
	}
}

// tour is one run of the quickstart.
type tour struct {
	a     *app
	ctx   context.Context
	eng   *core.Engine
	cfg   *config.Config
	steps []tourStep // for --json
	n     int        // chapter number
}

// tourStep is one command of the tour as --json reports it.
type tourStep struct {
	Command string `json:"command"`
	Result  any    `json:"result,omitempty"`
	Error   string `json:"error,omitempty"`
}

func (t *tour) say(format string, args ...any) {
	if !t.a.json {
		fmt.Fprintf(t.a.stdout, format+"\n", args...)
	}
}

func (t *tour) chapter(title string) {
	t.n++
	t.say("\n%d. %s", t.n, title)
}

// do shows a command, runs its equivalent and prints the result as that
// command would.
func (t *tour) do(argv []string, fn func() (any, func(io.Writer), error)) error {
	line := "memos " + shellJoin(argv)
	t.say("$ %s", line)
	res, human, err := fn()
	if err != nil {
		return fmt.Errorf("quickstart step %q: %w", line, err)
	}
	t.steps = append(t.steps, tourStep{Command: line, Result: res})
	if !t.a.json && human != nil {
		human(t.a.stdout)
	}
	return nil
}

// op runs the operation name on in through the operation table, as the
// command the tour shows does.
func (t *tour) op(name string, in any) (any, error) { return runOpOn(t.ctx, t.eng, name, in) }

// step shows a command, runs its operation on in and prints the answer
// with human, as that command would; it returns the answer.
func (t *tour) step(argv []string, name string, in any, human func(w io.Writer, out any)) (any, error) {
	var out any
	err := t.do(argv, func() (any, func(io.Writer), error) {
		var err error
		if out, err = t.op(name, in); err != nil {
			return nil, nil, err
		}
		return out, func(w io.Writer) { human(w, out) }, nil
	})
	return out, err
}

// tourMemory is one memory the tour adds.
type tourMemory struct {
	in   api.RememberIn
	args []string // the flags that give in's attributes
}

func (t *tour) run() error {
	if err := t.checkEmpty(); err != nil {
		return err
	}
	t.say("memos quickstart: a guided tour on a throwaway store")
	t.say("store: %s (%s backend, %s embedder: no server, no key, no download)", t.cfg.Home, t.cfg.Backend, t.cfg.Embedder)

	ids, err := t.remember()
	if err != nil {
		return err
	}
	alice, lab, bob := ids[0], ids[1], ids[2]
	for _, chapter := range []func() error{
		t.searching,
		func() error { return t.versions(lab) },
		func() error { return t.graph(alice, lab) },
		func() error { return t.forget(bob) },
		t.numbers,
	} {
		if err := chapter(); err != nil {
			return err
		}
	}
	t.say(`
That was the tour. Its store stays in %[1]s, so you can keep exploring:
  export MEMOS_HOME=%[2]s
  memos search "who maintains the infrastructure"
  memos get %[3]d --json
  memos history %[4]d
  memos search 'alice NOT proxmox' --mode fts

Your own store lives in ~/.memos (or $MEMOS_HOME):
  memos init                     # writes a commented config.yaml
  memos add "I prefer short answers" --type preference --significance 6
  memos search "how should answers look"
  memos config show              # every setting and where it came from
  memos --help`, t.cfg.Home, shellQuote(t.cfg.Home), alice, lab)
	return nil
}

// checkEmpty refuses to tour a store that holds memories. It reads the
// whole store, beyond any namespace, which no operation does for one
// memory.
func (t *tour) checkEmpty() error {
	empty := true
	err := t.eng.Backend().View(t.ctx, func(tx core.ReadTx) error {
		return tx.Scan(core.ScanOptions{Limit: 1}, func(*core.Memory) error { empty = false; return nil })
	})
	if err != nil {
		return err
	}
	if !empty {
		return core.Invalidf("quickstart needs an empty store, and %s already holds one; leave out --home to tour a temporary store", t.cfg.Home)
	}
	return nil
}

// infra is the namespace of the tour's scoped search.
const infra = "project:infra"

// remember adds the tour's memories and returns their ids (the one in
// project:infra last).
func (t *tour) remember() ([]int64, error) {
	t.chapter("Remember a few things. A memory has a type, a significance from 1 to 10 and,\n   optionally, entities, a source, a session, a trust level and free metadata.")
	mem := func(content string, at api.Attrs, args ...string) tourMemory {
		return tourMemory{api.RememberIn{Content: content, Attrs: at}, args}
	}
	mems := []tourMemory{
		mem("Alice prefers open-source tools", api.Attrs{Type: core.TypePreference, Significance: 6, Entities: []string{"Alice"}},
			"--type", "preference", "--significance", "6", "--entities", "Alice"),
		mem("Alice's home lab runs Proxmox on three nodes", api.Attrs{Type: core.TypeFact, Entities: []string{"Alice", "Proxmox"}, Source: "conversation:7#turn-3"},
			"--type", "fact", "--entities", "Alice,Proxmox", "--source", "conversation:7#turn-3"),
		mem("Bob is allergic to peanuts; never suggest recipes that contain them", api.Attrs{Type: core.TypeFact, Significance: 9, Entities: []string{"Bob"}, Trust: core.TrustCertain},
			"--type", "fact", "--significance", "9", "--entities", "Bob", "--trust", "certain"),
		mem("The team agreed to deploy on Fridays only after the 2pm freeze review", api.Attrs{Type: core.TypeEvent, Significance: 7, Source: "meeting:2024-05-02", Session: "planning-q2"},
			"--type", "event", "--significance", "7", "--source", "meeting:2024-05-02", "--session", "planning-q2"),
		mem("Alice and Bob co-maintain the infrastructure repository", api.Attrs{Type: core.TypeRelationship, Entities: []string{"Alice", "Bob"}},
			"--type", "relationship", "--entities", "Alice,Bob"),
		mem("When a deploy fails, roll back first and debug second", api.Attrs{Type: core.TypeLesson, Significance: 7, Metadata: map[string]any{"learned_from": "incident-12"}},
			"--type", "lesson", "--significance", "7", "--metadata", "learned_from=incident-12"),
		mem("The nginx config for the docs site lives in /etc/nginx/sites-enabled/docs.conf", api.Attrs{Type: core.TypeFact, Entities: []string{"nginx"}},
			"--type", "fact", "--entities", "nginx", "--namespace", infra),
	}
	mems[len(mems)-1].in.Namespace = infra
	var ids []int64
	for _, m := range mems {
		out, err := t.step(append([]string{"add", m.in.Content}, m.args...), "remember", &m.in, func(w io.Writer, out any) { printAdded(w, out.(*core.Memory)) })
		if err != nil {
			return nil, err
		}
		ids = append(ids, out.(*core.Memory).ID)
	}
	return ids, nil
}

// search shows and runs a search.
func (t *tour) search(in api.SearchIn) error {
	argv := []string{"search", in.Query}
	if in.Mode != "" {
		argv = append(argv, "--mode", in.Mode)
	}
	ns := t.eng.Namespace()
	if in.Namespace != "" {
		ns = in.Namespace
		argv = append(argv, "--namespace", ns)
	}
	_, err := t.step(argv, "search", &in, func(w io.Writer, out any) { printSearch(w, out.(*core.SearchResult), ns) })
	return err
}

// searching shows natural-language, FTS5 and scoped searches.
func (t *tour) searching() error {
	t.chapter("Search in plain language: stop words are dropped, the other words OR-ed, and\n   keyword and vector candidates fused, weighted by significance, trust and recency.")
	if err := t.search(api.SearchIn{Query: "what does alice like"}); err != nil {
		return err
	}
	if err := t.search(api.SearchIn{Query: "is bob allergic to anything"}); err != nil {
		return err
	}
	if t.cfg.Embedder == "hash" {
		t.say("   (The built-in hash embedder is lexical, not semantic: \"food allergies\" would not find\n   \"allergic to peanuts\". Configure embedder.name ollama or openai for meaning.)")
	}
	t.chapter("Or use FTS5 syntax with --mode fts: AND, OR, NOT, \"phrases\", prefix*, NEAR(a b, N).\n   It means the same on every backend, and a malformed query is an error, not a surprise.")
	for _, q := range []string{`preference AND "open-source"`, `proxmox AND (node* OR cluster)`, `deploy NOT friday`} {
		if err := t.search(api.SearchIn{Query: q, Mode: string(core.ModeFTS)}); err != nil {
			return err
		}
	}
	t.chapter("Namespaces keep projects apart: a scoped search sees its namespace plus \"default\".")
	if err := t.search(api.SearchIn{Scope: api.Scope{Namespace: infra}, Query: "nginx config*"}); err != nil {
		return err
	}
	return t.search(api.SearchIn{Query: "nginx config*"})
}

// versions updates, lists and reverts the lab memory.
func (t *tour) versions(lab int64) error {
	t.chapter("A change never overwrites: update writes a new version, history keeps every one,\n   revert writes an old one back as the newest.")
	four := "Alice's home lab runs Proxmox on four nodes"
	_, err := t.step([]string{"update", fmt.Sprint(lab), four}, "update", &api.UpdateIn{ID: lab, Content: &four}, func(w io.Writer, out any) {
		m := out.(*core.Memory)
		fmt.Fprintf(w, "memory %d is at version %d\n", m.ID, m.Version)
	})
	if err != nil {
		return err
	}
	history := func() error {
		_, err := t.step([]string{"history", fmt.Sprint(lab)}, "history", &api.HistoryIn{ID: lab}, func(w io.Writer, out any) {
			printHistory(w, out.(*api.VersionsOut).Versions)
		})
		return err
	}
	if err := history(); err != nil {
		return err
	}
	_, err = t.step([]string{"revert", fmt.Sprint(lab), "1"}, "revert", &api.RevertIn{ID: lab, Version: 1}, func(w io.Writer, out any) {
		m := out.(*core.Memory)
		fmt.Fprintf(w, "memory %d reverted to version 1: now at version %d\n", m.ID, m.Version)
	})
	if err != nil {
		return err
	}
	return history()
}

// graph links alice to lab and lists the edges.
func (t *tour) graph(alice, lab int64) error {
	t.chapter("Memories form a graph with typed, weighted edges.")
	link := &api.LinkIn{From: alice, To: lab, Type: string(core.EdgeRelatesTo)}
	_, err := t.step([]string{"link", fmt.Sprint(alice), fmt.Sprint(lab), "--type", link.Type}, "link", link, func(w io.Writer, out any) {
		e := out.(*core.Edge)
		fmt.Fprintf(w, "linked %d → %d (%s, weight %g)\n", e.From, e.To, e.Type, e.Weight)
	})
	if err != nil {
		return err
	}
	_, err = t.step([]string{"edges", fmt.Sprint(lab)}, "edges", &api.HistoryIn{ID: lab}, func(w io.Writer, out any) {
		printEdges(w, lab, out.(*api.EdgesOut).Edges)
	})
	return err
}

// forget forgets bob and shows that it is gone.
func (t *tour) forget(bob int64) error {
	t.chapter("Forgetting is complete — every version, index entry, vector and edge — and leaves\n   a deletion certificate with a hash of the content, never the content.")
	forget := &api.ForgetIn{ID: bob, Reason: "user asked"}
	_, err := t.step([]string{"forget", fmt.Sprint(bob), "--reason", forget.Reason}, "forget", forget, func(w io.Writer, out any) {
		printCertificate(w, out.(*core.DeletionCertificate))
	})
	if err != nil {
		return err
	}
	line := "memos " + shellJoin([]string{"get", fmt.Sprint(bob)})
	t.say("$ %s", line)
	_, err = t.op("get", &api.IDIn{ID: bob})
	if !errors.Is(err, core.ErrNotFound) {
		return fmt.Errorf("quickstart: memory %d is still readable after forget (error %v)", bob, err)
	}
	t.steps = append(t.steps, tourStep{Command: line, Error: err.Error()})
	t.say("memos: %v   (exit code %d)", err, core.KindOf(err).ExitCode)
	return nil
}

// numbers shows the store's statistics.
func (t *tour) numbers() error {
	t.chapter("And the numbers.")
	return t.do([]string{"stats"}, func() (any, func(io.Writer), error) {
		st, err := t.op("stats", &api.Empty{})
		if err != nil {
			return nil, nil, err
		}
		out, err := newStatsOut(t.cfg, st.(*core.Stats))
		if err != nil {
			return nil, nil, err
		}
		return out, func(w io.Writer) { printStats(w, out) }, nil
	})
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./#-]+$`)

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	switch {
	case plainArg.MatchString(s):
		return s
	case !strings.ContainsAny(s, "\"$`\\!"):
		return `"` + s + `"`
	default:
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
}

func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, s := range argv {
		q[i] = shellQuote(s)
	}
	return strings.Join(q, " ")
}
