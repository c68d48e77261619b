// Package check holds the engine's checks of what callers give it that are
// not the memory model's own (driver's Validate): UTF-8 in JSON documents
// and free metadata, metadata's size, edges' defaults and embedders'
// vectors. Core's write path and import share them.
package check

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/memos-go/memos/core/driver"
)

// JSONUTF8 is core.CheckJSONUTF8: CheckUTF8 on every string of the JSON
// document doc, named by its path.
func JSONUTF8(doc []byte) error {
	if utf8.Valid(doc) && !bytes.Contains(doc, []byte(`\u`)) {
		return nil // the common case: nothing to look at
	}
	w := jsonWalker{b: doc}
	return w.value("")
}

// jsonWalker walks a valid JSON document, checking its strings.
type jsonWalker struct {
	b   []byte
	i   int
	buf []byte
}

func (w *jsonWalker) space() {
	for w.i < len(w.b) && (w.b[w.i] == ' ' || w.b[w.i] == '\t' || w.b[w.i] == '\n' || w.b[w.i] == '\r') {
		w.i++
	}
}

func (w *jsonWalker) value(path string) error {
	w.space()
	if w.i >= len(w.b) {
		return nil
	}
	switch w.b[w.i] {
	case '"':
		s := w.str()
		return driver.CheckUTF8(path, s)
	case '{':
		w.i++
		for {
			w.space()
			if w.i >= len(w.b) || w.b[w.i] != '"' {
				w.i++ // '}' (or invalid JSON: stop)
				return nil
			}
			key := w.str()
			name := "a field name"
			if path != "" {
				name = "a key of " + path
			}
			if err := driver.CheckUTF8(name, key); err != nil {
				return err
			}
			w.space()
			w.i++ // ':'
			child := key
			if path != "" {
				child = path + "." + key
			}
			if err := w.value(child); err != nil {
				return err
			}
			w.space()
			if w.i < len(w.b) && w.b[w.i] == ',' {
				w.i++
			}
		}
	case '[':
		w.i++
		for n := 0; ; n++ {
			w.space()
			if w.i >= len(w.b) || w.b[w.i] == ']' {
				w.i++
				return nil
			}
			if err := w.value(path + "[" + strconv.Itoa(n) + "]"); err != nil {
				return err
			}
			w.space()
			if w.i < len(w.b) && w.b[w.i] == ',' {
				w.i++
			}
		}
	default: // a number, true, false or null
		for w.i < len(w.b) && strings.IndexByte(",]} \t\r\n", w.b[w.i]) < 0 {
			w.i++
		}
		return nil
	}
}

// str decodes the string at w.i (its opening quote) keeping invalid bytes
// as they are and a \u escape of half a surrogate pair as the three bytes
// UTF-8 would give it, which no valid UTF-8 holds.
func (w *jsonWalker) str() string {
	w.buf = w.buf[:0]
	w.i++
	for w.i < len(w.b) && w.b[w.i] != '"' {
		c := w.b[w.i]
		w.i++
		if c != '\\' || w.i >= len(w.b) {
			w.buf = append(w.buf, c)
			continue
		}
		c = w.b[w.i]
		w.i++
		switch c {
		case 'b':
			w.buf = append(w.buf, '\b')
		case 'f':
			w.buf = append(w.buf, '\f')
		case 'n':
			w.buf = append(w.buf, '\n')
		case 'r':
			w.buf = append(w.buf, '\r')
		case 't':
			w.buf = append(w.buf, '\t')
		case 'u':
			w.buf = w.appendEscape(w.buf)
		default: // \", \\, \/
			w.buf = append(w.buf, c)
		}
	}
	w.i++ // the closing quote
	return string(w.buf)
}

// appendEscape appends the character of the \u escape whose digits are at
// w.i, reading the low half of a surrogate pair when one follows.
func (w *jsonWalker) appendEscape(buf []byte) []byte {
	r, ok := w.hex4()
	if !ok {
		return buf
	}
	if r >= 0xD800 && r < 0xDC00 && w.i+1 < len(w.b) && w.b[w.i] == '\\' && w.b[w.i+1] == 'u' {
		save := w.i
		w.i += 2
		if r2, ok := w.hex4(); ok && r2 >= 0xDC00 && r2 <= 0xDFFF {
			return utf8.AppendRune(buf, utf16.DecodeRune(r, r2))
		}
		w.i = save
	}
	if utf16.IsSurrogate(r) {
		return append(buf, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	}
	return utf8.AppendRune(buf, r)
}

// hex4 reads the four hex digits of a \u escape.
func (w *jsonWalker) hex4() (rune, bool) {
	if w.i+4 > len(w.b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(w.b[w.i:w.i+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	w.i += 4
	return rune(n), true
}

// valueUTF8 applies CheckUTF8 to the strings in v (free metadata:
// maps, slices and strings at any depth), naming each by its path.
func valueUTF8(path string, v any) error {
	switch x := v.(type) {
	case string:
		return driver.CheckUTF8(path, x)
	case []string:
		for i, s := range x {
			if err := driver.CheckUTF8(path+"["+strconv.Itoa(i)+"]", s); err != nil {
				return err
			}
		}
	case []any:
		for i, y := range x {
			if err := valueUTF8(path+"["+strconv.Itoa(i)+"]", y); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if err := driver.CheckUTF8("a key of "+path, k); err != nil {
				return err
			}
			if err := valueUTF8(path+"."+k, x[k]); err != nil {
				return err
			}
		}
	}
	return nil
}
