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

// attrNames lists the flags addAttrFlags defines.
var attrNames = []string{"type", "pool", "significance", "entities", "source", "session",
	"trust", "trust-score", "valid-from", "valid-to", "emotional-context", "metadata", "status"}

// anyChanged reports whether any attribute flag was set.
func (f *attrFlags) anyChanged() bool {
	for _, n := range attrNames {
		if f.changed(n) {
			return true
		}
	}
	return false
}

// checkSignificance rejects an explicit significance outside 1–10 (the
// engine reads 0 as "the default").
func (f *attrFlags) checkSignificance() error {
	if f.changed("significance") && (f.significance < 1 || f.significance > 10) {
		return core.Invalidf("--significance %d is outside 1–10", f.significance)
	}
	return nil
}

// input builds the Input for add.
func (f *attrFlags) input(content string) (core.Input, error) {
	in := core.Input{
		Content:          content,
		Type:             core.Type(f.typ),
		Pool:             core.Pool(f.pool),
		Significance:     f.significance,
		Entities:         f.entities,
		Source:           f.source,
		Session:          f.session,
		TrustLevel:       core.TrustLevel(f.trust),
		EmotionalContext: f.emotion,
	}
	if err := f.checkSignificance(); err != nil {
		return in, err
	}
	if f.changed("type") {
		if _, err := core.ParseType(f.typ); err != nil {
			return in, err
		}
	}
	if f.changed("pool") {
		if _, err := core.ParsePool(f.pool); err != nil {
			return in, err
		}
	}
	if f.changed("trust") {
		if _, err := core.ParseTrustLevel(f.trust); err != nil {
			return in, err
		}
	}
	if f.changed("trust-score") {
		in.TrustScore = &f.trustScore
	}
	if f.changed("status") {
		st, err := core.ParseStatus(f.status)
		if err != nil {
			return in, err
		}
		in.Status = st
	}
	var err error
	if in.ValidFrom, err = parseTime("valid-from", f.validFrom); err != nil {
		return in, err
	}
	if in.ValidTo, err = parseTime("valid-to", f.validTo); err != nil {
		return in, err
	}
	if len(f.meta) > 0 {
		in.Metadata = map[string]any{}
		if err := applyMeta(in.Metadata, f.meta, false); err != nil {
			return in, err
		}
	}
	return in, nil
}

// patch builds the Patch for update from the flags that were set. cur is the
// current metadata, which --metadata changes key by key.
func (f *attrFlags) patch(content *string, cur func() (map[string]any, error)) (core.Patch, error) {
	p := core.Patch{Content: content}
	if err := f.checkSignificance(); err != nil {
		return p, err
	}
	if f.changed("type") {
		t, err := core.ParseType(f.typ)
		if err != nil {
			return p, err
		}
		p.Type = &t
	}
	if f.changed("pool") {
		pl, err := core.ParsePool(f.pool)
		if err != nil {
			return p, err
		}
		p.Pool = &pl
	}
	if f.changed("significance") {
		p.Significance = &f.significance
	}
	if f.changed("entities") {
		p.Entities = &f.entities
	}
	if f.changed("source") {
		p.Source = &f.source
	}
	if f.changed("session") {
		p.Session = &f.session
	}
	if f.changed("emotional-context") {
		p.EmotionalContext = &f.emotion
	}
	if f.changed("trust") {
		l, err := core.ParseTrustLevel(f.trust)
		if err != nil {
			return p, err
		}
		p.TrustLevel = &l
	}
	if f.changed("trust-score") {
		p.TrustScore = &f.trustScore
	}
	if f.changed("status") {
		st, err := core.ParseStatus(f.status)
		if err != nil {
			return p, err
		}
		p.Status = &st
	}
	for _, d := range []struct {
		name string
		val  string
		dst  **time.Time
	}{{"valid-from", f.validFrom, &p.ValidFrom}, {"valid-to", f.validTo, &p.ValidTo}} {
		if !f.changed(d.name) {
			continue
		}
		t, err := parseTime(d.name, d.val)
		if err != nil {
			return p, err
		}
		*d.dst = &t
	}
	if f.changed("metadata") {
		md, err := cur()
		if err != nil {
			return p, err
		}
		next := make(map[string]any, len(md)+len(f.meta))
		for k, v := range md {
			next[k] = v
		}
		if err := applyMeta(next, f.meta, true); err != nil {
			return p, err
		}
		p.Metadata = &next
	}
	return p, nil
}

// applyMeta sets key=value pairs in md; with allowDelete, "key=" removes key.
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
			delete(md, k)
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
