package core

import "github.com/memos-go/memos/core/driver"

// The implementer's contract lives in core/driver, which backends, embedders
// and plugins import without linking the engine. These aliases let users of
// the engine name everything through core.

// Memory model.
type (
	Memory     = driver.Memory
	Embedding  = driver.Embedding
	Pool       = driver.Pool
	Type       = driver.Type
	TrustLevel = driver.TrustLevel
	Trust      = driver.Trust
	Status     = driver.Status
	EdgeType   = driver.EdgeType
	Edge       = driver.Edge
)

const (
	MaxContentBytes  = driver.MaxContentBytes
	DefaultNamespace = driver.DefaultNamespace
	HoldsSimilarity  = driver.HoldsSimilarity

	PoolRaw       = driver.PoolRaw
	PoolMemory    = driver.PoolMemory
	PoolKnowledge = driver.PoolKnowledge

	TypeFact         = driver.TypeFact
	TypePreference   = driver.TypePreference
	TypeEvent        = driver.TypeEvent
	TypeRelationship = driver.TypeRelationship
	TypeTurn         = driver.TypeTurn
	TypeDocument     = driver.TypeDocument
	TypeLesson       = driver.TypeLesson
	TypeKnowledge    = driver.TypeKnowledge
	TypeNote         = driver.TypeNote

	TrustCertain      = driver.TrustCertain
	TrustInferred     = driver.TrustInferred
	TrustImported     = driver.TrustImported
	TrustContradicted = driver.TrustContradicted

	StatusActive      = driver.StatusActive
	StatusQuarantined = driver.StatusQuarantined
	StatusArchived    = driver.StatusArchived

	EdgeRelatesTo        = driver.EdgeRelatesTo
	EdgeSupports         = driver.EdgeSupports
	EdgeContradicts      = driver.EdgeContradicts
	EdgeDerivedFrom      = driver.EdgeDerivedFrom
	EdgeTemporalPrecedes = driver.EdgeTemporalPrecedes
)

var (
	Pools       = driver.Pools
	Types       = driver.Types
	TrustLevels = driver.TrustLevels
	Statuses    = driver.Statuses

	ParsePool         = driver.ParsePool
	ParseType         = driver.ParseType
	ParseTrustLevel   = driver.ParseTrustLevel
	ParseStatus       = driver.ParseStatus
	ValidateNamespace = driver.ValidateNamespace
	ValidateEdgeType  = driver.ValidateEdgeType
	CompareRank       = driver.CompareRank
)

// Interfaces and the types they exchange.
type (
	Backend               = driver.Backend
	KeywordIndex          = driver.KeywordIndex
	Filter                = driver.Filter
	Hit                   = driver.Hit
	ScanOptions           = driver.ScanOptions
	ReadTx                = driver.ReadTx
	Tx                    = driver.Tx
	ChangeLog             = driver.ChangeLog
	Change                = driver.Change
	GraphWriter           = driver.GraphWriter
	AuditEntry            = driver.AuditEntry
	AuditReader           = driver.AuditReader
	Importer              = driver.Importer
	MultiGetter           = driver.MultiGetter
	BlobStore             = driver.BlobStore
	ChangeWaiter          = driver.ChangeWaiter
	Remover               = driver.Remover
	BackendStater         = driver.BackendStater
	Eraser                = driver.Eraser
	ErasureReporter       = driver.ErasureReporter
	Erasure               = driver.Erasure
	SessionReader         = driver.SessionReader
	SessionMember         = driver.SessionMember
	UpdateReader          = driver.UpdateReader
	RankReader            = driver.RankReader
	Counter               = driver.Counter
	CountOptions          = driver.CountOptions
	FacetCount            = driver.FacetCount
	AuditMemoryReader     = driver.AuditMemoryReader
	AuditTailReader       = driver.AuditTailReader
	AuditBindingReader    = driver.AuditBindingReader
	Embedder              = driver.Embedder
	ModelInfo             = driver.ModelInfo
	VectorIndex           = driver.VectorIndex
	PersistentVectorIndex = driver.PersistentVectorIndex
	VectorIndexSizer      = driver.VectorIndexSizer
	VectorHolder          = driver.VectorHolder
	VectorEntry           = driver.VectorEntry
	VectorFilter          = driver.VectorFilter
	Turn                  = driver.Turn
	Extraction            = driver.Extraction
	Extractor             = driver.Extractor
	Summarizer            = driver.Summarizer
	SummaryItem           = driver.SummaryItem
	Reranker              = driver.Reranker
)

// Errors: the sentinels are the driver's values, so errors.Is works across
// the two packages.
type (
	Error = driver.Error
	Kind  = driver.Kind
)

var (
	ErrNotFound          = driver.ErrNotFound
	ErrInvalid           = driver.ErrInvalid
	ErrDimensionMismatch = driver.ErrDimensionMismatch
	ErrModelMismatch     = driver.ErrModelMismatch
	ErrClosed            = driver.ErrClosed
	ErrConflict          = driver.ErrConflict
	ErrUnknownName       = driver.ErrUnknownName
	ErrUnavailable       = driver.ErrUnavailable
	ErrForbidden         = driver.ErrForbidden

	KindOf   = driver.KindOf
	Invalidf = driver.Invalidf
)

// The registry of backends and embedders.
type (
	BackendDriver    = driver.BackendDriver
	EmbedderDriver   = driver.EmbedderDriver
	ExtractorDriver  = driver.ExtractorDriver
	SummarizerDriver = driver.SummarizerDriver
	RerankerDriver   = driver.RerankerDriver
)

var (
	LookupBackend    = driver.LookupBackend
	BackendNames     = driver.BackendNames
	LookupEmbedder   = driver.LookupEmbedder
	EmbedderNames    = driver.EmbedderNames
	LookupExtractor  = driver.LookupExtractor
	ExtractorNames   = driver.ExtractorNames
	LookupSummarizer = driver.LookupSummarizer
	SummarizerNames  = driver.SummarizerNames
	LookupReranker   = driver.LookupReranker
	RerankerNames    = driver.RerankerNames
)

func invalidf(format string, args ...any) error { return driver.Invalidf(format, args...) }
