// Package core is the heart of memos: the Engine, which is the public
// Go API every front-end (CLI, HTTP, MCP) calls.
//
// # Basics
//
// Open an engine over a backend and an embedder, remember things, search:
//
//	eng, err := core.Open(ctx, core.Options{Backend: b, Embedder: e})
//	m, err := eng.Remember(ctx, core.Input{Content: "Alice prefers open-source tools"})
//	res, err := eng.Search(ctx, core.SearchRequest{Query: "what does alice like"})
//
// Backends and embedders implement the small interfaces of package
// core/driver (store of record with an integrated keyword index and graph;
// embedder), which core re-exports under the same names. The vector index
// (exact in core/vector, HNSW in core/vector/hnsw) is chosen by the engine
// (Options.VectorIndex) and serves every backend. Backends and embedders
// register themselves by name (driver.RegisterBackend, RegisterEmbedder), so
// a program picks its set by blank imports.
//
// # Caveats
//
// All Engine methods are safe for concurrent use. A backend file may be shared
// by several processes; the engine notices writes made by others through the
// backend's change log before every search.
package core
