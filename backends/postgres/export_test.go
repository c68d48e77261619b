package postgres

// SchemaV1 is the first schema's DDL, for tests that restore a store as an
// older memos wrote it.
var SchemaV1 = schemaV1

// SchemaVersion is the version a store has after every migration.
var SchemaVersion = schemaVersion
