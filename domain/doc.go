// Package domain is Handoff's core: the operation and its attempts, content
// snapshots and audit events; the state machine as a pure transition
// function; retry safety cards and the policy that enforces them; canonical
// JSON fingerprints; the Error type with its codes; the store capabilities
// that adapters implement; and the use cases, one type per use — Workflow,
// Desk, Incidents, Bulk, Views, Outbox, Upkeep, Drills — each built on the
// narrow store interface it calls, over a shared core (core.go). Ledger
// builds them all over one store.
//
// It imports nothing but the standard library. Every decision about what may
// happen to an operation is taken here, never in the HTTP or SQL layers.
package domain
