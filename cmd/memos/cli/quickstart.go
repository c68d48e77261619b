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

// tourMemory is one memory the tour adds.
type tourMemory struct {
	in   core.Input
	args []string // the flags that give in's attributes
}

func (t *tour) run() error {
	if err := t.checkEmpty(); err != nil {
		return err
	}
	t.say("memos quickstart: a guided tour on a throwaway store")
	t.say("store: %s (%s backend, %s embedder: no server, no key, no download)", t.cfg.Home, t.cfg.Backend, t.cfg.Embedder)

	ids, infra, err := t.remember()
	if err != nil {
		return err
	}
	alice, lab, bob := ids[0], ids[1], ids[2]
	for _, chapter := range []func() error{
		func() error { return t.searching(infra) },
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

// checkEmpty refuses to tour a store that holds memories.
func (t *tour) checkEmpty() error {
	ctx, eng := t.ctx, t.eng
	empty := true
	err := eng.Backend().View(ctx, func(tx core.ReadTx) error {
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

// remember adds the tour's memories and returns their ids (the one in
// project:infra last) and the project:infra handle.
func (t *tour) remember() ([]int64, *core.Engine, error) {
	ctx, eng := t.ctx, t.eng
	t.chapter("Remember a few things. A memory has a type, a significance from 1 to 10 and,\n   optionally, entities, a source, a session, a trust level and free metadata.")
	infra, err := eng.In("project:infra")
	if err != nil {
		return nil, nil, err
	}
	mems := []tourMemory{
		{core.Input{Content: "Alice prefers open-source tools", Type: core.TypePreference, Significance: 6, Entities: []string{"Alice"}},
			[]string{"--type", "preference", "--significance", "6", "--entities", "Alice"}},
		{core.Input{Content: "Alice's home lab runs Proxmox on three nodes", Type: core.TypeFact, Entities: []string{"Alice", "Proxmox"}, Source: "conversation:7#turn-3"},
			[]string{"--type", "fact", "--entities", "Alice,Proxmox", "--source", "conversation:7#turn-3"}},
		{core.Input{Content: "Bob is allergic to peanuts; never suggest recipes that contain them", Type: core.TypeFact, Significance: 9, Entities: []string{"Bob"}, TrustLevel: core.TrustCertain},
			[]string{"--type", "fact", "--significance", "9", "--entities", "Bob", "--trust", "certain"}},
		{core.Input{Content: "The team agreed to deploy on Fridays only after the 2pm freeze review", Type: core.TypeEvent, Significance: 7, Source: "meeting:2024-05-02", Session: "planning-q2"},
			[]string{"--type", "event", "--significance", "7", "--source", "meeting:2024-05-02", "--session", "planning-q2"}},
		{core.Input{Content: "Alice and Bob co-maintain the infrastructure repository", Type: core.TypeRelationship, Entities: []string{"Alice", "Bob"}},
			[]string{"--type", "relationship", "--entities", "Alice,Bob"}},
		{core.Input{Content: "When a deploy fails, roll back first and debug second", Type: core.TypeLesson, Significance: 7, Metadata: map[string]any{"learned_from": "incident-12"}},
			[]string{"--type", "lesson", "--significance", "7", "--metadata", "learned_from=incident-12"}},
	}
	var ids []int64
	for _, m := range mems {
		err := t.do(append([]string{"add", m.in.Content}, m.args...), func() (any, func(io.Writer), error) {
			r, err := eng.Remember(ctx, m.in)
			if err != nil {
				return nil, nil, err
			}
			ids = append(ids, r.ID)
			return r, func(w io.Writer) {
				fmt.Fprintf(w, "added memory %d (%s, %s pool, significance %d, namespace %s)\n", r.ID, r.Type, r.Pool, r.Significance, r.Namespace)
			}, nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	nginx := core.Input{Content: "The nginx config for the docs site lives in /etc/nginx/sites-enabled/docs.conf", Type: core.TypeFact, Entities: []string{"nginx"}}
	err = t.do([]string{"add", nginx.Content, "--type", "fact", "--entities", "nginx", "--namespace", "project:infra"}, func() (any, func(io.Writer), error) {
		r, err := infra.Remember(ctx, nginx)
		if err != nil {
			return nil, nil, err
		}
		return r, func(w io.Writer) {
			fmt.Fprintf(w, "added memory %d (%s, %s pool, significance %d, namespace %s)\n", r.ID, r.Type, r.Pool, r.Significance, r.Namespace)
		}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return ids, infra, nil
}

// search shows and runs a search through h.
func (t *tour) search(h *core.Engine, req core.SearchRequest, extra ...string) error {
	argv := []string{"search", req.Query}
	if req.Mode != "" {
		argv = append(argv, "--mode", string(req.Mode))
	}
	return t.do(append(argv, extra...), func() (any, func(io.Writer), error) {
		res, err := h.Search(t.ctx, req)
		if err != nil {
			return nil, nil, err
		}
		return res, func(w io.Writer) { printSearch(w, res, h.Namespace()) }, nil
	})
}

// searching shows natural-language, FTS5 and scoped searches.
func (t *tour) searching(infra *core.Engine) error {
	eng := t.eng
	t.chapter("Search in plain language: stop words are dropped, the other words OR-ed, and\n   keyword and vector candidates fused, weighted by significance, trust and recency.")
	if err := t.search(eng, core.SearchRequest{Query: "what does alice like"}); err != nil {
		return err
	}
	if err := t.search(eng, core.SearchRequest{Query: "is bob allergic to anything"}); err != nil {
		return err
	}
	if t.cfg.Embedder == "hash" {
		t.say("   (The built-in hash embedder is lexical, not semantic: \"food allergies\" would not find\n   \"allergic to peanuts\". Configure embedder.name ollama or openai for meaning.)")
	}
	t.chapter("Or use FTS5 syntax with --mode fts: AND, OR, NOT, \"phrases\", prefix*, NEAR(a b, N).\n   It means the same on every backend, and a malformed query is an error, not a surprise.")
	for _, q := range []string{`preference AND "open-source"`, `proxmox AND (node* OR cluster)`, `deploy NOT friday`} {
		if err := t.search(eng, core.SearchRequest{Query: q, Mode: core.ModeFTS}); err != nil {
			return err
		}
	}
	t.chapter("Namespaces keep projects apart: a scoped search sees its namespace plus \"default\".")
	if err := t.search(infra, core.SearchRequest{Query: "nginx config*"}, "--namespace", "project:infra"); err != nil {
		return err
	}
	if err := t.search(eng, core.SearchRequest{Query: "nginx config*"}); err != nil {
		return err
	}
	return nil
}

// versions updates, lists and reverts the lab memory.
func (t *tour) versions(lab int64) error {
	ctx, eng := t.ctx, t.eng
	t.chapter("A change never overwrites: update writes a new version, history keeps every one,\n   revert writes an old one back as the newest.")
	four := "Alice's home lab runs Proxmox on four nodes"
	err := t.do([]string{"update", fmt.Sprint(lab), four}, func() (any, func(io.Writer), error) {
		m, err := eng.Update(ctx, lab, core.Patch{Content: &four})
		if err != nil {
			return nil, nil, err
		}
		return m, func(w io.Writer) { fmt.Fprintf(w, "memory %d is at version %d\n", m.ID, m.Version) }, nil
	})
	if err != nil {
		return err
	}
	history := func() error {
		return t.do([]string{"history", fmt.Sprint(lab)}, func() (any, func(io.Writer), error) {
			hs, err := eng.History(ctx, lab)
			if err != nil {
				return nil, nil, err
			}
			return hs, func(w io.Writer) { printHistory(w, hs) }, nil
		})
	}
	if err := history(); err != nil {
		return err
	}
	err = t.do([]string{"revert", fmt.Sprint(lab), "1"}, func() (any, func(io.Writer), error) {
		m, err := eng.Revert(ctx, lab, 1)
		if err != nil {
			return nil, nil, err
		}
		return m, func(w io.Writer) {
			fmt.Fprintf(w, "memory %d reverted to version 1: now at version %d\n", m.ID, m.Version)
		}, nil
	})
	if err != nil {
		return err
	}
	if err := history(); err != nil {
		return err
	}
	return nil
}

// graph links alice to lab and lists the edges.
func (t *tour) graph(alice, lab int64) error {
	ctx, eng := t.ctx, t.eng
	t.chapter("Memories form a graph with typed, weighted edges.")
	err := t.do([]string{"link", fmt.Sprint(alice), fmt.Sprint(lab), "--type", "relates_to"}, func() (any, func(io.Writer), error) {
		e, err := eng.Link(ctx, core.Edge{From: alice, To: lab, Type: core.EdgeRelatesTo})
		if err != nil {
			return nil, nil, err
		}
		return e, func(w io.Writer) {
			fmt.Fprintf(w, "linked %d → %d (%s, weight %g)\n", e.From, e.To, e.Type, e.Weight)
		}, nil
	})
	if err != nil {
		return err
	}
	err = t.do([]string{"edges", fmt.Sprint(lab)}, func() (any, func(io.Writer), error) {
		es, err := eng.Edges(ctx, lab)
		if err != nil {
			return nil, nil, err
		}
		return es, func(w io.Writer) { printEdges(w, lab, es) }, nil
	})
	if err != nil {
		return err
	}
	return nil
}

// forget forgets bob and shows that it is gone.
func (t *tour) forget(bob int64) error {
	ctx, eng := t.ctx, t.eng
	t.chapter("Forgetting is complete — every version, index entry, vector and edge — and leaves\n   a deletion certificate with a hash of the content, never the content.")
	err := t.do([]string{"forget", fmt.Sprint(bob), "--reason", "user asked"}, func() (any, func(io.Writer), error) {
		c, err := eng.Forget(ctx, bob, "user asked")
		if err != nil {
			return nil, nil, err
		}
		return c, func(w io.Writer) { printCertificate(w, c) }, nil
	})
	if err != nil {
		return err
	}
	line := "memos " + shellJoin([]string{"get", fmt.Sprint(bob)})
	t.say("$ %s", line)
	_, err = eng.Get(ctx, bob)
	if !errors.Is(err, core.ErrNotFound) {
		return fmt.Errorf("quickstart: memory %d is still readable after forget (error %v)", bob, err)
	}
	t.steps = append(t.steps, tourStep{Command: line, Error: err.Error()})
	t.say("memos: %v   (exit code %d)", err, core.KindOf(err).ExitCode)
	return nil
}

// numbers shows the store's statistics.
func (t *tour) numbers() error {
	ctx, eng := t.ctx, t.eng
	t.chapter("And the numbers.")
	err := t.do([]string{"stats"}, func() (any, func(io.Writer), error) {
		st, err := eng.Stats(ctx)
		if err != nil {
			return nil, nil, err
		}
		fp, err := footprintOf(t.cfg, st)
		if err != nil {
			return nil, nil, err
		}
		out := statsOut{Store: storeOf(t.cfg), Stats: st, Footprint: fp}
		return out, func(w io.Writer) { printStats(w, out) }, nil
	})
	if err != nil {
		return err
	}
	return nil
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
