package postgres

// SchemaVersion is the version a store has after every migration.
var SchemaVersion = schemaVersion

// SchemaSQL is the DDL of schema version v: the statements of the
// migrations up to it (those that run Go code change no table), for tests
// that restore a store as that version wrote it.
func SchemaSQL(v int) []string {
	var out []string
	for _, m := range migrations[:v] {
		out = append(out, m.sql...)
	}
	return out
}
