// Package driver is the contract between memos' engine and the code that
// plugs into it: storage backends, embedders, embedder plugins and the
// conformance kits. It holds the memory model (Memory, Edge, pools, types,
// trust, status), the interfaces a backend implements (Backend, ReadTx, Tx,
// ChangeLog, GraphWriter and the optional AuditReader, Importer,
// BackendStater, MultiGetter, MultiEdgeReader, BlobStore and the indexed reads SessionReader,
// UpdateReader, RankReader and ListReader), Embedder and VectorIndex, the sentinel errors with KindOf,
// the name registry and vector math.
//
// It never imports the engine (package core), so a backend or a plugin links
// only what it implements. Users of the engine do not need this package:
// core re-exports every name here.
//
// # Writing a backend
//
// Implement Backend (View/Update transactions as closures, SearchKeyword, and
// Close), register it from the package's init with
// RegisterBackend(Name, NewBackendDriver(Name, "file-name", Open)), test it
// with one call to backendtest.Run(t, harness) from core/backendtest and
// benchmark it with backendtest.RunBenchmarks(b, harness). The engine adds
// vector search (exact or HNSW) on top of any backend. The README's
// "Writing a backend" walks through it.
//
// # Writing an embedder
//
// Implement Embedder (Info and Embed), register it with
// RegisterEmbedder(Name, NewEmbedderDriver(Name, Open)), and check it with
// embedtest.Run from core/embedtest. To run it out of process, wrap it with
// plugins/sdk.Serve in a main package.
//
// # Caveats
//
// Implementations must be safe for concurrent use; a transaction (ReadTx, Tx)
// must not be used after the closure that received it returns. Errors wrap at
// most one sentinel (ErrNotFound, ErrInvalid, ...) so that front-ends can map
// them with KindOf.
package driver
