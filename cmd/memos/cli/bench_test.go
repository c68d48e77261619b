package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/bench"
)

// TestBenchOutAndJSON checks that bench's report file is --out and that the
// global --json means what it means everywhere: print JSON, not the table.
func TestBenchOutAndJSON(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(t.TempDir(), "report.json")
	args := []string{"bench", "--backends", "sqlite", "--sizes", "200", "--queries", "5", "--warmup", "1", "--dir", t.TempDir()}

	table := e.ok(append(args, "--out", out)...)
	if strings.HasPrefix(strings.TrimSpace(table), "{") {
		t.Errorf("bench without --json printed JSON:\n%s", table)
	}
	var fromFile bench.Report
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("--out %s: %v", out, err)
	}
	if err := json.Unmarshal(data, &fromFile); err != nil || len(fromFile.Results) != 1 || fromFile.Results[0].Backend != "sqlite" {
		t.Errorf("--out file: %d results (%v), want one sqlite result", len(fromFile.Results), err)
	}

	var printed bench.Report
	e.json(&printed, args...)
	if len(printed.Results) != 1 || printed.Results[0].Backend != "sqlite" {
		t.Errorf("bench --json printed %d results, want one sqlite result", len(printed.Results))
	}
}
