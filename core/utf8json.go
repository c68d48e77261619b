package core

import (
	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/check"
)

// CheckUTF8 is the one UTF-8 rule of every surface: text that is not valid
// UTF-8 is ErrInvalid naming field and the position (1-based) of the first
// bad byte, e.g. "content is not valid UTF-8 (byte 5)".
var CheckUTF8 = driver.CheckUTF8

// CheckJSONUTF8 applies CheckUTF8 to every string of the JSON document doc,
// object keys and values at any depth, naming a value by its path
// (content, memories[2].content, metadata.mood) and counting bytes in its
// decoded text. Front-ends and importers call it on what they decode:
// encoding/json would otherwise turn invalid bytes, and \u escapes of half
// a surrogate pair, into U+FFFD without a word. doc must be valid JSON
// (decode it first); what is not is not reported here.
func CheckJSONUTF8(doc []byte) error { return check.JSONUTF8(doc) }
