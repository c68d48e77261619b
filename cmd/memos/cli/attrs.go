package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
)

// attrFlags are the memory attributes add and update accept.
type attrFlags struct {
	fs           *pflag.FlagSet
	typ, pool    string
	significance int
	entities     []string
	source       string
	session      string
	trust        string
	trustScore   float64
	validFrom    string
	validTo      string
	emotion      string
	meta         []string
	status       string
}

// attrRenamed are the old names of attribute flags.
var attrRenamed = map[string]string{"emotion": "emotional-context", "meta": "metadata"}

func (a *app) addAttrFlags(cmd *cobra.Command) *attrFlags {
	defer a.renamed(cmd, attrRenamed)
	f := &attrFlags{fs: cmd.Flags()}
	fs := f.fs
	fs.StringVarP(&f.typ, "type", "t", "", "memory type: fact, preference, event, relationship, turn, document, lesson, knowledge, note (default fact)")
	fs.StringVar(&f.pool, "pool", "", "pool: raw, memory, knowledge (default: the type's pool)")
	fs.IntVarP(&f.significance, "significance", "s", 0, "significance 1–10: 1–2 passing, 3–4 context, 5–6 important, 7–8 key, 9–10 core (default 5)")
	fs.StringSliceVarP(&f.entities, "entities", "e", nil, "entity names, comma-separated (e.g. Alice,Proxmox)")
	fs.StringVar(&f.source, "source", "", "where it came from (e.g. conversation:42#turn-7, file:notes.md)")
	fs.StringVar(&f.session, "session", "", "the conversation or run it belongs to")
	fs.StringVar(&f.trust, "trust", "", "trust level: certain, inferred, imported, contradicted (default inferred)")
	fs.Float64Var(&f.trustScore, "trust-score", 0, "trust score in [0,1] (default: the level's)")
	fs.StringVar(&f.validFrom, "valid-from", "", "true since (RFC3339 or YYYY-MM-DD)")
	fs.StringVar(&f.validTo, "valid-to", "", `true until (RFC3339 or YYYY-MM-DD; "" on update clears it)`)
	fs.StringVar(&f.emotion, "emotional-context", "", "how the user felt (e.g. frustrated, excited)")
	fs.StringArrayVar(&f.meta, "metadata", nil, "metadata key=value (repeatable; on update, key= removes the key)")
	fs.StringVar(&f.status, "status", "", "status: active, archived or quarantined (held for review, invisible to recall)")
	return f
}

func (f *attrFlags) changed(name string) bool { return f.fs.Changed(name) }

// update sets the fields of in that the flags given change. A text flag
// given as "" clears its attribute; --metadata key= removes key.
func (f *attrFlags) update(in *api.UpdateIn) error {
	text := func(name, v string) *string {
		if !f.changed(name) {
			return nil
		}
		return &v
	}
	in.EmotionalContext, in.Source, in.Session = text("emotional-context", f.emotion), text("source", f.source), text("session", f.session)
	in.ValidFrom, in.ValidTo = text("valid-from", f.validFrom), text("valid-to", f.validTo)
	in.Type, in.Pool, in.Trust, in.Status = core.Type(f.typ), core.Pool(f.pool), core.TrustLevel(f.trust), core.Status(f.status)
	if f.changed("significance") {
		in.Significance = &f.significance
	}
	if f.changed("entities") {
		in.Entities = &f.entities
	}
	if f.changed("trust-score") {
		in.TrustScore = &f.trustScore
	}
	if f.changed("metadata") {
		in.Metadata = map[string]any{}
		return applyMeta(in.Metadata, f.meta, true)
	}
	return nil
}

// applyMeta sets key=value pairs in md; with allowDelete, "key=" sets key
// to nil, which the update operation reads as "remove key".
func applyMeta(md map[string]any, pairs []string, allowDelete bool) error {
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return core.Invalidf("--metadata %q: want key=value", kv)
		}
		if err := core.CheckUTF8("--metadata "+strconv.Quote(kv), kv); err != nil {
			return err
		}
		if v == "" && allowDelete {
			md[k] = nil // the update operation removes a key given null
			continue
		}
		md[k] = v
	}
	return nil
}

// parseTime reads the value of --flag: an RFC3339 time or a YYYY-MM-DD date
// (midnight UTC); "" is the zero time.
func parseTime(flag, s string) (time.Time, error) { return api.ParseTime("--"+flag, s) }

// parseID reads a memory id ("2" or "#2").
func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(s), "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, core.Invalidf("memory id %q is not a positive integer", s)
	}
	return id, nil
}

// parseVersion reads a version number.
func parseVersion(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v <= 0 {
		return 0, core.Invalidf("version %q is not a positive integer", s)
	}
	return v, nil
}

// content returns the content argument, reading standard input for "-".
// Input longer than core.MaxContentBytes is rejected without reading it all.
func (a *app) content(arg string) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	b, err := io.ReadAll(io.LimitReader(a.stdin, core.MaxContentBytes+2))
	if err != nil {
		return "", fmt.Errorf("read content from standard input: %w", err)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if len(s) > core.MaxContentBytes {
		return "", core.Invalidf("content on standard input is over the limit of %d bytes; split it into several memories", core.MaxContentBytes)
	}
	return s, nil
}
