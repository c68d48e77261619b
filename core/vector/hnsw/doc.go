// Package hnsw is memos' approximate nearest-neighbour vector index: a
// hierarchical navigable small world graph (Malkov and Yashunin, "Efficient
// and robust approximate nearest neighbor search using Hierarchical
// Navigable Small World graphs"), written for memos and serving every
// backend through driver.VectorIndex. The engine uses it when
// Options.VectorIndex is "hnsw", or "auto" above a configurable size (the
// exact index in core/vector below it).
//
// # Basics
//
// New builds an empty index for one dimension; the zero Config gives the
// defaults. Add inserts or replaces entries by ID, Remove deletes them,
// Search finds the k entries nearest a query among those a
// driver.VectorFilter matches. Save writes the graph in a versioned,
// checksummed binary format and Load reads it back, so a large store opens
// without rebuilding the graph.
//
//	ix, err := hnsw.New(384, hnsw.Config{})
//	err = ix.Add(ctx, driver.VectorEntry{ID: 1, Namespace: "default", Pool: driver.PoolMemory, Vector: v})
//	hits, err := ix.Search(ctx, q, 10, driver.VectorFilter{Namespaces: []string{"default"}})
//
// Like the exact index, the index stores a normalised copy of each vector
// and normalises a copy of each query, so a hit's score is the cosine
// similarity, computed as a dot product.
//
// # Parameters
//
// M (default 16) is the number of links per node on the upper levels, 2*M
// on level 0. EfConstruction (default 200) is the candidate list size while
// inserting, EfSearch (default 400) while searching; SearchEf overrides it
// per call. The defaults were chosen by measurement (recall_test.go,
// bench_test.go): on 20k random unit vectors of dimension 128, the hardest
// data for a graph index, recall@10 against the exact index is 0.88 at ef
// 200, 0.95 at ef 300 and 0.98 at ef 400; on 20k clustered vectors (50
// Gaussian clusters, the way text embeddings are distributed) it is 0.99 at
// ef 32 and 0.998 at ef 64. EfSearch defaults to the value that is safe for
// any data; a store whose embeddings cluster can lower it a lot for speed.
// On real embeddings at 100k (wordvec of the dev turns, BenchmarkWordvec)
// recall@10 is 0.976 at ef 128 and 0.996 at ef 400; with the hash embedder,
// whose vectors have no semantic neighbourhoods, 0.82 and 0.93.
//
// Identical vectors (a turn stored twice) are common in a memory store. The
// neighbour heuristic prunes a candidate that is a copy of a neighbour
// already kept, so that the copies of a vector do not fill each other's
// lists and cut themselves off from the rest of the graph.
//
// Each node's level is drawn from a generator seeded by Config.Seed whose
// state is saved with the index, so the same seed and the same sequence of
// calls build the same graph, also across Save and Load.
//
// # Filters
//
// A filtered search walks the graph through entries the filter rejects but
// collects only entries it accepts, and keeps expanding until it has ef of
// them or runs out of graph, so a selective filter does not come back with
// too few hits; ef is widened by the square root of the inverse of the
// filter's selectivity. When the matching entries are few enough that
// comparing the query with each of them costs less than the walk (fewer
// than 2*M*ef, or Config.ExactBelow), the index scans them instead, which
// is exact. The index counts entries per namespace and pool, so it knows
// how many a filter matches without looking.
//
// # Deletion and repair
//
// Remove (and replacing an entry's vector) turns the node into a tombstone:
// it is no longer returned but keeps routing searches, so the graph stays
// connected. When tombstones exceed Config.RepairFraction of all nodes
// (default 10%), the index repairs itself inside the Add or Remove call that
// crossed the threshold: every live node that linked to a tombstone
// re-selects its neighbours, with the same heuristic as inserts, from its
// live neighbours and the live nodes behind the tombstones; the tombstones'
// slots are cleared and reused by later inserts; and any live node the
// entry point no longer reaches is linked back in. Save repairs first, so a
// saved index holds no removed vectors.
//
// Inserts also keep every node reachable: the index counts each node's
// level-0 in-links and never drops a node's last one when a full neighbour
// list has to make room.
//
// # Caveats
//
// An Index is safe for concurrent use. Searches share a read lock and run in
// parallel; Add and Remove take the write lock, Add in slices of 32 entries
// per worker so that searches interleave with a large batch. Within a slice,
// Config.Workers goroutines (one per CPU by default) insert at once, locking
// one neighbour list at a time, as hnswlib does; the graph then depends on
// how they interleave, so only Workers 1 is deterministic (the same seed and
// calls build the same graph). The index lives in memory: 100k × 384 takes
// about 170 MB, almost all of it vectors (Config.Precision Int8 stores them
// in a quarter of that); Save and Load keep it between runs so that a store
// opens without rebuilding it.
package hnsw
