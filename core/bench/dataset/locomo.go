package dataset

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memos-go/memos/core"
)

// LoCoMo question categories, by their number in the data.
var locomoCategories = map[int]string{
	1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial",
}

// locomoAdversarial is the category whose questions have no answer in the
// conversation; they are timed but never scored.
const locomoAdversarial = 5

var (
	locomoSessionKey = regexp.MustCompile(`^session_(\d+)$`)
	locomoEvidence   = regexp.MustCompile(`D\d+:\d+`)
)

// locomoTimeLayout is how LoCoMo writes session times: "1:56 pm on 8 May, 2023".
const locomoTimeLayout = "3:04 pm on 2 January, 2006"

type locomoSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question string   `json:"question"`
		Evidence []string `json:"evidence"`
		Category int      `json:"category"`
	} `json:"qa"`
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

// LoadLoCoMo reads LoCoMo's JSON file; see ReadLoCoMo.
func LoadLoCoMo(path string, opts Options) (*Dataset, error) {
	f, err := openData(path)
	if err != nil {
		return nil, fmt.Errorf("locomo: %w", err)
	}
	defer f.Close()
	d, err := ReadLoCoMo(f, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// ReadLoCoMo reads LoCoMo conversations: a JSON list of samples, each one
// corpus. Every turn is a raw memory (type turn) with content
// "<speaker>: <text>" (plus " [shares a photo: <caption>]" when the turn
// shared an image), the speaker as entity, the session
// "<sample_id>/session_<n>", source "locomo:<sample_id>#<dia_id>" and its
// session's date and time as event time (ValidFrom). Its key is its dia_id.
//
// Each question is a query labelled with its evidence turns. Evidence is
// normalised as LoCoMo needs: every "D<session>:<turn>" found in the
// evidence strings counts ("D8:6; D9:17" is two turns), and ids of turns the
// conversation does not have are dropped. Adversarial questions (category
// 5, no answer) and questions left without evidence are kept unlabelled:
// timed, not scored. The notes count what was dropped.
func ReadLoCoMo(r io.Reader, opts Options) (*Dataset, error) {
	var samples []locomoSample
	if err := json.NewDecoder(r).Decode(&samples); err != nil {
		return nil, fmt.Errorf("%w: locomo: not a JSON list of conversations: %v", core.ErrInvalid, err)
	}
	d := &Dataset{Name: "locomo"}
	var droppedIDs, noEvidence, adversarial, badDates int
	for si, s := range samples {
		if opts.MaxCorpora > 0 && len(d.Corpora) == opts.MaxCorpora {
			break
		}
		if s.SampleID == "" {
			s.SampleID = fmt.Sprintf("sample-%d", si)
		}
		c := Corpus{Name: s.SampleID}
		keys := map[string]bool{}
		type session struct {
			n   int
			raw json.RawMessage
		}
		var sessions []session
		for k, raw := range s.Conversation {
			if m := locomoSessionKey.FindStringSubmatch(k); m != nil {
				n, _ := strconv.Atoi(m[1])
				sessions = append(sessions, session{n, raw})
			}
		}
		slices.SortFunc(sessions, func(a, b session) int { return a.n - b.n })
		for _, ss := range sessions {
			var turns []locomoTurn
			if err := json.Unmarshal(ss.raw, &turns); err != nil {
				return nil, fmt.Errorf("%w: locomo: %s session_%d: not a list of turns: %v", core.ErrInvalid, s.SampleID, ss.n, err)
			}
			var when time.Time
			if raw, ok := s.Conversation[fmt.Sprintf("session_%d_date_time", ss.n)]; ok {
				var str string
				_ = json.Unmarshal(raw, &str)
				t, err := time.Parse(locomoTimeLayout, strings.TrimSpace(str))
				if err != nil {
					badDates++
				}
				when = t
			}
			for _, t := range turns {
				content := strings.TrimSpace(t.Text)
				if t.Speaker != "" && content != "" {
					content = t.Speaker + ": " + content
				}
				if caption := strings.TrimSpace(t.BlipCaption); caption != "" {
					content = strings.TrimSpace(content + " [shares a photo: " + caption + "]")
				}
				if t.DiaID == "" || content == "" || keys[t.DiaID] {
					continue
				}
				content, _ = clip(content)
				keys[t.DiaID] = true
				in := core.Input{
					Content:   content,
					Type:      core.TypeTurn,
					Source:    "locomo:" + s.SampleID + "#" + t.DiaID,
					Session:   fmt.Sprintf("%s/session_%d", s.SampleID, ss.n),
					ValidFrom: when,
				}
				if t.Speaker != "" {
					in.Entities = []string{t.Speaker}
				}
				c.Docs = append(c.Docs, Doc{Key: t.DiaID, Input: in})
			}
		}
		for qi, qa := range s.QA {
			q := Query{ID: fmt.Sprintf("%s/q%d", s.SampleID, qi), Text: qa.Question, Category: locomoCategories[qa.Category]}
			if q.Category == "" {
				q.Category = strconv.Itoa(qa.Category)
			}
			if strings.TrimSpace(q.Text) == "" {
				continue
			}
			if qa.Category == locomoAdversarial {
				adversarial++
				c.Queries = append(c.Queries, q)
				continue
			}
			ids, dropped := NormalizeEvidence(qa.Evidence, keys)
			droppedIDs += dropped
			if len(ids) == 0 {
				noEvidence++
			} else {
				q.Relevant = make(map[string]float64, len(ids))
				for _, id := range ids {
					q.Relevant[id] = 1
				}
			}
			c.Queries = append(c.Queries, q)
		}
		c.Queries = limitQueries(c.Queries, opts.MaxQueries)
		d.Corpora = append(d.Corpora, c)
	}
	if len(d.Corpora) == 0 {
		return nil, fmt.Errorf("%w: locomo: the file holds no conversations", core.ErrInvalid)
	}
	d.Notes = append(d.Notes, fmt.Sprintf("locomo: %d adversarial questions (category 5) timed but not scored", adversarial))
	if droppedIDs > 0 || noEvidence > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("locomo: %d evidence ids dropped (no such turn); %d questions left without evidence, not scored", droppedIDs, noEvidence))
	}
	if badDates > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("locomo: %d session dates unreadable; their turns have no event time", badDates))
	}
	return d, nil
}

// NormalizeEvidence extracts LoCoMo dialogue ids from evidence strings:
// every "D<session>:<turn>" match counts, in order, without duplicates, and
// ids not in turns are dropped (their number is returned).
func NormalizeEvidence(evidence []string, turns map[string]bool) (ids []string, dropped int) {
	seen := map[string]bool{}
	for _, e := range evidence {
		for _, id := range locomoEvidence.FindAllString(e, -1) {
			if seen[id] {
				continue
			}
			seen[id] = true
			if !turns[id] {
				dropped++
				continue
			}
			ids = append(ids, id)
		}
	}
	return ids, dropped
}
