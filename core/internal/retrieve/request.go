package retrieve

import (
	"time"

	"github.com/memos-go/memos/core/driver"
)

// Mode selects how Search reads a query.
type Mode string

const (
	// ModeHybrid (the default) reads the query as natural language and fuses
	// keyword and vector candidates.
	ModeHybrid Mode = "hybrid"
	// ModeKeyword reads natural language and uses the keyword index only.
	ModeKeyword Mode = "keyword"
	// ModeVector uses the vector index only.
	ModeVector Mode = "vector"
	// ModeFTS reads the query in FTS5 syntax (AND, OR, NOT, "phrases",
	// prefix*, NEAR) and returns exactly the memories that match it: no
	// relevance gate, no expansion.
	ModeFTS Mode = "fts"
)

// ParseMode validates a search mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeHybrid, ModeKeyword, ModeVector, ModeFTS:
		return m, nil
	case "":
		return ModeHybrid, nil
	}
	return "", driver.Invalidf("unknown search mode %q (want hybrid, keyword, vector or fts)", s)
}

// SearchRequest is a query and its filters.
type SearchRequest struct {
	Query string `json:"query"`
	Mode  Mode   `json:"mode,omitempty"`
	// Limit caps the results (default 10, at most 1000).
	Limit int           `json:"limit,omitempty"`
	Pools []driver.Pool `json:"pools,omitempty"` // nil: every pool
	Types []driver.Type `json:"types,omitempty"` // nil: every type
	// ValidAt asks what was true at that time: only memories whose
	// valid_from/valid_to interval contains it. Zero means AsOf when AsOf is
	// set (what the store believed was true then), else now.
	ValidAt time.Time `json:"valid_at,omitzero"`
	// AsOf asks what the store believed at that time: every memory is seen
	// at the version that was current then (by UpdatedAt), and memories
	// created later are left out. Zero means the current versions.
	AsOf time.Time `json:"as_of,omitzero"`
	// MMR re-ranks the result by maximal marginal relevance so that
	// paraphrases do not take every slot; MMRLambda (0: the configured
	// search.mmr_lambda) balances relevance against novelty.
	MMR       bool    `json:"mmr,omitempty"`
	MMRLambda float64 `json:"mmr_lambda,omitempty"`
	// NoExpand turns off graph and session expansion for this search.
	NoExpand bool `json:"no_expand,omitempty"`
	// IncludeQuarantined also returns memories waiting in the review queue
	// (status quarantined), which are otherwise invisible to recall.
	IncludeQuarantined bool `json:"include_quarantined,omitempty"`
	// ReferenceTime is the question's "now": what the time words of the
	// query ("yesterday", "last weekend", "in May", "two weeks ago") are
	// read against (zero: the search's clock). It is not a third clock: it
	// filters nothing by itself (ValidAt and AsOf do), it says when the
	// question was asked; see stage_time.go.
	ReferenceTime time.Time `json:"reference_time,omitzero"`
}

// SearchResult is the answer to a SearchRequest.
type SearchResult struct {
	Query string `json:"query"`
	Mode  Mode   `json:"mode"`
	// Keyword is the keyword query actually run, in canonical FTS5 syntax
	// ("" when the keyword index was not used).
	Keyword string   `json:"keyword,omitempty"`
	Hits    []Result `json:"hits"`
	// Time is what the query says about time (nil when it names none and
	// does not ask for one): the reference time, the expressions found and
	// their intervals.
	Time *QueryTime `json:"time,omitempty"`
}

// Result is one memory in a SearchResult with how it ranked.
type Result struct {
	Memory *driver.Memory `json:"memory"`
	Score  float64        `json:"score"`
	// KeywordRank and VectorRank are 1-based ranks in each retriever (0: not found by it).
	KeywordRank int     `json:"keyword_rank,omitempty"`
	VectorRank  int     `json:"vector_rank,omitempty"`
	Similarity  float64 `json:"similarity,omitempty"`
	// Origin says how the memory entered the result: "" when a retriever
	// found it, else the expansion that added it, such as "session of 12"
	// or "supports from 12".
	Origin string `json:"origin,omitempty"`
	// Mentions are, when the query asks for a time ("when…"), the dates
	// the memory's content mentions, resolved against its event time
	// ("yesterday" in a turn of 8 May 2023 is 7 May 2023).
	Mentions []TimeMention `json:"time_mentions,omitempty"`
	// EventTime is, when the query names or asks for a time, when what the
	// memory records happened: its valid_from, else its created_at.
	EventTime time.Time `json:"event_time,omitzero"`
}
