package config

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/maps"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/driver"
)

// field is one settable leaf of a module's config struct.
type field struct {
	key   string // dotted config key below the section, e.g. "busy_timeout"
	index []int  // reflect field index path
	typ   reflect.Type
	owner reflect.Type // the struct that declares the field
	name  string       // the field's Go name in owner
}

// Setting is one leaf of a config struct as the loader reads it, for tools
// that describe the configuration (the reference's generator).
type Setting struct {
	Key   string       // dotted key below the section, e.g. "hnsw.ef_search"
	Index []int        // reflect field index path from the struct
	Type  reflect.Type // the leaf's type
	Owner reflect.Type // the struct that declares it
	Name  string       // its Go field name in Owner
}

// Settings lists the leaves of struct type t by the loader's rules: a key
// is the koanf tag or the field name in snake_case; squashed and nested
// structs are walked.
func Settings(t reflect.Type) []Setting {
	fs := fieldsOf(t)
	out := make([]Setting, len(fs))
	for i, f := range fs {
		out[i] = Setting{Key: f.key, Index: f.index, Type: f.typ, Owner: f.owner, Name: f.name}
	}
	return out
}

var (
	durationType        = reflect.TypeFor[time.Duration]()
	timeType            = reflect.TypeFor[time.Time]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// fieldsOf lists the settable leaves of struct type t (or *t). A field's key
// is its koanf tag or, without one, its name in snake_case.
func fieldsOf(t reflect.Type) []field {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []field
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("koanf"), ",")
			if name == "-" {
				continue
			}
			idx := append(append([]int(nil), index...), i)
			ft := f.Type
			if strings.Contains(opts, "squash") && ft.Kind() == reflect.Struct {
				walk(ft, prefix, idx)
				continue
			}
			if name == "" {
				name = snake(f.Name)
			}
			key := prefix + name
			if ft.Kind() == reflect.Struct && ft != timeType && !reflect.PointerTo(ft).Implements(textUnmarshalerType) {
				walk(ft, key+".", idx)
				continue
			}
			out = append(out, field{key: key, index: idx, typ: ft, owner: t, name: f.Name})
		}
	}
	walk(t, "", nil)
	return out
}

// hasKey reports whether the config value v has a setting named key.
func hasKey(v any, key string) bool {
	for _, f := range fieldsOf(reflect.TypeOf(v)) {
		if normalize(f.key) == normalize(key) {
			return true
		}
	}
	return false
}

// snake turns a Go field name into snake_case: BusyTimeout → busy_timeout,
// BaseURL → base_url.
func snake(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		upper := r >= 'A' && r <= 'Z'
		if upper && i > 0 {
			prevLower := rs[i-1] >= 'a' && rs[i-1] <= 'z' || rs[i-1] >= '0' && rs[i-1] <= '9'
			nextLower := i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z'
			if prevLower || (nextLower && rs[i-1] >= 'A' && rs[i-1] <= 'Z') {
				b.WriteByte('_')
			}
		}
		if upper {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// normalize makes key matching insensitive to case, "_" and "-", so that
// busy_timeout, busytimeout and BusyTimeout name the same field.
func normalize(k string) string {
	return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(k))
}

func decodeInto(in any, out any, md *mapstructure.Metadata) error {
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.TextUnmarshallerHookFunc()),
		WeaklyTypedInput: true,
		Metadata:         md,
		Result:           out,
		TagName:          "koanf",
		MatchName:        func(mapKey, fieldName string) bool { return normalize(mapKey) == normalize(fieldName) },
	})
	if err != nil {
		return err
	}
	return d.Decode(in)
}

func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// decode decodes the section at prefix strictly into a fresh value from
// newCfg. Each key is first decoded on its own, so that an unknown key or a
// bad value is reported with its full name and the layer that set it.
func (ld *loader) decode(prefix string, newCfg func() any) (any, []Value, error) {
	fields := fieldsOf(reflect.TypeOf(newCfg()))
	sub := ld.merged.Cut(prefix)
	for _, k := range sub.Keys() {
		v := sub.Get(k)
		if isEmpty(v) {
			continue
		}
		full := prefix + "." + k
		var md mapstructure.Metadata
		err := decodeInto(maps.Unflatten(map[string]any{k: v}, "."), newCfg(), &md)
		if err == nil && len(md.Unused) == 0 {
			continue
		}
		if err == nil {
			known := make([]string, len(fields))
			for i, f := range fields {
				known[i] = f.key
			}
			where := ld.where(full)
			if u := md.Unused[0]; strings.Contains(u, "[") {
				full = prefix + "." + u // a key inside a list item, e.g. server.tokens[0].tokn
			}
			msg := fmt.Sprintf("unknown key %q", full)
			if len(known) > 0 {
				msg += fmt.Sprintf(" (%s takes: %s)", prefix, strings.Join(known, ", "))
			} else {
				msg += fmt.Sprintf(" (%s takes no settings)", prefix)
			}
			return nil, nil, &Error{Where: where, Msg: msg, Err: core.ErrInvalid}
		}
		want := "a different type"
		for _, f := range fields {
			if nk := normalize(k); nk == normalize(f.key) || strings.HasPrefix(nk, normalize(f.key)+".") {
				want = describe(f.typ)
			}
		}
		return nil, nil, &Error{Where: ld.where(full), Msg: fmt.Sprintf("%s: cannot use %#v, want %s", full, v, want), Err: core.ErrInvalid}
	}
	out := newCfg()
	var md mapstructure.Metadata
	if err := decodeInto(sub.Raw(), out, &md); err != nil {
		return nil, nil, &Error{Where: ld.whereAny(prefix), Msg: prefix + ": " + err.Error(), Err: core.ErrInvalid}
	}
	rv := reflect.ValueOf(out)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	values := make([]Value, 0, len(fields))
	defaults := sectionDefaults(prefix)
	if d, ok := newCfg().(driver.Defaulter); ok && defaults == nil {
		d.Defaults() // a module's config that tells its defaults
		defaults = d
	}
	def := reflect.ValueOf(defaults)
	for def.Kind() == reflect.Pointer {
		def = def.Elem()
	}
	for _, f := range fields {
		full := prefix + "." + f.key
		fv := rv.FieldByIndex(f.index)
		setKey := ld.setKey(full)
		var shown any
		switch {
		case setKey != "" || !fv.IsZero():
			shown = display(f.key, fv)
		case def.IsValid():
			dv := def.FieldByIndex(f.index)
			if dv.Kind() == reflect.Slice && dv.IsNil() {
				dv = reflect.MakeSlice(dv.Type(), 0, 0) // none: [], not null
			}
			shown = display(f.key, dv)
		}
		val := Value{Key: full, Value: shown, Source: SourceDefault}
		if setKey != "" {
			_, l := ld.top(setKey)
			val.Source, val.Origin = l.src, l.originOf(setKey)
		}
		values = append(values, val)
	}
	return out, values, nil
}

// setKey returns the key, as written in some layer, that sets the field
// full (or a key inside it, for map fields); "" when nothing sets it.
func (ld *loader) setKey(full string) string {
	nf := normalize(full)
	for _, k := range ld.merged.Keys() {
		if nk := normalize(k); (nk == nf || strings.HasPrefix(nk, nf+".")) && !isEmpty(ld.merged.Get(k)) {
			return k
		}
	}
	return ""
}

// display renders a field value for `config show`, hiding secrets: a
// field whose last key segment is key, token, secret or password, and the
// entries of a map whose names say the same.
func display(key string, v reflect.Value) any {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if secret(key) && !v.IsZero() && !(v.Kind() == reflect.Slice && v.Len() == 0) {
		return "********"
	}
	switch {
	case v.Type() == durationType:
		return core.FormatDuration(time.Duration(v.Int()))
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := it.Key().String()
			out[k] = display(k, it.Value())
		}
		return out
	}
	return v.Interface()
}

// secret reports whether a setting named key holds a secret.
func secret(key string) bool {
	segs := strings.FieldsFunc(strings.ToLower(key), func(r rune) bool { return r == '_' || r == '.' || r == '-' })
	if len(segs) == 0 {
		return false
	}
	switch segs[len(segs)-1] {
	case "key", "apikey", "token", "tokens", "secret", "password", "passwd", "credentials":
		return true
	}
	return false
}

// describe says in words what a value of type t looks like.
func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		return "a duration such as 30s or 720h"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Map:
		return "a map"
	}
	return t.String()
}
