// Package clients holds memos' client libraries for other languages and
// their tests; it has no Go API of its own.
//
//   - typescript: the TypeScript client (an npm package: .js with .d.ts
//     declarations, no runtime dependencies beyond fetch).
//   - python: the Python client (standard library only, Python 3.9+).
//   - gen: the generator of both clients' operation methods, types and
//     error classes from the operation table (go run ./api/clients/gen).
//
// TestClients runs both clients' test scripts against a server on a
// loopback listener; TestTypeScriptTypes type-checks the TypeScript
// declarations; gen's tests fail when the generated files are stale or a
// client lacks an operation. See docs/clients.md.
package clients
