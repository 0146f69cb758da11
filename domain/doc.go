// Package domain is Handoff's core: the operation and its attempts, content
// snapshots and audit events; the state machine as a pure transition
// function; retry safety cards and the policy that enforces them; canonical
// JSON fingerprints; the Error type with its codes; the Store interface that
// adapters implement; and the Ledger, whose methods are the use cases.
//
// It imports nothing but the standard library. Every decision about what may
// happen to an operation is taken here, never in the HTTP or SQL layers.
package domain
