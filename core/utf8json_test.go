package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memos-go/memos/core"
)

// CheckJSONUTF8 names the first string that is not valid UTF-8 by its path
// and counts bytes in its decoded text; what encoding/json decodes
// faithfully passes.
func TestCheckJSONUTF8(t *testing.T) {
	cases := []struct{ doc, want string }{
		{`{"content":"café","n":1.5e3,"ok":true,"none":null,"list":[1,"x",{}]}`, ""},
		{`{"content":"caf\u00e9 \ud83d\ude00 \"q\" \\u \/"}`, ""}, // escapes, a surrogate pair, an escaped backslash
		{"{\"content\":\"ab\xffcd\"}", "content is not valid UTF-8 (byte 3)"},
		{"{\"content\":\"\\n\\u00e9\xc3\"}", "content is not valid UTF-8 (byte 4)"}, // \n is 1 byte, é 2
		{`{"content":"x\ud800y"}`, "content is not valid UTF-8 (byte 2)"},           // half a pair
		{`{"content":"\udc00"}`, "content is not valid UTF-8 (byte 1)"},             // a lone low half
		{`{"content":"\ud800\u0041"}`, "content is not valid UTF-8 (byte 1)"},       // high half, no low one
		{"{\"memories\":[{\"content\":\"fine\"},{\"content\":\"\xe2\x82\"}]}", "memories[1].content is not valid UTF-8 (byte 1)"},
		{"{\"metadata\":{\"tags\":[\"a\",{\"deep\":\"\xff\"}]}}", "metadata.tags[1].deep is not valid UTF-8 (byte 1)"},
		{"{\"metadata\":{\"k\xff\":1}}", "a key of metadata is not valid UTF-8 (byte 2)"},
		{"{\"k\xff\":1}", "a field name is not valid UTF-8 (byte 2)"},
		{"[\"ok\",\"\xff\"]", "[1] is not valid UTF-8 (byte 1)"},
	}
	for _, c := range cases {
		err := core.CheckJSONUTF8([]byte(c.doc))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v, want no error", c.doc, err)
		case c.want != "" && (!errors.Is(err, core.ErrInvalid) || err.Error() != "invalid input: "+c.want):
			t.Errorf("%q: %v, want %q", c.doc, err, c.want)
		}
	}
}

// The library applies the same rule: metadata is checked at any depth
// (encoding it as JSON would otherwise replace the bad bytes), and every
// field names itself.
func TestInvalidUTF8Rejected(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t)
	cases := []struct {
		in   core.Input
		want string
	}{
		{core.Input{Content: "caf\xe9"}, "content is not valid UTF-8 (byte 4)"},
		{core.Input{Content: "ok", Metadata: map[string]any{"mood": []any{"fine", "\xff"}}}, "metadata.mood[1] is not valid UTF-8 (byte 1)"},
		{core.Input{Content: "ok", Entities: []string{"Alice", "B\xffb"}}, "entities[1] is not valid UTF-8 (byte 2)"},
		{core.Input{Content: "ok", Source: "file:\xff"}, "source is not valid UTF-8 (byte 6)"},
	}
	for _, c := range cases {
		_, err := e.Remember(ctx, c.in)
		if !errors.Is(err, core.ErrInvalid) || err.Error() != "remember: invalid input: "+c.want {
			t.Errorf("remember %+v: %v, want %q", c.in, err, c.want)
		}
	}
	if st, err := e.Stats(ctx); err != nil || st.Memories != 0 {
		t.Fatalf("rejected memories were stored: %+v %v", st, err)
	}
}
