package driver

// Defaulter is an optional interface of a module's Config (a backend's, an
// embedder's, an extractor's, a summarizer's, a reranker's), implemented on
// its pointer. Defaults sets every field left at its zero value to the
// value the module applies in its place, so that a front-end can show the
// effective settings (memos config show) rather than "the module's
// default". A module whose Open calls Defaults cannot show one default and
// apply another.
type Defaulter interface {
	Defaults()
}
