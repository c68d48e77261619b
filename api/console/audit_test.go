package console

import (
	"reflect"
	"testing"

	"github.com/memos-go/memos/core"
)

// TestViewAudit checks how the memory page shows an audit entry: who made
// a console decision (from the note the console wrote), a batch entry cut
// down to this memory's part, hashes shortened, and a note written
// elsewhere left whole with no one named.
func TestViewAudit(t *testing.T) {
	for _, c := range []struct {
		name   string
		entry  core.AuditEntry
		who    string
		batch  int
		fields []field
	}{
		{"console release", core.AuditEntry{Action: "quarantine.release", MemoryID: 7,
			Detail: `{"note":"console (token admin): checked with Alice","version":2,"sha256":"0123456789abcdef0123"}`},
			"console, token admin", 0, []field{{"note", "checked with Alice"}, {"sha256", "0123456789ab…"}, {"version", "2"}}},
		{"loopback reject without a reason", core.AuditEntry{Action: "quarantine.reject", MemoryID: 7,
			Detail: `{"reason":"console (loopback, no token)"}`},
			"console, loopback, no token", 0, nil},
		{"a note from the API", core.AuditEntry{Action: "quarantine.release", MemoryID: 7,
			Detail: `{"note":"released by the nightly job (console (token x) is not at the start)"}`},
			"", 0, []field{{"note", "released by the nightly job (console (token x) is not at the start)"}}},
		{"batch", core.AuditEntry{Action: "remember",
			Detail: `{"memories":[{"id":6,"version":1,"status":"active"},{"id":7,"version":1,"status":"quarantined","namespace":"a"}]}`},
			"", 2, []field{{"namespace", "a"}, {"status", "quarantined"}, {"version", "1"}}},
		{"not JSON", core.AuditEntry{Action: "old", MemoryID: 7, Detail: "<b>raw</b>"},
			"", 0, []field{{"detail", "<b>raw</b>"}}},
	} {
		v := viewAudit(c.entry, 7)
		if v.Who != c.who || v.Batch != c.batch || !reflect.DeepEqual(v.Fields, c.fields) {
			t.Errorf("%s: who %q, batch %d, fields %q; want %q, %d, %q", c.name, v.Who, v.Batch, v.Fields, c.who, c.batch, c.fields)
		}
	}
}
