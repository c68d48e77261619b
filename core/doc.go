// Package core is the heart of memos: the memory model, the interfaces that
// storage backends and embedders implement, and the Engine, which is the public
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
// Backends implement the small interfaces in backend.go (store of record with
// an integrated keyword index and graph); the vector index lives in the core
// (package core/vector) and serves every backend. Backends and embedders
// register themselves by name (see Register*), so a program picks its set by
// blank imports.
//
// # Caveats
//
// All Engine methods are safe for concurrent use. A backend file may be shared
// by several processes; the engine notices writes made by others through the
// backend's change log before every search.
package core
