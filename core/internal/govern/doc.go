// Package govern is memos' governance: the audit chain (append, verify,
// export), the quarantine policy with the contradiction detector (the
// secret detector is core/secret), the review queue's read, forget-source's
// closure over derived_from edges and lessons' scoring.
//
// It is written over core/driver's transactions (driver.Tx, driver.ReadTx)
// and never imports the engine: the engine (package core) opens the
// transactions, checks scope and permissions, and passes what a function
// needs — a clock, a vector search, a scoped read — as arguments. Core
// re-exports the types its API returns (AuditReport, GovernConfig, …) as
// aliases.
//
// The audit chain's format is fixed: entries written by any earlier memos
// must keep verifying, so AuditHash and VersionHash never change.
package govern
