package vecsync

import (
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/memos-go/memos/core/driver"
)

// cacheKey identifies one vector: the model that made it and the text's hash.
type cacheKey struct {
	model string
	sum   [sha256.Size]byte
}

type cacheEntry struct {
	key cacheKey
	vec []float32
}

// embedCache is an LRU of vectors, bounded by entries, safe for concurrent use.
type embedCache struct {
	mu     sync.Mutex
	max    int
	ll     *list.List // front: most recently used; elements hold *cacheEntry
	items  map[cacheKey]*list.Element
	hits   uint64
	misses uint64
}

func newEmbedCache(max int) *embedCache {
	return &embedCache{max: max, ll: list.New(), items: make(map[cacheKey]*list.Element)}
}

// get returns a copy of the vector cached under k.
func (c *embedCache) get(k cacheKey) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if !ok {
		c.misses++
		return nil, false
	}
	c.hits++
	c.ll.MoveToFront(el)
	return append([]float32(nil), el.Value.(*cacheEntry).vec...), true
}

// put stores a copy of v under k, evicting the least recently used entries
// beyond the bound.
func (c *embedCache) put(k cacheKey, v []float32) {
	v = append([]float32(nil), v...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		el.Value.(*cacheEntry).vec = v
		c.ll.MoveToFront(el)
		return
	}
	c.items[k] = c.ll.PushFront(&cacheEntry{key: k, vec: v})
	for c.ll.Len() > c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
}

// CacheStats describes an embedding cache since it was made.
type CacheStats struct {
	Entries  int    // vectors held now
	Capacity int    // the bound in entries
	Hits     uint64 // texts answered from the cache
	Misses   uint64 // texts sent to the embedder
}

func (c *embedCache) stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Entries: c.ll.Len(), Capacity: c.max, Hits: c.hits, Misses: c.misses}
}

// cachedEmbedder is an Embedder with the cache in front: Embed sends only
// the texts the cache does not hold (each distinct text once) to the inner
// embedder. It is an io.Closer that closes the inner embedder if that is one.
type cachedEmbedder struct {
	driver.Embedder
	model driver.ModelInfo
	cache *embedCache
}

var (
	_ driver.Embedder = (*cachedEmbedder)(nil)
	_ io.Closer       = (*cachedEmbedder)(nil)
)

// Cached puts a cache of size entries (> 0) in front of emb, whose model is
// model. The cache is keyed by the model id and the SHA-256 of the text,
// keeps only vectors that keep the embedder contract and hands out copies.
func Cached(emb driver.Embedder, model driver.ModelInfo, size int) driver.Embedder {
	return &cachedEmbedder{Embedder: emb, model: model, cache: newEmbedCache(size)}
}

// CacheStatsOf reports the cache in front of emb; false when emb is not
// one Cached made.
func CacheStatsOf(emb driver.Embedder) (CacheStats, bool) {
	if c, ok := emb.(*cachedEmbedder); ok {
		return c.cache.stats(), true
	}
	return CacheStats{}, false
}

// Embed implements Embedder.
func (c *cachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var (
		miss  []string             // distinct texts the cache does not hold
		keys  []cacheKey           // their keys
		wait  [][]int              // for each, the positions in texts that want it
		queue = map[cacheKey]int{} // key → index in miss
	)
	for i, t := range texts {
		k := cacheKey{model: c.model.ID, sum: sha256.Sum256([]byte(t))}
		if j, ok := queue[k]; ok {
			wait[j] = append(wait[j], i)
			continue
		}
		if v, ok := c.cache.get(k); ok {
			out[i] = v
			continue
		}
		queue[k] = len(miss)
		miss, keys, wait = append(miss, t), append(keys, k), append(wait, []int{i})
	}
	if len(miss) == 0 {
		return out, nil
	}
	vs, err := c.Embedder.Embed(ctx, miss)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(miss) {
		return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vs), len(miss))
	}
	for j, v := range vs {
		if validVector(v, c.model.Dim) {
			c.cache.put(keys[j], v) // a broken answer is reported by the engine, never kept
		}
		out[wait[j][0]] = v
		for _, i := range wait[j][1:] {
			out[i] = append([]float32(nil), v...) // callers may change each vector
		}
	}
	return out, nil
}

func validVector(v []float32, dim int) bool {
	if len(v) != dim {
		return false
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// Close closes the inner embedder if it is an io.Closer.
func (c *cachedEmbedder) Close() error {
	if cl, ok := c.Embedder.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}
