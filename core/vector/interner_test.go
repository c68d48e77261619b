package vector

import (
	"context"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// TestInternerForgetsNames checks that namespaces and pools no entry uses any
// more are dropped, so that a store with many short-lived run:<id>
// namespaces does not grow the index without bound.
func TestInternerForgetsNames(t *testing.T) {
	ctx := context.Background()
	x := NewExact(2)
	add := func(id int64, ns string, p driver.Pool) {
		t.Helper()
		if err := x.Add(ctx, driver.VectorEntry{ID: id, Namespace: ns, Pool: p, Vector: []float32{1, 2}}); err != nil {
			t.Fatal(err)
		}
	}
	add(1, "run:a", driver.PoolRaw)
	add(2, "run:a", driver.PoolRaw)
	add(3, "run:b", driver.PoolMemory)
	add(1, "run:c", driver.PoolMemory) // replace: run:a still used by 2
	if got := len(x.ns.idx); got != 3 {
		t.Fatalf("%d namespaces interned, want 3 (run:a, run:b, run:c)", got)
	}
	add(2, "run:c", driver.PoolMemory) // run:a and raw now unused
	if _, ok := x.ns.idx["run:a"]; ok || len(x.ns.idx) != 2 {
		t.Fatalf("namespaces %v, want run:a forgotten", x.ns.idx)
	}
	if _, ok := x.pools.idx["raw"]; ok {
		t.Fatalf("pools %v, want raw forgotten", x.pools.idx)
	}
	add(4, "run:d", driver.PoolRaw) // reuses a freed slot
	if len(x.ns.names) != 3 {
		t.Fatalf("interned slots %v, want the freed one reused", x.ns.names)
	}
	if err := x.Remove(ctx, 1, 2, 3, 4); err != nil {
		t.Fatal(err)
	}
	if len(x.ns.idx) != 0 || len(x.pools.idx) != 0 {
		t.Fatalf("after removing every entry: namespaces %v, pools %v, want none", x.ns.idx, x.pools.idx)
	}
	for i, r := range x.ns.refs {
		if r != 0 {
			t.Fatalf("namespace slot %d has %d references after removing every entry", i, r)
		}
	}
}
