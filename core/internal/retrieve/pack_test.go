package retrieve

import (
	"context"
	"slices"
	"testing"

	"github.com/memos-go/memos/core/driver"
)

// multiStore is memStore whose transactions read many memories' edges and
// records at once (driver.MultiEdgeReader, driver.MultiGetter), as the
// postgres backend's do, and count the reads.
type multiStore struct {
	*memStore
	edges, edgesMany, gets, getMany int
}

func (s *multiStore) View(ctx context.Context, fn func(tx driver.ReadTx) error) error {
	return fn(multiTx{memTx{s.memStore}, s})
}

type multiTx struct {
	memTx
	n *multiStore
}

func (t multiTx) Edges(id int64) ([]driver.Edge, error) {
	t.n.edges++
	return t.memTx.Edges(id)
}

func (t multiTx) Get(id int64, v int) (*driver.Memory, error) {
	t.n.gets++
	return t.memTx.Get(id, v)
}

func (t multiTx) EdgesMany(ids []int64) (map[int64][]driver.Edge, error) {
	t.n.edgesMany++
	out := map[int64][]driver.Edge{}
	for _, id := range ids {
		if es := t.s.edges[id]; len(es) > 0 {
			out[id] = es
		}
	}
	return out, nil
}

func (t multiTx) GetMany(ids []int64) (map[int64]*driver.Memory, error) {
	t.n.getMany++
	out := map[int64]*driver.Memory{}
	for _, id := range ids {
		if m, err := t.memTx.Get(id, 0); err == nil {
			out[id] = m
		}
	}
	return out, nil
}

// TestNeighboursReadAtOnce: a pack's graph neighbours of several selected
// memories cost one read of their edges and one of the neighbours on a
// backend that offers both (a database server: one round trip each), not
// one per memory; and they are the ones read one by one.
func TestNeighboursReadAtOnce(t *testing.T) {
	ctx := context.Background()
	d, now := kitten(t, SearchConfig{}, nil)
	s := d.Store.(*memStore)
	// Memory 2 contradicts a fact (11) too; 12 relates to 3 and 10.
	add := func(id int64, content string) {
		m := *s.mems[10]
		m.ID, m.Content = id, content
		s.mems[id] = &m
	}
	add(11, "Miso is a dog")
	add(12, "Elm Street has a vet")
	link := func(from, to int64, ty driver.EdgeType) {
		e := driver.Edge{From: from, To: to, Type: ty, Weight: 1, CreatedAt: now}
		s.edges[from] = append(s.edges[from], e)
		s.edges[to] = append(s.edges[to], e)
	}
	link(2, 11, driver.EdgeContradicts)
	link(12, 3, driver.EdgeRelatesTo)
	link(12, 10, driver.EdgeRelatesTo)
	req := SearchRequest{Query: "kitten", Mode: ModeKeyword, NoExpand: true}
	sel := []int64{1, 2, 3, 4, 5}

	p, err := Run(ctx, d, req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := p.Neighbours(ctx, sel, 5)
	if err != nil {
		t.Fatal(err)
	}
	var wantVia []string
	for _, pk := range want {
		wantVia = append(wantVia, pk.Via)
	}
	if !slices.Equal(wantVia, []string{"1 supports it", "2 contradicts it", "it relates_to 3"}) {
		t.Fatalf("neighbours one by one: %v", wantVia)
	}

	ms := &multiStore{memStore: s}
	d.Store = ms
	if p, err = Run(ctx, d, req); err != nil {
		t.Fatal(err)
	}
	ms.edges, ms.edgesMany, ms.gets, ms.getMany = 0, 0, 0, 0
	got, err := p.Neighbours(ctx, sel, 5)
	if err != nil {
		t.Fatal(err)
	}
	var gotVia []string
	for i, pk := range got {
		gotVia = append(gotVia, pk.Via)
		if i < len(want) && pk.Memory.ID != want[i].Memory.ID {
			t.Errorf("neighbour %d: memory %d, one by one %d", i, pk.Memory.ID, want[i].Memory.ID)
		}
	}
	if !slices.Equal(gotVia, wantVia) {
		t.Errorf("neighbours read at once: %v, one by one %v", gotVia, wantVia)
	}
	if ms.edges != 0 || ms.edgesMany != 1 || ms.gets != 0 || ms.getMany != 1 {
		t.Errorf("neighbours of %d memories: %d Edges and %d EdgesMany, %d Get and %d GetMany reads; want one EdgesMany and one GetMany",
			len(sel), ms.edges, ms.edgesMany, ms.gets, ms.getMany)
	}
}
