package core

// DefaultGovernConfig returns the governance policy the engine uses when
// none is given: every field at its documented default.
func DefaultGovernConfig() GovernConfig { return GovernConfig{}.withDefaults() }

// DefaultConsolidateConfig returns the consolidation thresholds the engine
// uses when none are given: every field at its documented default.
func DefaultConsolidateConfig() ConsolidateConfig { return ConsolidateConfig{}.withDefaults() }
