// Package text is memos' text analysis, the one place that says what a
// keyword query means: tokens (Tokenize, SQLite's unicode61 tokenizer with
// remove_diacritics 2), their stems (Stem, FTS5's porter), and the evaluation
// of a query with FTS5's exact meaning (phrases of adjacent tokens, prefix
// terms, AND, OR, binary NOT and NEAR) and FTS5's bm25 score.
//
// It depends on nothing else in memos. Package core/query compiles its AST
// into a Query (query.Compile); then
//
//   - the engine evaluates old versions of memories in memory (NewDoc,
//     Query.Match, Query.Leaves) for searches "as of" a past time;
//   - a backend whose index only proposes candidates (bolt, postgres) builds
//     each candidate's Doc from the text or the positions it has (DocOf),
//     keeps it when Query.Freq matches and scores it with Corpus.Score, the
//     inverse document frequency of each of Query.Phrases coming from its
//     index (Corpus.IDF) and, for a query with a NOT, the instances FTS5
//     leaves stranded on other rows (Query.Stranded, which asks the backend
//     for the first document a node is positioned on), so that it ranks
//     exactly like the sqlite backend;
//   - the hash embedder tokenizes ASCII with AppendTokens (other text by
//     its frozen v1 rules).
//
// The sqlite backend needs little of it (Fold, in its two-phase search):
// FTS5 itself is the reference that the tests here and in backends/sqlite
// and backends/bolt check this package against.
package text
