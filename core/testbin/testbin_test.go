package testbin_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/memos-go/memos/core/testbin"
)

func TestBuildRunsTheProgram(t *testing.T) {
	bin := testbin.Build(t, "./testdata/hello")
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "hello from a built program" {
		t.Fatalf("output %q", got)
	}
}

func TestBuildNamesWhatFailed(t *testing.T) {
	_, err := testbin.BuildIn(t.TempDir(), "./testdata/broken")
	if err == nil {
		t.Fatal("a package that does not compile was built")
	}
	for _, want := range []string{"go build ./testdata/broken", "undefinedFunction"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
