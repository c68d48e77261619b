package driver

import "errors"

// MultiEdgeReader is an optional interface of ReadTx for backends that read
// the edges of many memories at once much faster than one at a time, such
// as a database server a network round trip away. Graph expansion reads
// its seeds' edges with it (see EdgesOf). A backend that implements it
// must pass its conformance case.
type MultiEdgeReader interface {
	// EdgesMany returns, keyed by id, the edges that start or end at each
	// of ids, ordered by (From, To, Type) as ReadTx.Edges orders them; an
	// id without edges (an unknown one too) is absent. Duplicate ids are
	// allowed. An edge between two of ids is in both lists.
	EdgesMany(ids []int64) (map[int64][]Edge, error)
}

// EdgesOf returns the edges of each of ids as ReadTx.Edges does, keyed by
// id (ids without edges absent), reading them at once when tx can
// (MultiEdgeReader) and one by one otherwise. An id that is not found has
// no edges.
func EdgesOf(tx ReadTx, ids []int64) (map[int64][]Edge, error) {
	if mr, ok := tx.(MultiEdgeReader); ok {
		return mr.EdgesMany(ids)
	}
	out := make(map[int64][]Edge, len(ids))
	for _, id := range ids {
		if _, done := out[id]; done {
			continue
		}
		es, err := tx.Edges(id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(es) > 0 {
			out[id] = es
		}
	}
	return out, nil
}
