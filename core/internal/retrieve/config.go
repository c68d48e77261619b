package retrieve

import (
	"maps"
	"math"
	"slices"
	"time"

	"github.com/memos-go/memos/core/driver"
)

// SearchConfig holds the ranking weights and thresholds of the retrieval
// pipeline. Zero fields take the defaults documented on each field; where
// "off" must be expressible, a negative value turns the stage off.
//
// Fusion, vector weight, session expansion and query feedback were chosen
// by cross-validation with examples/retrieval-eval -cv (README, "Quality
// (measured)"): a grid of settings tuned on some LoCoMo conversations,
// LongMemEval-S and SciFact questions and measured on the held-out ones,
// with the wordvec (GloVe) and hash embedders; quoted as "CV". The other
// fusion and gate numbers below are earlier sweeps of hybrid+expansion
// turn recall@10 on all of LoCoMo (five conversations, 760 questions of
// categories 1–4, one raw memory per turn) with wordvec; the gate's
// thresholds were also checked on LongMemEval-S (turn recall@10). LoCoMo cannot
// measure the rest — its turns share significance, trust, pool and ingest
// time and it has no edges — so significance, trust, recency, pool, graph
// and MMR settings are design choices, pinned by unit tests.
type SearchConfig struct {
	// Candidates is how many candidates each retriever contributes, at least
	// the request's limit (default 30: 0.682 at 20, 0.684 at 30, 0.685 at 50;
	// each candidate costs a record read, so 30).
	Candidates int `koanf:"candidates" json:"candidates"`
	// RRFK is reciprocal rank fusion's k, used when Fusion is "rrf" (default 20: with vector weight 0.5,
	// 0.644 / 0.645 / 0.648 / 0.604 at k 5 / 10 / 20 / the customary 60;
	// with equal weights 0.605 at 20, 0.555 at 120).
	RRFK float64 `koanf:"rrf_k" json:"rrf_k"`
	// Fusion is how the ranked lists are merged: "score" (the default;
	// score-aware: each hit adds weight × its normalised score, see
	// FusionScore) or "rrf" (weighted reciprocal rank fusion). CV: score
	// fusion was chosen on every LoCoMo and SciFact fold with both
	// embedders; it keeps hybrid search at keyword search's nDCG@10 there
	// (SciFact, wordvec: rrf 0.608, score 0.689, keyword 0.690). On
	// LongMemEval-S (93 questions) the folds split, and with wordvec the
	// defaults' recall@10 fell from 0.798 (rrf) to 0.768 (keyword 0.766),
	// with hash it rose from 0.746 to 0.779.
	Fusion string `koanf:"fusion" json:"fusion"`
	// KeywordWeight and VectorWeight weight the two retrievers in fusion
	// (defaults 1 and 0.6). Chosen by leaving one data set out (README,
	// "Quality (measured)"): in the CV run of 1 December 2026, vector
	// weight 0.6 beats 0.4 at recall@10 on the other two data sets whichever
	// is left out, with wordvec (LoCoMo 0.708 → 0.716, LongMemEval-S 0.870
	// → 0.877, SciFact 0.801 → 0.802), and moves hash by at most 0.002
	// (LoCoMo 0.703 → 0.702, SciFact 0.800 → 0.802). An earlier sweep,
	// before the long-turn factor, found LoCoMo flat with wordvec and 0.4
	// best with hash (0.681 / 0.684 / 0.677 at 0.25 / 0.4 / 0.6). Under rrf,
	// equal weights fell below keyword alone.
	KeywordWeight float64 `koanf:"keyword_weight" json:"keyword_weight"`
	VectorWeight  float64 `koanf:"vector_weight" json:"vector_weight"`
	// VectorAgreement: the vector list's weight is scaled by its agreement
	// with the keyword list — the share a of the first ten hits of the
	// shorter list that are among the first ten of the other — as
	// min(1, a/VectorAgreement): a vector list that proposes other memories
	// than a keyword search that found some leaves its ranking as it is,
	// and one that shares at least this share with it counts fully (default
	// 0.1: one memory in ten; negative: off; see vectorWeight in
	// stage_fuse.go). Chosen by leaving one data set out and one LoCoMo
	// conversation out (docs/benchmarks.md, "Fusion that holds on unseen
	// data"): against no rule, LongMemEval-S session recall@5 0.892 → 0.908
	// with wordvec (keyword 0.896), LoCoMo and SciFact unchanged; 0.2 / 0.3
	// / 1 cost LoCoMo recall@10 (0.714 / 0.712 / 0.704 against 0.717).
	VectorAgreement float64 `koanf:"vector_agreement" json:"vector_agreement"`

	// SignificanceBoost scales the score by 1 + boost·(significance−5)/5 (default 0.2).
	SignificanceBoost float64 `koanf:"significance_boost" json:"significance_boost"`
	// TrustWeight scales the score by 1 − w·(1 − trust score) (default 0.5).
	TrustWeight float64 `koanf:"trust_weight" json:"trust_weight"`
	// RecencyHalfLife: the recency factor halves its bonus every half-life of
	// age since the version was written (default 720h = 30 days).
	RecencyHalfLife time.Duration `koanf:"recency_half_life" json:"recency_half_life"`
	// RecencyWeight is the most recency can add: score·(1 − w + w·2^(−age/half-life)) (default 0.1).
	RecencyWeight float64 `koanf:"recency_weight" json:"recency_weight"`
	// DistilledBoost scales the score of memories in the memory and
	// knowledge pools by 1 + boost, so that a distilled memory ranks above a
	// raw turn of equal relevance (default 0.05; negative: off).
	DistilledBoost float64 `koanf:"distilled_boost" json:"distilled_boost"`

	// The relevance gate keeps a candidate when at least one retriever found
	// it with a strong match (see gate in stage_gate.go).

	// MinSimilarity: a vector match below this cosine similarity is weak
	// (default 0.3; 0.2 and 0.4 measured the same: in hybrid searches
	// RelativeSimilarity decides, this guards vector-only searches and small
	// stores).
	MinSimilarity float64 `koanf:"min_similarity" json:"min_similarity"`
	// RelativeSimilarity: in a hybrid search, a vector match below this share
	// of the best similarity among the candidates is weak (default 0.8:
	// 0.665 at 0.6 against 0.682 at 0.8, and on LongMemEval-S 0.780 against
	// 0.785 — weak candidates dropped leave their places to session
	// neighbours).
	RelativeSimilarity float64 `koanf:"relative_similarity" json:"relative_similarity"`
	// RelativeKeyword: in a hybrid search, a keyword match scoring below this
	// share of the best keyword score is weak — typically a memory that
	// matched only a common word of the query (default 0.25: LoCoMo 0.682
	// at 0.25 with 17.7 results of 20, 0.684 at 0.4 with 14.7; but on
	// LongMemEval-S turn recall@10 0.785 at 0.25 against 0.756 at 0.4, where
	// 0.4 fell below keyword search alone, 0.766; negative: off).
	RelativeKeyword float64 `koanf:"relative_keyword" json:"relative_keyword"`
	// KeepKeyword: in a hybrid search, the gate keeps every memory that
	// keyword search alone would return within KeepKeyword × the
	// request's limit places, whatever RelativeKeyword says — so that a
	// hybrid search never loses what a keyword search of the same question
	// would have shown (default 1: keyword search's own result; negative:
	// off; see keywordResult in stage_gate.go). The relative threshold cost
	// hybrid search what keyword search found: LoCoMo recall@20 without
	// expansion 0.671 against keyword's 0.701 (wordvec; 0.669 with hash),
	// 0.700 and 0.701 with this rule. With expansion, recall@20 0.787 →
	// 0.788 (wordvec) and 0.784 → 0.787 (hash), recall@10 0.716 → 0.716
	// and 0.703 → 0.702 (docs/benchmarks.md, "The gate keeps keyword
	// search's result"); 0.5 (keyword search's first half) measured the same.
	KeepKeyword float64 `koanf:"keep_keyword" json:"keep_keyword"`
	// KeepKeywordRank: where the memories the gate keeps only because
	// keyword search alone returns them (KeepKeyword) rank. KeepRankScore:
	// by their own score, among the others; KeepRankAfter: below every
	// memory that passed the gate on its own (their scores scaled by one
	// factor), so that they take places the gate's own result leaves empty,
	// and compete with expansion's neighbours by score; KeepRankLast: after
	// every other memory of the result, expansion's neighbours included.
	// In either of the last two a seed's neighbour among them ranks like
	// any neighbour (see expand). Default KeepRankLast (see rankKept and
	// docs/benchmarks.md, "Kept memories rank last"): against score, LoCoMo
	// recall@5 0.6065 → 0.6091 and recall@20 0.7879 → 0.7893 (wordvec),
	// recall@10 0.7020 → 0.7039 (hash); LongMemEval-S unchanged. After
	// cost LongMemEval-S recall@10 (0.877 → 0.872, wordvec): a kept
	// memory next to a seed kept only its scaled score.
	KeepKeywordRank string `koanf:"keep_keyword_rank" json:"keep_keyword_rank"`
	// TrustGate raises a candidate's gate thresholds by the factor
	// 1 + TrustGate·(1 − trust score): a low-trust memory needs a stronger
	// match to surface (default 1: a contradicted memory, trust 0.2, needs
	// 1.8 times the match of a certain one; negative: off). Note that a
	// memory of the default trust (inferred, 0.8) meets thresholds 1.2 times
	// the configured ones: the measurements above, on stores where every
	// memory has that trust, were made at effective thresholds of 0.36
	// (MinSimilarity), 0.96 (RelativeSimilarity) and 0.30 (RelativeKeyword).
	TrustGate float64 `koanf:"trust_gate" json:"trust_gate"`

	// ExpandSeeds is how many of the best results expansion starts from
	// (default 5; 3 and 10 measured the same at recall@10; negative: no
	// expansion).
	ExpandSeeds int `koanf:"expand_seeds" json:"expand_seeds"`
	// ExpandBudget is the most memories expansion may add to a result
	// (default 10; 20 measured the same).
	ExpandBudget int `koanf:"expand_budget" json:"expand_budget"`
	// SessionWindow is how many turns before and after a seed in the same
	// session expansion adds (default 2; negative: no session expansion).
	// CV, LoCoMo with wordvec: window 2 with SessionFactor 0.6 was chosen
	// on all five folds (out of fold recall@10 0.697 against 0.680 for
	// window 1, factor 0.8).
	SessionWindow int `koanf:"session_window" json:"session_window"`
	// SessionFactor: a session neighbour at distance d scores
	// seed score·SessionFactor/d (default 0.6; see SessionWindow).
	SessionFactor float64 `koanf:"session_factor" json:"session_factor"`
	// ExpandProtect: expansion ranks below every keyword hit among the
	// result's first places that scored at least ExpandProtect × the best
	// keyword score, so that a seed's neighbours fill the places of weak
	// matches but never push out strong ones (default 0.8; negative: off;
	// see protectedFloor in stage_expand.go). On the dev sets it moves
	// nothing by more than 0.001 (0.5 costs LoCoMo); it guards the loss
	// expansion caused on unseen LongMemEval-S questions (issue 34).
	ExpandProtect float64 `koanf:"expand_protect" json:"expand_protect"`
	// ExpandProtectBy is what makes a keyword hit strong for ExpandProtect:
	// ProtectKeyword, its keyword score against the best; ProtectWeighed,
	// its score in a keyword search of the same request (weighed by the
	// time stage, the long-turn factor, trust and the rest) against the
	// best such score, so that a keyword hit of another time than the
	// question names is not evidence expansion must rank below. Default
	// ProtectWeighed: on the dev sets it measures as ExpandProtect off
	// (LoCoMo recall@10 0.7175 against 0.7162 by keyword score, wordvec;
	// LongMemEval-S unchanged), while a hit that keyword search itself
	// ranks strongly is still protected (docs/benchmarks.md, "Kept
	// memories rank last").
	ExpandProtectBy string `koanf:"expand_protect_by" json:"expand_protect_by"`
	// GraphFactor: a graph neighbour scores seed score·GraphFactor·edge
	// weight·EdgeFactors[type] (default 0.5; negative: no graph expansion).
	GraphFactor float64 `koanf:"graph_factor" json:"graph_factor"`
	// EdgeFactors weighs edge types in graph expansion; types not listed
	// count 0.5. Defaults: supports 1, derived_from 0.9, relates_to 0.8,
	// temporal_precedes 0.6, contradicts 0.6 (a contradiction is worth
	// showing next to what it contradicts). A factor of 0 never expands
	// over that type. Keys given in the config replace the default for that
	// type only.
	EdgeFactors map[string]float64 `koanf:"edge_factors" json:"edge_factors"`

	// MMRLambda balances relevance against novelty when a search asks for
	// MMR: λ·relevance − (1−λ)·(similarity to what is already chosen)
	// (default 0.7).
	MMRLambda float64 `koanf:"mmr_lambda" json:"mmr_lambda"`

	// RerankTop is how many of the best candidates (after the gate, before
	// expansion) the configured Reranker reorders (default 30; negative:
	// never rerank). Without a Reranker the stage does not run.
	RerankTop int `koanf:"rerank_top" json:"rerank_top"`
	// RerankTimeout bounds one call to the reranker (default 5s); past it
	// the search keeps the fused order.
	RerankTimeout time.Duration `koanf:"rerank_timeout" json:"rerank_timeout"`
	// RerankPauseAfter is how many reranker failures in a row make searches
	// skip it for RerankPause (default 3; negative: never skip it), so that
	// a reranker that is down costs each search nothing rather than its
	// timeout. After the pause one search tries it again; until one call
	// succeeds the others keep skipping it.
	RerankPauseAfter int `koanf:"rerank_pause_after" json:"rerank_pause_after"`
	// RerankPause is how long searches skip a failing reranker (default 30s).
	RerankPause time.Duration `koanf:"rerank_pause" json:"rerank_pause"`

	// FeedbackTerms is how many terms query feedback adds to a keyword
	// search (pseudo-relevance feedback over the first pass's best hits;
	// see stage_feedback.go): default 5; negative: off.
	FeedbackTerms int `koanf:"feedback_terms" json:"feedback_terms"`
	// FeedbackQueries says which searches feedback runs for:
	// FeedbackDocuments (default) when most of the first pass's
	// FeedbackDocs best hits are documents (type document), FeedbackShort
	// for queries of at most FeedbackMaxQueryTerms content terms and for
	// weak first passes, FeedbackAll for every hybrid search. CV: over
	// SciFact's abstracts feedback raises nDCG@10 0.688 → 0.693 (wordvec,
	// chosen on both folds; hash 0.692 → 0.693); over conversation turns it
	// costs (LoCoMo recall@10 0.717 → 0.712 short, 0.701 all, wordvec).
	FeedbackQueries string `koanf:"feedback_queries" json:"feedback_queries"`
	// FeedbackDocs is how many of the first pass's best keyword hits
	// feedback reads (default 5); with FeedbackShort, a first pass with
	// fewer hits is weak, and feedback runs whatever the length of the
	// query.
	FeedbackDocs int `koanf:"feedback_docs" json:"feedback_docs"`
	// FeedbackMaxQueryTerms: with FeedbackShort, feedback runs for queries
	// of at most this many content terms (default 4).
	FeedbackMaxQueryTerms int `koanf:"feedback_max_query_terms" json:"feedback_max_query_terms"`
	// FeedbackWeight weights the extended query's hits in fusion, like
	// KeywordWeight (default 0.5).
	FeedbackWeight float64 `koanf:"feedback_weight" json:"feedback_weight"`

	// DisableAccessTracking turns off the access statistics (last access,
	// count) that searches and packs record for returned memories.
	DisableAccessTracking bool `koanf:"disable_access_tracking" json:"disable_access_tracking"`
	// AccessFlush is how long access statistics gather in memory before
	// they are written, in one transaction (default 1s). A crash loses at
	// most this much of them; Close writes them.
	AccessFlush time.Duration `koanf:"access_flush" json:"access_flush"`

	// Time in the question (see stage_time.go). TimeBoost: when the query
	// names a time ("last weekend", "in May 2023"), a memory whose event
	// time falls in it scores ×(1 + TimeBoost), one near it less (default
	// 1; negative: the whole time stage is off — time words stay in the
	// keyword query and DatedBoost does not apply either). Chosen by
	// cross-validation (hybrid+expansion recall@10, wordvec; LoCoMo
	// conversations 0–2 against 3–4): 0.25 / 0.5 / 1 / 2 gave 0.724 / 0.724
	// / 0.724 / 0.716 and 0.671 / 0.674 / 0.686 / 0.687; 3–4's pick, 2, loses
	// on 0–2, so 1 stays. On LongMemEval-S (questions 0–49 against 50–99)
	// all four tie: few of its questions name a time.
	TimeBoost float64 `koanf:"time_boost" json:"time_boost"`
	// TimeCandidates: when the query names a time, each retriever is read
	// this deep, and what it finds past Candidates joins only when its event
	// time is in or near the named time (default 100; negative: off; on the
	// dev sets it moved recall@10 by at most 0.005, as few of their
	// questions name a time, but it is what finds "what did I buy last
	// weekend" in a large store).
	TimeCandidates int `koanf:"time_candidates" json:"time_candidates"`
	// DatedBoost: when the question asks for a time ("when…", "how long
	// ago…"), a memory whose content mentions a date or a relative time
	// scores ×(1 + DatedBoost) (default 0.3; negative: off). In the same
	// folds 0.15 / 0.3 / 0.6 gave LoCoMo 0.720 / 0.724 / 0.728 and 0.684 /
	// 0.686 / 0.686, LongMemEval-S 0.830 / 0.834 / 0.834 and 0.789 / 0.792
	// / 0.792: out of fold 0.6 and 0.3 are the same, so 0.3 (set before
	// measuring) stays. It is what lifts LoCoMo's temporal questions.
	DatedBoost float64 `koanf:"dated_boost" json:"dated_boost"`

	// TurnLengthPivot and TurnLengthWeight: a conversation turn (type turn)
	// whose content is longer than TurnLengthPivot bytes scores
	// ×1/(1 + TurnLengthWeight·ln(length/TurnLengthPivot)) (see
	// lengthFactor in stage_weigh.go), so that a long turn that matches
	// many words of a question because it says a lot — a chat assistant's
	// long answer, pasted text — does not crowd out the short turn that
	// states the fact. Other types (documents, facts) are not weighed by
	// length (BM25 already weighs a document's length). Defaults 500 and 1
	// (negative weight: off). A turn of 1,500 bytes scores ×0.48, one of
	// 3,000 ×0.36. CV, LongMemEval-S (where the facts are in the user's
	// turns, 185 bytes at the median, and the assistant's answers run to
	// 1,700): recall@10 0.800 → 0.870 and nDCG@10 0.648 → 0.727 with wordvec
	// (weights 0.5 / 1 / 2: 0.866 / 0.870 / 0.870); LoCoMo's turns are short
	// and SciFact's abstracts are documents: unchanged. A pivot of 300 or
	// 200 bytes costs LoCoMo recall@10 (0.708 → 0.703 / 0.672, wordvec).
	TurnLengthPivot  int     `koanf:"turn_length_pivot" json:"turn_length_pivot"`
	TurnLengthWeight float64 `koanf:"turn_length_weight" json:"turn_length_weight"`
	// SessionDiversity, SessionDiversityTop and SessionDiversityQueries:
	// for the questions SessionDiversityQueries names, the first
	// SessionDiversityTop places of the result (default 5) are chosen so
	// that one session does not take them all — a memory counts
	// ×SessionDiversity for each memory of its session already placed
	// there; the places after them follow the score (see diversify in
	// stage_diversity.go). SessionDiversity is a factor within (0,1)
	// (default 0.8; 1 or negative: off). SessionDiversityQueries is
	// "counting" (the default: questions that count or add up, "how many",
	// "how much", "total", "altogether"; see query.AsksCount), whose answer
	// gathers memories from several occasions, or "all".
	// CV: applied to all questions, 0.8 was chosen on both LongMemEval-S
	// folds (many separate chats; session recall@5 0.872 → 0.908 with
	// wordvec, turn recall@10 unchanged) but cost LoCoMo, whose evidence
	// often lies in several turns of one session, recall@5 0.612 → 0.568
	// and nDCG@10 0.538 → 0.529. Applied to counting questions only,
	// LongMemEval-S session recall@5 is 0.892 and LoCoMo is unchanged
	// (recall@5 0.611): the default (README, "Quality (measured)").
	SessionDiversity        float64 `koanf:"session_diversity" json:"session_diversity"`
	SessionDiversityQueries string  `koanf:"session_diversity_queries" json:"session_diversity_queries"`
	SessionDiversityTop     int     `koanf:"session_diversity_top" json:"session_diversity_top"`
}

// defaultEdgeFactors are EdgeFactors' defaults.
var defaultEdgeFactors = map[string]float64{
	string(driver.EdgeSupports):         1,
	string(driver.EdgeDerivedFrom):      0.9,
	string(driver.EdgeRelatesTo):        0.8,
	string(driver.EdgeTemporalPrecedes): 0.6,
	string(driver.EdgeContradicts):      0.6,
}

// otherEdgeFactor is the factor of an edge type EdgeFactors does not list.
const otherEdgeFactor = 0.5

// DefaultSearchConfig returns the configuration the engine uses when none
// is given: every field at its documented default.
func DefaultSearchConfig() SearchConfig { return SearchConfig{}.withDefaults() }

func (c SearchConfig) withDefaults() SearchConfig {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	defInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defInt(&c.Candidates, 30)
	if c.Fusion == "" {
		c.Fusion = FusionScore
	}
	def(&c.RRFK, 20)
	def(&c.KeywordWeight, 1)
	def(&c.VectorWeight, 0.6)
	def(&c.VectorAgreement, 0.1)
	def(&c.ExpandProtect, 0.8)
	def(&c.SignificanceBoost, 0.2)
	def(&c.TrustWeight, 0.5)
	def(&c.RecencyWeight, 0.1)
	def(&c.DistilledBoost, 0.05)
	def(&c.MinSimilarity, 0.3)
	def(&c.RelativeSimilarity, 0.8)
	def(&c.RelativeKeyword, 0.25)
	def(&c.KeepKeyword, 1)
	if c.ExpandProtectBy == "" {
		c.ExpandProtectBy = ProtectWeighed
	}
	if c.KeepKeywordRank == "" {
		c.KeepKeywordRank = keepRankDefault
	}
	def(&c.TrustGate, 1)
	defInt(&c.ExpandSeeds, 5)
	defInt(&c.ExpandBudget, 10)
	defInt(&c.SessionWindow, 2)
	def(&c.SessionFactor, 0.6)
	def(&c.GraphFactor, 0.5)
	def(&c.MMRLambda, 0.7)
	defInt(&c.RerankTop, 30)
	defInt(&c.FeedbackTerms, 5)
	if c.FeedbackQueries == "" {
		c.FeedbackQueries = FeedbackDocuments
	}
	defInt(&c.FeedbackDocs, 5)
	defInt(&c.FeedbackMaxQueryTerms, 4)
	def(&c.FeedbackWeight, 0.5)
	if c.RerankTimeout == 0 {
		c.RerankTimeout = 5 * time.Second
	}
	defInt(&c.RerankPauseAfter, 3)
	if c.AccessFlush == 0 {
		c.AccessFlush = time.Second
	}
	if c.RerankPause == 0 {
		c.RerankPause = 30 * time.Second
	}
	def(&c.TimeBoost, 1)
	defInt(&c.TimeCandidates, 100)
	def(&c.DatedBoost, 0.3)
	defInt(&c.TurnLengthPivot, 500)
	def(&c.TurnLengthWeight, 1)
	defInt(&c.SessionDiversityTop, 5)
	def(&c.SessionDiversity, 0.8)
	if c.SessionDiversityQueries == "" {
		c.SessionDiversityQueries = DiversityCounting
	}
	if c.RecencyHalfLife == 0 {
		c.RecencyHalfLife = 30 * 24 * time.Hour
	}
	ef := maps.Clone(defaultEdgeFactors)
	maps.Copy(ef, c.EdgeFactors)
	c.EdgeFactors = ef
	return c
}

func (c SearchConfig) validate() error {
	finite := func(vs ...float64) bool {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		return true
	}
	switch {
	case !finite(c.RRFK, c.KeywordWeight, c.VectorWeight, c.SignificanceBoost, c.TrustWeight, c.RecencyWeight,
		c.DistilledBoost, c.MinSimilarity, c.RelativeSimilarity, c.RelativeKeyword, c.KeepKeyword, c.TrustGate, c.VectorAgreement, c.ExpandProtect,
		c.SessionFactor, c.GraphFactor, c.MMRLambda, c.TimeBoost, c.DatedBoost, c.FeedbackWeight, c.TurnLengthWeight, c.SessionDiversity):
		return driver.Invalidf("search weights must be finite numbers")
	case c.Fusion != FusionRRF && c.Fusion != FusionScore:
		return driver.Invalidf("search.fusion %q is not rrf or score", c.Fusion)
	case c.Candidates < 1 || c.Candidates > 10000:
		return driver.Invalidf("search.candidates %d is outside 1–10000", c.Candidates)
	case c.RRFK <= 0:
		return driver.Invalidf("search.rrf_k must be positive")
	case c.KeywordWeight < 0 || c.VectorWeight < 0:
		return driver.Invalidf("search.keyword_weight and search.vector_weight must not be negative")
	case c.TrustWeight < 0 || c.TrustWeight > 1 || c.RecencyWeight < 0 || c.RecencyWeight > 1:
		return driver.Invalidf("search.trust_weight and search.recency_weight must be within [0,1]")
	case c.RecencyHalfLife < 0:
		return driver.Invalidf("search.recency_half_life must be positive")
	case c.MinSimilarity < 0 || c.MinSimilarity > 1 || c.RelativeSimilarity < 0 || c.RelativeSimilarity > 1:
		return driver.Invalidf("search.min_similarity and search.relative_similarity must be within [0,1]")
	case c.VectorAgreement > 1 || c.ExpandProtect > 1:
		return driver.Invalidf("search.vector_agreement and search.expand_protect must be at most 1 (negative turns them off)")
	case c.RelativeKeyword > 1:
		return driver.Invalidf("search.relative_keyword must be at most 1 (negative turns the keyword gate off)")
	case c.ExpandProtectBy != ProtectKeyword && c.ExpandProtectBy != ProtectWeighed:
		return driver.Invalidf("search.expand_protect_by %q is not %s or %s", c.ExpandProtectBy, ProtectKeyword, ProtectWeighed)
	case c.KeepKeywordRank != KeepRankScore && c.KeepKeywordRank != KeepRankAfter && c.KeepKeywordRank != KeepRankLast:
		return driver.Invalidf("search.keep_keyword_rank %q is not %s, %s or %s", c.KeepKeywordRank, KeepRankScore, KeepRankAfter, KeepRankLast)
	case c.KeepKeyword > 10:
		return driver.Invalidf("search.keep_keyword %v is over 10 (a multiple of the limit; negative turns it off)", c.KeepKeyword)
	case c.ExpandBudget < 0 || c.ExpandBudget > 1000:
		return driver.Invalidf("search.expand_budget %d is outside 0–1000", c.ExpandBudget)
	case c.SessionWindow > 100:
		return driver.Invalidf("search.session_window %d is over 100", c.SessionWindow)
	case c.SessionFactor < 0 || c.SessionFactor > 1 || c.GraphFactor > 1:
		return driver.Invalidf("search.session_factor and search.graph_factor must be at most 1 (session_factor within [0,1])")
	case c.MMRLambda < 0 || c.MMRLambda > 1:
		return driver.Invalidf("search.mmr_lambda must be within [0,1]")
	case c.FeedbackTerms > 50 || c.FeedbackDocs < 1 || c.FeedbackDocs > 100 || c.FeedbackWeight < 0:
		return driver.Invalidf("search.feedback_terms must be at most 50, search.feedback_docs within 1–100 and search.feedback_weight not negative")
	case c.FeedbackQueries != FeedbackDocuments && c.FeedbackQueries != FeedbackShort && c.FeedbackQueries != FeedbackAll:
		return driver.Invalidf("search.feedback_queries %q is not %s, %s or %s", c.FeedbackQueries, FeedbackDocuments, FeedbackShort, FeedbackAll)
	case c.RerankTop > 1000:
		return driver.Invalidf("search.rerank_top %d is over 1000", c.RerankTop)
	case c.RerankTimeout < 0:
		return driver.Invalidf("search.rerank_timeout must be positive")
	case c.RerankPause < 0:
		return driver.Invalidf("search.rerank_pause must be positive")
	case c.AccessFlush < 0 || c.AccessFlush > time.Hour:
		return driver.Invalidf("search.access_flush %v must be positive and at most an hour", c.AccessFlush)
	case c.TimeBoost > 10 || c.DatedBoost > 10:
		return driver.Invalidf("search.time_boost and search.dated_boost must be at most 10")
	case c.TurnLengthPivot < 1:
		return driver.Invalidf("search.turn_length_pivot %d must be positive (bytes)", c.TurnLengthPivot)
	case c.TurnLengthWeight > 10:
		return driver.Invalidf("search.turn_length_weight %v is over 10 (negative turns it off)", c.TurnLengthWeight)
	case c.SessionDiversity > 1:
		return driver.Invalidf("search.session_diversity %v is over 1 (a factor within (0,1); 1 or negative: off)", c.SessionDiversity)
	case c.SessionDiversityQueries != DiversityCounting && c.SessionDiversityQueries != DiversityAll:
		return driver.Invalidf("search.session_diversity_queries %q is not %s or %s", c.SessionDiversityQueries, DiversityCounting, DiversityAll)
	case c.SessionDiversityTop < 1 || c.SessionDiversityTop > 1000:
		return driver.Invalidf("search.session_diversity_top %d is outside 1–1000", c.SessionDiversityTop)
	case c.TimeCandidates > 10000:
		return driver.Invalidf("search.time_candidates %d is over 10000", c.TimeCandidates)
	}
	for _, k := range slices.Sorted(maps.Keys(c.EdgeFactors)) {
		if err := driver.ValidateEdgeType(driver.EdgeType(k)); err != nil {
			return driver.Invalidf("search.edge_factors: %v", err)
		}
		if v := c.EdgeFactors[k]; v < 0 || v > 10 || !finite(v) {
			return driver.Invalidf("search.edge_factors.%s = %v is outside 0–10", k, v)
		}
	}
	return nil
}

// edgeFactor is the weight of edge type t in graph expansion.
func (c *SearchConfig) edgeFactor(t driver.EdgeType) float64 {
	if f, ok := c.EdgeFactors[string(t)]; ok {
		return f
	}
	return otherEdgeFactor
}
