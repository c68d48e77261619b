package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/memos-go/memos/core/testbin"
)

// buildMemos builds the real memos binary (cmd/memos) into a temporary
// directory. It builds with -race when the tests run with it, so that the
// build reuses the packages the test binary was compiled from.
func buildMemos(t testing.TB) string {
	t.Helper()
	return testbin.Build(t, "..")
}

// TestBinaryConcurrentWriters runs two memos processes that add memories to
// the same fresh store at the same time: the second writer must wait for the
// first, never fail.
func TestBinaryConcurrentWriters(t *testing.T) {
	t.Parallel()
	bin := buildMemos(t)
	home := filepath.Join(t.TempDir(), "shared")
	environ := []string{"HOME=" + t.TempDir(), "MEMOS_HOME=" + home, "GORACE=atexit_sleep_ms=0"}
	memos := func(args ...string) (stdout, stderr string, code int) {
		cmd := exec.Command(bin, args...)
		cmd.Env = environ
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), errb.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("run memos: %v", err)
		}
		return out.String(), errb.String(), 0
	}

	const writers, rounds = 2, 5
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ids  []int64
		errs []string
	)
	for w := range writers {
		wg.Go(func() {
			for i := range rounds {
				out, stderr, code := memos("add", fmt.Sprintf("writer %d wrote note %d", w, i), "--json")
				var m struct {
					ID int64 `json:"id"`
				}
				mu.Lock()
				if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
					errs = append(errs, fmt.Sprintf("writer %d round %d: exit %d: %s", w, i, code, stderr))
				} else {
					ids = append(ids, m.ID)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		t.Error(e)
	}
	slices.Sort(ids)
	if len(slices.Compact(slices.Clone(ids))) != writers*rounds {
		t.Errorf("ids %v: want %d distinct", ids, writers*rounds)
	}
	out, stderr, code := memos("stats", "--json")
	var st statsJSON
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("stats: exit %d: %s", code, stderr)
	}
	if st.Memories != writers*rounds {
		t.Errorf("store holds %d memories, want %d", st.Memories, writers*rounds)
	}

	// The process exit code comes from the error's kind.
	if _, stderr, code := memos("get", "999"); code != 3 || !bytes.HasPrefix([]byte(stderr), []byte("memos: ")) {
		t.Errorf("memos get 999: exit %d, stderr %q; want 3", code, stderr)
	}
	if _, _, code := memos("add", ""); code != 2 {
		t.Errorf("memos add '': exit %d, want 2", code)
	}
}
