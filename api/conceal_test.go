package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memos-go/memos/core"
)

// TestConcealNamesTheScope: a limited caller's not-found names the
// namespaces it reads, and "default" once when that is all it reads.
func TestConcealNamesTheScope(t *testing.T) {
	notFound := &core.Error{Op: "get", ID: 7, Err: fmt.Errorf("%w in namespace agent:b", core.ErrNotFound)}
	for ns, want := range map[string]string{
		core.DefaultNamespace: "no such memory in namespace default",
		"agent:a":             "no such memory in namespace agent:a or default",
	} {
		msg := conceal(notFound, ns).Error()
		if !strings.Contains(msg, want) || strings.Contains(msg, "agent:b") || strings.Contains(msg, "default or default") {
			t.Errorf("conceal for %s: %q, want it to contain %q and name no other namespace", ns, msg, want)
		}
	}
}
