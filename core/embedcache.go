package core

import (
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"sync"
)

// DefaultEmbedCacheSize is the number of vectors the engine's embedding cache
// keeps when Options.EmbedCacheSize is 0. At 256 dimensions that is about
// 10 MB; at 1536 (OpenAI-sized models) about 60 MB.
const DefaultEmbedCacheSize = 10_000

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

// EmbedCacheStats describes the engine's embedding cache since Open.
type EmbedCacheStats struct {
	Entries  int    `json:"entries"`  // vectors held now
	Capacity int    `json:"capacity"` // the bound in entries (0: no cache)
	Hits     uint64 `json:"hits"`     // texts answered from the cache
	Misses   uint64 `json:"misses"`   // texts sent to the embedder
}

func (c *embedCache) stats() EmbedCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return EmbedCacheStats{Entries: c.ll.Len(), Capacity: c.max, Hits: c.hits, Misses: c.misses}
}

// cachedEmbedder is an Embedder with the cache in front: Embed sends only
// the texts the cache does not hold (each distinct text once) to the inner
// embedder. It is an io.Closer that closes the inner embedder if that is one.
type cachedEmbedder struct {
	Embedder
	model ModelInfo
	cache *embedCache
}

var (
	_ Embedder  = (*cachedEmbedder)(nil)
	_ io.Closer = (*cachedEmbedder)(nil)
)

// withEmbedCache puts a cache of size entries in front of emb, whose model
// is model. size 0 means DefaultEmbedCacheSize; a negative size means no
// cache, and emb is returned as it is.
func withEmbedCache(emb Embedder, model ModelInfo, size int) Embedder {
	if size == 0 {
		size = DefaultEmbedCacheSize
	}
	if size < 0 {
		return emb
	}
	return &cachedEmbedder{Embedder: emb, model: model, cache: newEmbedCache(size)}
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

// EmbedCacheStats reports the embedding cache's size and hit counts since
// Open. It is the zero value when the engine has no embedder or its cache is
// off (Options.EmbedCacheSize < 0).
//
// Every text the engine embeds — content on Remember, Update, Revert and
// Reembed, and the query of every vector or hybrid search — goes through a
// cache in front of the embedder, keyed by the model id and the SHA-256 of
// the text. Re-adding or re-indexing text the process has seen recently
// therefore costs no embedder call (no plugin round trip, no HTTP request).
// The cache is an LRU bounded by entries (Options.EmbedCacheSize), lives in
// memory only, belongs to one engine (shared by its In handles) and is safe
// for concurrent use. It keeps the embedder's vectors as returned, never a
// vector that breaks the embedder contract, and hands out copies. Keying by
// content is sound because the contract requires the same text to give the
// same vector, alone or in a batch; an embedder that is not deterministic
// should be given a new model id whenever its output changes.
func (e *Engine) EmbedCacheStats() EmbedCacheStats {
	if c, ok := e.emb.(*cachedEmbedder); ok {
		return c.cache.stats()
	}
	return EmbedCacheStats{}
}
