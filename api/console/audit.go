package console

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memos-go/memos/core"
)

// auditView is an audit entry as the memory page shows it: who acted, and
// the detail's fields that concern the memory.
type auditView struct {
	core.AuditEntry
	// Who is the actor the entry's note or reason names ("" when it names
	// none): the console writes "console (token NAME)" or "console
	// (loopback, no token)" at the start of the notes of its decisions.
	Who string
	// Batch is the number of memories the entry binds when it binds
	// several at once (a batch of remembers); Fields then hold this
	// memory's binding only.
	Batch  int
	Fields []field
}

type field struct{ Key, Value string }

// consolePrefix starts the note of every decision made in the console.
const consolePrefix = "console ("

// actorOf splits a note the console wrote into who made the decision and
// what the person wrote; a note written elsewhere names no one.
func actorOf(note string) (who, rest string) {
	if !strings.HasPrefix(note, consolePrefix) {
		return "", note
	}
	end := strings.IndexByte(note, ')')
	if end < 0 {
		return "", note
	}
	who = note[len(consolePrefix):end]
	rest = strings.TrimPrefix(strings.TrimPrefix(note[end+1:], ":"), " ")
	return "console, " + who, rest
}

// viewAudit prepares entry a for the page of memory id.
func viewAudit(a core.AuditEntry, id int64) auditView {
	v := auditView{AuditEntry: a}
	var d map[string]any
	if a.Detail == "" || json.Unmarshal([]byte(a.Detail), &d) != nil {
		if a.Detail != "" {
			v.Fields = []field{{"detail", a.Detail}}
		}
		return v
	}
	if ms, ok := d["memories"].([]any); ok && a.MemoryID == 0 {
		// A batch entry: this memory's binding among the others'.
		v.Batch = len(ms)
		delete(d, "memories")
		for _, m := range ms {
			if b, ok := m.(map[string]any); ok && b["id"] == float64(id) {
				for k, x := range b {
					if k != "id" {
						d[k] = x
					}
				}
				break
			}
		}
	}
	for _, k := range []string{"note", "reason"} {
		if s, ok := d[k].(string); ok {
			if who, rest := actorOf(s); who != "" {
				v.Who, d[k] = who, rest
				if rest == "" {
					delete(d, k)
				}
			}
		}
	}
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var s string
		switch x := d[k].(type) {
		case string:
			s = x
			if k == "sha256" || strings.HasSuffix(k, "_sha256") {
				s = x[:min(len(x), 12)] + "…"
			}
		case float64:
			s = fmt.Sprint(x)
		default:
			b, _ := json.Marshal(x)
			s = string(b)
		}
		v.Fields = append(v.Fields, field{k, s})
	}
	return v
}

// activityView is an audit entry as recent activity shows it: what was
// done, to which memories, by whom, when.
type activityView struct {
	Seq    uint64
	Time   time.Time
	Action string
	Who    string
	// Memories are the memories the entry names (up to maxActivityLinks
	// of a batch's; More counts the rest).
	Memories []memoryRef
	More     int
}

type memoryRef struct {
	ID        int64
	Namespace string
}

// maxActivityLinks bounds the memories of one entry recent activity links.
const maxActivityLinks = 5

// viewActivity prepares entry a for recent activity; ns is the namespace
// of the page, for memories whose entry records none.
func viewActivity(a core.AuditEntry, ns string) activityView {
	v := activityView{Seq: a.Seq, Time: a.Time, Action: a.Action}
	var d struct {
		Namespace string `json:"namespace"`
		Note      string `json:"note"`
		Reason    string `json:"reason"`
		Memories  []struct {
			ID        int64  `json:"id"`
			Namespace string `json:"namespace"`
		} `json:"memories"`
	}
	if a.Detail != "" && json.Unmarshal([]byte(a.Detail), &d) != nil {
		d.Memories = nil
	}
	for _, s := range []string{d.Note, d.Reason} {
		if who, _ := actorOf(s); who != "" && v.Who == "" {
			v.Who = who
		}
	}
	or := func(s string) string {
		if s == "" {
			return ns
		}
		return s
	}
	if a.MemoryID != 0 {
		v.Memories = append(v.Memories, memoryRef{a.MemoryID, or(d.Namespace)})
	}
	for i, m := range d.Memories {
		if i == maxActivityLinks {
			v.More = len(d.Memories) - i
			break
		}
		v.Memories = append(v.Memories, memoryRef{m.ID, or(m.Namespace)})
	}
	return v
}
