package cli

import (
	"fmt"
	"strings"
	"testing"
)

// TestStatsFootprint: stats reports the store's bytes per memory on disk
// and in the vector index, on a file backend and a directory backend.
func TestStatsFootprint(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "bolt"} {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t).with("MEMOS_BACKEND=" + backend)
			for i := range 20 {
				e.add(fmt.Sprintf("note %d about the harbour office and its ferries", i))
			}
			e.add("alice's own note", "--namespace", "user:alice")
			e.ok("stats") // a close writes the vector snapshot, which the next stats counts
			var st statsOut
			e.json(&st, "stats")
			f := st.Footprint
			if st.Memories != 20 || st.StoreMemories != 21 {
				t.Fatalf("memories %d in scope, %d in the store; want 20 and 21", st.Memories, st.StoreMemories)
			}
			if f.DiskBytes <= 0 || f.DiskPerMemory != float64(f.DiskBytes)/21 {
				t.Errorf("disk %d bytes, %v per memory", f.DiskBytes, f.DiskPerMemory)
			}
			if st.VectorSnapshotBytes < 21*256*4 {
				t.Errorf("vector snapshot %d bytes", st.VectorSnapshotBytes)
			}
			if f.IndexBytes < 21*256*4 || f.IndexPerMemory != float64(f.IndexBytes)/21 {
				t.Errorf("vector index %d bytes, %v per memory", f.IndexBytes, f.IndexPerMemory)
			}
			if out := e.ok("stats"); !strings.Contains(out, "per memory), vector index") || !strings.Contains(out, "21 memories in the store") {
				t.Errorf("stats printed\n%s", out)
			}
		})
	}
}
