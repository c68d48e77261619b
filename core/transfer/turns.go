package transfer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/memos-go/memos/core"
)

// maxTurnLine bounds one line of a conversation: a turn longer than a
// memory's content cannot be stored anyway.
const maxTurnLine = 4 * core.MaxContentBytes

// ReadTurns reads a conversation for Engine.Capture in one of two forms,
// told apart by the first non-blank line:
//
//   - JSONL: one {"speaker": …, "text": …, "time": …} object per line (time
//     optional: RFC 3339, "YYYY-MM-DD HH:MM:SS", a date, or Unix seconds);
//   - plain text: one turn per line, "Speaker: text" or just the text.
//
// Blank lines are skipped. An error names the line.
func ReadTurns(r io.Reader) ([]core.Turn, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxTurnLine)
	var turns []core.Turn
	jsonl, n := false, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if len(turns) == 0 {
			jsonl = strings.HasPrefix(line, "{")
		}
		if !jsonl {
			t := core.Turn{Text: line}
			if sp, text, ok := strings.Cut(line, ": "); ok && sp != "" && len(sp) <= 64 && !strings.ContainsAny(sp, ".!?") {
				t.Speaker, t.Text = strings.TrimSpace(sp), strings.TrimSpace(text)
			}
			turns = append(turns, t)
			continue
		}
		var raw struct {
			Speaker string          `json:"speaker"`
			Text    string          `json:"text"`
			Time    json.RawMessage `json:"time"`
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("line %d: %w: want {\"speaker\",\"text\",\"time\"}: %v", n, core.ErrInvalid, err)
		}
		if err := core.CheckJSONUTF8([]byte(line)); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		t := core.Turn{Speaker: strings.TrimSpace(raw.Speaker), Text: strings.TrimSpace(raw.Text)}
		if len(raw.Time) > 0 && string(raw.Time) != "null" {
			var v any
			if err := json.Unmarshal(raw.Time, &v); err != nil {
				return nil, fmt.Errorf("line %d: %w: time: %v", n, core.ErrInvalid, err)
			}
			tm, err := parseTime(v)
			if err != nil {
				return nil, fmt.Errorf("line %d: time: %w", n, err)
			}
			t.Time = tm
		}
		if t.Text == "" {
			return nil, fmt.Errorf("line %d: %w: the turn has no text", n, core.ErrInvalid)
		}
		turns = append(turns, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	if len(turns) == 0 {
		return nil, fmt.Errorf("%w: the conversation has no turns", core.ErrInvalid)
	}
	return turns, nil
}
