// Package conformance holds the wire scenarios every Handoff client must
// pass — scenarios.json, read by the Go, Python and TypeScript suites — and
// the Go client's run of them. Each suite starts env (the real handoff
// binary, the sandbox provider and a fault-injecting proxy) and runs every
// scenario through its client's own run/Do.
package conformance
