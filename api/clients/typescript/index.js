// memos' TypeScript client: MemosClient has a method per operation of the
// HTTP API; errors are MemosError subclasses named after their kind.
export * from "./runtime.js";
export * from "./client.js";
