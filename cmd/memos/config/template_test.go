package config

import (
	"regexp"
	"slices"
	"testing"
)

// TestTemplateListsEveryKey: the template `memos init` writes (and from which
// docs/reference/config.md is generated) shows every section the loader
// accepts, and every vector key.
func TestTemplateListsEveryKey(t *testing.T) {
	keyLine := regexp.MustCompile(`(?m)^# ( *)([a-z0-9_]+):`)
	var top, vector []string
	section := ""
	for _, m := range keyLine.FindAllStringSubmatch(Template(), -1) {
		switch depth := len(m[1]) / 2; {
		case depth == 0:
			section = m[2]
			top = append(top, m[2])
		case depth == 1 && section == "vector":
			vector = append(vector, m[2])
		}
	}
	for _, k := range topLevel {
		if k != "home" && !slices.Contains(top, k) { // home cannot be set in the file
			t.Errorf("the template lacks the section %q", k)
		}
	}
	for _, k := range []string{"index", "hnsw_threshold", "precision"} {
		if !slices.Contains(vector, k) {
			t.Errorf("the template lacks vector.%s", k)
		}
	}
}
