// Package cli is the memos command-line interface: a cobra command tree that
// decodes arguments, calls the core engine in process and prints the answer,
// concise and aligned for people or as JSON with --json.
//
// The package registers no backend or embedder itself, except "plugin", the
// out-of-process loader that `memos plugin test` also uses. A program picks
// its set with blank imports and hands over to Main; cmd/memos is such a program,
// and a team that needs its own embedder builds its own memos with one more
// import:
//
//	import (
//		_ "github.com/memos-go/memos/backends/sqlite"
//		_ "github.com/memos-go/memos/embedders/hash"
//		_ "example.com/team/memos-embedder" // registers "team"
//		"github.com/memos-go/memos/cmd/memos/cli"
//	)
//
//	func main() { os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
//
// Configuration comes from built-in defaults < $MEMOS_HOME/config.yaml <
// MEMOS_* environment variables < flags (see `memos config show`). Errors are
// printed as "memos: <message>" on stderr, or with --json as
// {"error":{"kind":…,"message":…}} on stderr, and the exit code comes from
// core.KindOf: 0 success, 1 internal, 2 invalid input or usage, 3 not found,
// 4 embedding model or dimension mismatch, 5 conflict, 6 store closed or unavailable,
// 7 deadline exceeded, 130 interrupted.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memos-go/memos/cmd/memos/config"
	"github.com/memos-go/memos/core"
	_ "github.com/memos-go/memos/core/provider/extract"   // the built-in extractors: rules (the default), llm
	_ "github.com/memos-go/memos/core/provider/rerank"    // the http reranker (text-embeddings-inference, Cohere, Jina)
	_ "github.com/memos-go/memos/core/provider/summarize" // the built-in summarizers: extractive (the default), llm
)

// Main runs the memos command line with args (without the program name) and
// returns the process exit code. It reads the environment from os.Environ;
// nothing else in the package touches global state, so Main may be called
// several times in one process.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, os.Environ(), args, stdin, stdout, stderr)
}

// app is the state of one run of the command line.
type app struct {
	environ []string
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer

	// Global flags.
	json                               bool
	home, namespace, backend, embedder string
	postgresDSN                        string

	// ran is set once a command's own code starts: errors before that are
	// usage errors (unknown command or flag, wrong number of arguments).
	ran bool
	// allowModelChange opens a store recorded with another embedding model
	// (memos reembed only).
	allowModelChange bool
	// readOnly marks a command that only reads (and dry runs): on a store
	// that does not exist it fails instead of creating an empty one, so that
	// a mistyped home does not pass for an empty memory.
	readOnly bool
}

func run(ctx context.Context, environ, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{environ: environ, stdin: stdin, stdout: stdout, stderr: stderr}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	_, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if !a.ran && core.KindOf(err) == unclassified {
		err = &usageError{err}
	}
	if !a.json && !a.ran && slices.Contains(args, "--json") {
		a.json = true // the parse failed before --json was read
	}
	a.printError(err)
	return core.KindOf(err).ExitCode
}

// unclassified is the kind of an error that wraps no core sentinel.
var unclassified = core.KindOf(errors.New("unclassified"))

// usageError is a command-line mistake (unknown command or flag, wrong
// arguments); it counts as invalid input.
type usageError struct{ err error }

func (e *usageError) Error() string {
	return e.err.Error() + " (see memos --help)"
}
func (e *usageError) Unwrap() []error { return []error{e.err, core.ErrInvalid} }

func (a *app) printError(err error) {
	if a.json {
		out := map[string]any{"error": map[string]string{"kind": core.KindOf(err).Name, "message": err.Error()}}
		b, _ := json.Marshal(out)
		fmt.Fprintf(a.stderr, "%s\n", b)
		return
	}
	fmt.Fprintf(a.stderr, "memos: %v\n", err)
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "memos",
		Short: "A memory layer for AI agents",
		Long: `memos stores what an agent learns — facts, preferences, events, lessons — and
finds the ones that matter for any query. It runs locally: the default store is
$MEMOS_HOME/memory.db (SQLite) with the built-in hash embedder, so it needs no
server, no key and no download.

New here? Run: memos quickstart`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{flagError(err)} })
	a.versionFlag(root)
	pf := root.PersistentFlags()
	pf.BoolVar(&a.json, "json", false, "print machine-readable JSON")
	pf.StringVar(&a.home, "home", "", "memos home directory (default $MEMOS_HOME or ~/.memos)")
	pf.StringVarP(&a.namespace, "namespace", "n", "", `namespace to write to and read from, with "default" (e.g. project:infra)`)
	pf.StringVar(&a.backend, "backend", "", "storage backend (default sqlite)")
	pf.StringVar(&a.embedder, "embedder", "", "embedder (default hash)")
	pf.StringVar(&a.postgresDSN, "postgres-dsn", "", "PostgreSQL connection string for the postgres backend (backends.postgres.dsn)")
	root.AddGroup(
		&cobra.Group{ID: "mem", Title: "Memories:"},
		&cobra.Group{ID: "graph", Title: "Graph:"},
		&cobra.Group{ID: "govern", Title: "Governance:"},
		&cobra.Group{ID: "serve", Title: "Servers:"},
		&cobra.Group{ID: "setup", Title: "Setup:"},
	)
	for _, c := range []*cobra.Command{a.serveCmd(), a.mcpCmd()} {
		c.GroupID = "serve"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{a.addCmd(), a.searchCmd(), a.getCmd(), a.updateCmd(),
		a.historyCmd(), a.revertCmd(), a.forgetCmd(), a.statsCmd(), a.captureCmd(), a.consolidateCmd(), a.dreamCmd()} {
		c.GroupID = "mem"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{a.explainCmd(), a.packCmd(), a.setValidityCmd(), a.supersedeCmd()} {
		c.GroupID = "mem"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{a.listCmd(), a.traceCmd(), a.addBatchCmd()} {
		c.GroupID = "mem"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{a.linkCmd(), a.unlinkCmd(), a.edgesCmd()} {
		c.GroupID = "graph"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{a.quarantineCmd(), a.learnCmd(), a.lessonCmd(), a.forgetSourceCmd(), a.auditCmd()} {
		c.GroupID = "govern"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{a.initCmd(), a.quickstartCmd(), a.configCmd(), a.benchCmd(), a.reembedCmd(), a.migrateCmd(), a.exportCmd(), a.importCmd(), a.pluginCmd(), a.setupCmd(), a.versionCmd()} {
		c.GroupID = "setup"
		root.AddCommand(c)
	}
	annotateOps(root)
	return root
}

// runE wraps a command's code: it marks the run as past argument parsing.
func (a *app) runE(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.ran = true
		return fn(cmd, args)
	}
}

// flagError says what a flag takes when its value does not parse, in place
// of the flag library's message, which quotes Go functions
// ("strconv.ParseInt: parsing "high": invalid syntax").
func flagError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	f := ive.GetFlag()
	var want string
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "count":
		want = "a whole number"
	case "float32", "float64":
		want = "a number"
	case "bool":
		want = "true or false"
	case "duration":
		want = "a duration such as 30s, 5m or 1h30m"
	case "intSlice", "int32Slice", "int64Slice", "uintSlice":
		want = "a list of whole numbers separated by commas"
	case "float32Slice", "float64Slice":
		want = "a list of numbers separated by commas"
	default:
		return fmt.Errorf("--%s %q: %w", f.Name, ive.GetValue(), errors.Unwrap(err))
	}
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("--%s %q is out of range", f.Name, ive.GetValue())
	}
	return fmt.Errorf("--%s %q is not %s", f.Name, ive.GetValue(), want)
}

// readE is runE for the commands that only read the store.
func (a *app) readE(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return a.runE(func(cmd *cobra.Command, args []string) error {
		a.readOnly = true
		return fn(cmd, args)
	})
}

// loadConfig computes the effective configuration. home, if not empty,
// overrides every other source of the home directory.
func (a *app) loadConfig(cmd *cobra.Command, home string) (*config.Config, error) {
	var flags []config.Flag
	pf := cmd.Root().PersistentFlags()
	for _, f := range []struct{ name, key, val string }{
		{"home", "home", a.home},
		{"namespace", "namespace", a.namespace},
		{"backend", "backend", a.backend},
		{"embedder", "embedder.name", a.embedder},
		{"postgres-dsn", "backends.postgres.dsn", a.postgresDSN},
	} {
		if pf.Changed(f.name) {
			flags = append(flags, config.Flag{Key: f.key, Name: "--" + f.name, Value: f.val})
		}
	}
	if home != "" {
		flags = append(flags, config.Flag{Key: "home", Name: "quickstart", Value: home})
	}
	return config.Load(config.Options{Env: a.environ, Flags: flags})
}

// vectorSnapshot is where the engine keeps its vector index between runs:
// next to the store, named after it.
func vectorSnapshot(cfg *config.Config) string {
	for _, v := range cfg.Values {
		if p, ok := v.Value.(string); ok && v.Key == "backends."+cfg.Backend+".path" && p != "" {
			return filepath.Clean(p) + ".vectors"
		}
	}
	return ""
}

// open opens the engine the configuration describes, creating the home
// directory if needed. The caller closes the engine.
func (a *app) open(ctx context.Context, cfg *config.Config) (*core.Engine, error) {
	if a.readOnly {
		if err := storeExists(cfg); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return nil, fmt.Errorf("create home directory: %w", err)
	}
	bd, err := core.LookupBackend(cfg.Backend)
	if err != nil {
		return nil, err
	}
	ed, err := core.LookupEmbedder(cfg.Embedder)
	if err != nil {
		return nil, err
	}
	b, err := bd.Open(ctx, cfg.BackendConfig)
	if err != nil {
		return nil, fmt.Errorf("open %s backend: %w", cfg.Backend, err)
	}
	emb, err := ed.Open(ctx, cfg.EmbedderConfig)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open %s embedder: %w", cfg.Embedder, err), b.Close())
	}
	xd, err := core.LookupExtractor(cfg.Extractor)
	var ext core.Extractor
	if err == nil {
		if ext, err = xd.Open(ctx, cfg.ExtractorConfig); err != nil {
			err = fmt.Errorf("open %s extractor: %w", cfg.Extractor, err)
		}
	}
	sd, serr := core.LookupSummarizer(cfg.Summarizer)
	var sum core.Summarizer
	if err == nil && serr == nil {
		if sum, err = sd.Open(ctx, cfg.SummarizerConfig); err != nil {
			err = fmt.Errorf("open %s summarizer: %w", cfg.Summarizer, err)
		}
	} else if err == nil {
		err = serr
	}
	if err != nil {
		for _, c := range []any{emb, ext} {
			if c, ok := c.(io.Closer); ok {
				err = errors.Join(err, c.Close())
			}
		}
		return nil, errors.Join(err, b.Close())
	}
	var rr core.Reranker
	if cfg.Reranker != "" {
		rd, err := core.LookupReranker(cfg.Reranker)
		if err == nil {
			rr, err = rd.Open(ctx, cfg.RerankerConfig)
		}
		if err != nil {
			errs := []error{fmt.Errorf("open %s reranker: %w", cfg.Reranker, err), b.Close()}
			for _, c := range []any{emb, ext, sum} {
				if c, ok := c.(io.Closer); ok {
					errs = append(errs, c.Close())
				}
			}
			return nil, errors.Join(errs...)
		}
	}
	eng, err := core.Open(ctx, core.Options{
		Backend:         b,
		Embedder:        emb,
		Namespace:       cfg.Namespace,
		VectorIndex:     cfg.VectorIndex,
		HNSWThreshold:   cfg.HNSWThreshold,
		VectorPrecision: cfg.VectorPrecision,
		Search:          cfg.Search,
		Govern:          cfg.Govern,

		AllowModelChange: a.allowModelChange,
		VectorSnapshot:   vectorSnapshot(cfg),
		Extractor:        ext,
		Summarizer:       sum,
		Consolidate:      cfg.Consolidate,
		Reranker:         rr,
	})
	if err != nil {
		// The engine owns backend and embedder only once it is open.
		errs := []error{err, b.Close()}
		for _, c := range []any{emb, ext, sum, rr} {
			if c, ok := c.(io.Closer); ok {
				errs = append(errs, c.Close())
			}
		}
		return nil, errors.Join(errs...)
	}
	return eng, nil
}

// storeExists checks that the configured store is there (a backend without
// a path, a database server, always is): a read of a missing store is an
// error naming the path, where opening it would create an empty one.
func storeExists(cfg *config.Config) error {
	path := storePath(cfg)
	if path == "" {
		return nil
	}
	_, err := os.Stat(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return nil // another problem: opening the store reports it
	}
	home := cfg.Home
	for _, v := range cfg.Values {
		if v.Key == "home" && v.Origin != "" {
			home += " from " + v.Origin
		}
	}
	return fmt.Errorf("%w: there is no memory store at %s (home %s); check --home and MEMOS_HOME, "+
		"or create the store by storing something (memos add, memos import)", core.ErrNotFound, path, home)
}

// withEngine loads the configuration, opens the engine, runs fn and closes
// the engine. Every write fn makes has committed when fn returns, so a close
// error cannot undo it: it is logged as a warning and the exit status stays
// that of fn, which tells whether the command's write was stored.
func (a *app) withEngine(cmd *cobra.Command, fn func(ctx context.Context, eng *core.Engine, cfg *config.Config) error) (err error) {
	cfg, err := a.loadConfig(cmd, "")
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	eng, err := a.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := eng.Close(); cerr != nil {
			slog.Warn("memos: closing the store failed; the command's result stands", "err", cerr)
		}
	}()
	return fn(ctx, eng, cfg)
}

// emit prints v as JSON with --json, else calls human.
func (a *app) emit(v any, human func(w io.Writer)) error {
	if a.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	var b strings.Builder
	human(&b)
	_, err := io.WriteString(a.stdout, escapeControls(b.String()))
	return err
}
