package dataset

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/driver"
)

// lmeTimeLayout is how LongMemEval writes dates: "2023/05/20 (Sat) 16:16".
const lmeTimeLayout = "2006/01/02 (Mon) 15:04"

type lmeRecord struct {
	QuestionID         string   `json:"question_id"`
	QuestionType       string   `json:"question_type"`
	Question           string   `json:"question"`
	QuestionDate       string   `json:"question_date"`
	HaystackSessionIDs []string `json:"haystack_session_ids"`
	HaystackDates      []string `json:"haystack_dates"`
	HaystackSessions   [][]struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		HasAnswer bool   `json:"has_answer"`
	} `json:"haystack_sessions"`
}

// LoadLongMemEval reads a LongMemEval file, gzipped or not; see
// ReadLongMemEval.
func LoadLongMemEval(path string, opts Options) (*Dataset, error) {
	f, err := openData(path)
	if err != nil {
		return nil, fmt.Errorf("longmemeval: %w", err)
	}
	defer f.Close()
	d, err := ReadLongMemEval(f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// ReadLongMemEval reads LongMemEval questions (a JSON list). Each question
// brings its own haystack of sessions, so each is its own corpus with one
// query: LongMemEval measures retrieval within the question's haystack, and
// a fresh store per question keeps keyword statistics to that haystack.
// Options.MaxCorpora limits the number of questions, which is what bounds
// the cost (about 500 turns to ingest per question); the file is read as a
// stream and not further than needed.
//
// Every user and assistant turn is a raw memory (type turn) keyed
// "<session_id>_<1-based index in the session>", with its session, its
// session's date as event time, source "longmemeval:<question_id>#<key>"
// and the role in metadata. Empty turns (nothing but white space or
// invisible characters) are skipped (their index is still
// counted). The query's Time is its question_date. The query is labelled with the turns marked has_answer;
// abstention questions (id ending in "_abs") have no evidence and are
// timed, not scored.
func ReadLongMemEval(r io.Reader, opts Options) (*Dataset, error) {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf("%w: longmemeval: not a JSON list of questions", core.ErrInvalid)
	}
	d := &Dataset{Name: "longmemeval"}
	var abstain, unlabelled, badDates int
	for dec.More() {
		if opts.MaxCorpora > 0 && len(d.Corpora) == opts.MaxCorpora {
			break
		}
		var rec lmeRecord
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("%w: longmemeval: question %d: %v", core.ErrInvalid, len(d.Corpora)+1, err)
		}
		if rec.QuestionID == "" {
			return nil, fmt.Errorf("%w: longmemeval: question %d has no question_id", core.ErrInvalid, len(d.Corpora)+1)
		}
		if n := len(rec.HaystackSessions); n != len(rec.HaystackSessionIDs) || (len(rec.HaystackDates) != 0 && len(rec.HaystackDates) != n) {
			return nil, fmt.Errorf("%w: longmemeval: question %s has %d sessions, %d session ids and %d dates; they must match",
				core.ErrInvalid, rec.QuestionID, n, len(rec.HaystackSessionIDs), len(rec.HaystackDates))
		}
		c := Corpus{Name: rec.QuestionID}
		q := Query{ID: rec.QuestionID, Text: rec.Question, Category: rec.QuestionType}
		if rec.QuestionDate != "" {
			t, err := time.Parse(lmeTimeLayout, strings.TrimSpace(rec.QuestionDate))
			if err != nil {
				badDates++
			}
			q.Time = t
		}
		seen := map[string]bool{}
		for si, sess := range rec.HaystackSessions {
			sid := rec.HaystackSessionIDs[si]
			var when time.Time
			if len(rec.HaystackDates) > 0 {
				t, err := time.Parse(lmeTimeLayout, strings.TrimSpace(rec.HaystackDates[si]))
				if err != nil {
					badDates++
				}
				when = t
			}
			for ti, turn := range sess {
				key := fmt.Sprintf("%s_%d", sid, ti+1)
				content, _ := clip(turn.Content)
				// A turn memos would refuse (only whitespace or invisible
				// characters, such as a lone zero-width space) is no memory.
				if driver.ValidateContent(content) != nil || seen[key] {
					continue
				}
				seen[key] = true
				in := core.Input{
					Content:   content,
					Type:      core.TypeTurn,
					Source:    "longmemeval:" + rec.QuestionID + "#" + key,
					Session:   sid,
					ValidFrom: when,
				}
				if turn.Role != "" {
					in.Metadata = map[string]any{"role": turn.Role}
				}
				c.Docs = append(c.Docs, Doc{Key: key, Input: in})
				if turn.HasAnswer && !strings.HasSuffix(rec.QuestionID, "_abs") {
					if q.Relevant == nil {
						q.Relevant = map[string]float64{}
					}
					q.Relevant[key] = 1
				}
			}
		}
		switch {
		case strings.HasSuffix(rec.QuestionID, "_abs"):
			abstain++
		case !q.Labelled():
			unlabelled++
		}
		if strings.TrimSpace(q.Text) != "" {
			c.Queries = []Query{q}
		}
		d.Corpora = append(d.Corpora, c)
	}
	if len(d.Corpora) == 0 {
		return nil, fmt.Errorf("%w: longmemeval: the file holds no questions", core.ErrInvalid)
	}
	d.Notes = append(d.Notes, fmt.Sprintf("longmemeval: %d questions, each its own store; %d abstention questions timed but not scored", len(d.Corpora), abstain))
	if unlabelled > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("longmemeval: %d questions have no turn marked has_answer, not scored", unlabelled))
	}
	if badDates > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("longmemeval: %d session dates unreadable; their turns have no event time", badDates))
	}
	return d, nil
}
