package vector

import "github.com/memos-go/memos/core/driver"

var _ driver.VectorIndexSizer = (*Exact)(nil)

// mapEntryBytes estimates one entry of a map[int64]int32 or
// map[int64]uint32: key, value, control byte and the free share of a
// table kept at most 7/8 full.
const mapEntryBytes = 20

// MemoryBytes estimates the memory the index holds: the vectors, the ids
// and attributes per slot, and the id map.
func (x *Exact) MemoryBytes() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.rows.Bytes() + int64(cap(x.ids))*8 + int64(cap(x.nsOf)+cap(x.pool))*4 +
		int64(len(x.slots))*mapEntryBytes
}
