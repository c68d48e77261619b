package hnsw

import (
	"unsafe"

	"github.com/memos-go/memos/core/driver"
)

var _ driver.VectorIndexSizer = (*Index)(nil)

// MemoryBytes estimates the memory the index holds: vectors, the level-0
// links and in-degrees, the upper levels' links, the nodes, the free list
// and the id map (about 20 bytes an entry).
func (ix *Index) MemoryBytes() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := ix.vecs.Bytes() + int64(cap(ix.links0)+cap(ix.indeg)+cap(ix.free))*4 +
		int64(cap(ix.nodes))*int64(unsafe.Sizeof(node{})) + int64(len(ix.byID))*20
	n += int64(cap(ix.upper)) * int64(unsafe.Sizeof([]uint32(nil)))
	for _, u := range ix.upper {
		n += int64(cap(u)) * 4
	}
	return n
}
