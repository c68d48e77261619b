package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memos-go/memos/cmd/memos/cli"
)

// cliPage renders the command tree: the global flags, then every command by
// group, each with its usage, help text and flags.
func cliPage() string {
	root := cli.Tree()
	var b strings.Builder
	b.WriteString("# CLI reference\n\n")
	b.WriteString("Every `memos` command, generated from the command tree (`memos <command> --help` prints the same). " +
		"How the commands fit together: [the CLI guide](../cli.md).\n\n")
	fmt.Fprintf(&b, "```text\n%s\n```\n\n", strings.TrimSpace(root.Long))

	b.WriteString("## Global flags\n\nEvery command takes these.\n\n")
	flagTable(&b, root.PersistentFlags())

	groups := map[string][]*cobra.Command{}
	for _, c := range root.Commands() {
		if documented(c) {
			groups[c.GroupID] = append(groups[c.GroupID], c)
		}
	}
	titles := []struct{ id, title string }{}
	for _, g := range root.Groups() {
		titles = append(titles, struct{ id, title string }{g.ID, strings.TrimSuffix(g.Title, ":")})
	}
	titles = append(titles, struct{ id, title string }{"", "Other commands"})

	b.WriteString("## Commands\n\n")
	for _, g := range titles {
		if len(groups[g.id]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s:", g.title)
		for i, c := range groups[g.id] {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(&b, "%s [%s](#%s)", sep, c.Name(), anchor(c.CommandPath()))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for _, g := range titles {
		if len(groups[g.id]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n", g.title)
		for _, c := range groups[g.id] {
			command(&b, c)
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// documented reports whether c belongs in the reference.
func documented(c *cobra.Command) bool {
	return !c.Hidden && c.Deprecated == "" && c.Name() != "help"
}

func command(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, "### %s\n\n", c.CommandPath())
	if c.Short != "" {
		fmt.Fprintf(b, "%s.\n\n", strings.TrimSuffix(c.Short, "."))
	}
	fmt.Fprintf(b, "```text\n%s\n", c.UseLine())
	if len(c.Aliases) > 0 {
		fmt.Fprintf(b, "\nAliases: %s\n", strings.Join(c.Aliases, ", "))
	}
	if long := strings.TrimSpace(c.Long); long != "" && long != strings.TrimSpace(c.Short) {
		fmt.Fprintf(b, "\n%s\n", long)
	}
	if ex := strings.TrimRight(c.Example, " \n"); ex != "" {
		fmt.Fprintf(b, "\nExamples:\n%s\n", ex)
	}
	b.WriteString("```\n\n")
	var subs []*cobra.Command
	for _, s := range c.Commands() {
		if documented(s) {
			subs = append(subs, s)
		}
	}
	if len(subs) > 0 {
		b.WriteString("Subcommands:")
		for i, s := range subs {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(b, "%s [%s](#%s)", sep, s.Name(), anchor(s.CommandPath()))
		}
		b.WriteString(".\n\n")
	}
	if c.HasAvailableLocalFlags() {
		flagTable(b, c.LocalNonPersistentFlags())
	}
	for _, s := range subs {
		command(b, s)
	}
}

func flagTable(b *strings.Builder, fs *pflag.FlagSet) {
	var rows []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		typ, usage := pflag.UnquoteUsage(f)
		if typ != "" {
			name += " " + typ
		}
		def := f.DefValue
		switch def {
		case "", "false", "0", "[]":
			def = ""
		}
		if f.NoOptDefVal != "" && f.Value.Type() != "bool" {
			usage += fmt.Sprintf(" (given without a value: %s)", f.NoOptDefVal)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s |", code(name), code(def), cell(usage)))
	})
	if len(rows) == 0 {
		return
	}
	b.WriteString("| Flag | Default | Meaning |\n|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n"))
	b.WriteString("\n\n")
}
