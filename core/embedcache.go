package core

import "github.com/memos-go/memos/core/internal/vecsync"

// DefaultEmbedCacheSize is the number of vectors the engine's embedding cache
// keeps when Options.EmbedCacheSize is 0. At 256 dimensions that is about
// 10 MB; at 1536 (OpenAI-sized models) about 60 MB.
const DefaultEmbedCacheSize = 10_000

// EmbedCacheStats describes the engine's embedding cache since Open.
type EmbedCacheStats struct {
	Entries  int    `json:"entries"`  // vectors held now
	Capacity int    `json:"capacity"` // the bound in entries (0: no cache)
	Hits     uint64 `json:"hits"`     // texts answered from the cache
	Misses   uint64 `json:"misses"`   // texts sent to the embedder
}

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
	return vecsync.Cached(emb, model, size)
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
	st, _ := vecsync.CacheStatsOf(e.emb)
	return EmbedCacheStats(st)
}
