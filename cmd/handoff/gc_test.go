package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: the server's collector target is serverGCPercent unless the
// environment sets GOGC, which is then left alone.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if p, set := tuneGC(getenv); !set || p != serverGCPercent {
		t.Fatalf("without GOGC: %d %v", p, set)
	}
	if got := debug.SetGCPercent(100); got != serverGCPercent {
		t.Fatalf("the collector's target is %d, want %d", got, serverGCPercent)
	}
	env["GOGC"] = "50"
	if _, set := tuneGC(getenv); set {
		t.Fatal("GOGC in the environment was overridden")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set the target moved to %d", got)
	}
}
