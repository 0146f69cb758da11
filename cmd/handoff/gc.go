package main

import "runtime/debug"

// serverGCPercent is the garbage collector's target for `handoff serve`
// when the environment names none. The server's live heap is small (a few
// requests' JSON and statements each), so at Go's default of 100 it
// collects very often; at 400 it spends less of the server's CPU per
// lifecycle on collection (docs/design/performance-log.md), CPU that
// PostgreSQL shares on a small machine. The price is a heap up to five
// times what is live instead of twice; GOGC or GOMEMLIMIT in the
// environment take precedence.
const serverGCPercent = 400

// tuneGC sets serverGCPercent unless GOGC is set, and says what it did.
func tuneGC(getenv func(string) string) (percent int, set bool) {
	if getenv("GOGC") != "" {
		return 0, false
	}
	debug.SetGCPercent(serverGCPercent)
	return serverGCPercent, true
}
