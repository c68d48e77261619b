package core

import (
	"github.com/memos-go/memos/core/internal/consolidate"
	"github.com/memos-go/memos/core/internal/govern"
)

// DefaultGovernConfig returns the governance policy the engine uses when
// none is given: every field at its documented default.
func DefaultGovernConfig() GovernConfig { return govern.Defaults(GovernConfig{}) }

// DefaultConsolidateConfig returns the consolidation thresholds the engine
// uses when none are given: every field at its documented default.
func DefaultConsolidateConfig() ConsolidateConfig { return consolidate.Defaults(ConsolidateConfig{}) }
