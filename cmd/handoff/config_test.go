package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestConfig_ShutdownAndLogs(t *testing.T) {
	c, err := configFromEnv(env())
	if err != nil || c.ShutdownTimeout != 20*time.Second || c.LogFormat != "text" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = configFromEnv(env("HANDOFF_SHUTDOWN_TIMEOUT", "45s", "HANDOFF_LOG_FORMAT", "json"))
	if err != nil || c.ShutdownTimeout != 45*time.Second || c.LogFormat != "json" {
		t.Fatalf("set: %+v %v", c, err)
	}
	var buf bytes.Buffer
	c.logger(&buf).Info("handoff serving", "addr", "http://0.0.0.0:8080")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec["msg"] != "handoff serving" || rec["addr"] != "http://0.0.0.0:8080" {
		t.Fatalf("a JSON log record: %q %v", buf.String(), err)
	}
	for _, bad := range [][]string{{"HANDOFF_SHUTDOWN_TIMEOUT", "soon"}, {"HANDOFF_SHUTDOWN_TIMEOUT", "-1s"}, {"HANDOFF_LOG_FORMAT", "xml"}} {
		if _, err := configFromEnv(env(bad...)); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%s=%s: %v, want an error naming the variable", bad[0], bad[1], err)
		}
	}
}

func TestProbeAddr(t *testing.T) {
	for in, want := range map[string]string{"0.0.0.0:8080": "127.0.0.1:8080", "[::]:8080": "127.0.0.1:8080", ":8080": "127.0.0.1:8080",
		"127.0.0.1:9000": "127.0.0.1:9000", "handoff:8080": "handoff:8080", "[::1]:8080": "[::1]:8080"} {
		if got := probeAddr(in); got != want {
			t.Errorf("probeAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConfig_DBWriters: the group commit's writers default to the store's
// own choice (0), and a count outside 1–64 is refused with the variable's
// name.
func TestConfig_DBWriters(t *testing.T) {
	for in, want := range map[string]int{"": 0, "1": 1, "64": 64} {
		c, err := configFromEnv(env("HANDOFF_DB_WRITERS", in))
		if err != nil || c.DBWriters != want {
			t.Errorf("HANDOFF_DB_WRITERS=%q: %v %v, want %v", in, c.DBWriters, err, want)
		}
	}
	for _, bad := range []string{"0", "-1", "65", "two", "1.5"} {
		if _, err := configFromEnv(env("HANDOFF_DB_WRITERS", bad)); err == nil || !strings.Contains(err.Error(), "HANDOFF_DB_WRITERS") {
			t.Errorf("HANDOFF_DB_WRITERS=%s: %v, want an error naming the variable", bad, err)
		}
	}
}

// TestConfig_TokenCache: the cache defaults to 5 s, can be turned off
// (behind PgBouncer's transaction mode, where LISTEN is not delivered), and
// can never be made longer than a revocation may take to reach a replica.
func TestConfig_TokenCache(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 5 * time.Second, "0": 0, "2s": 2 * time.Second} {
		c, err := configFromEnv(env("HANDOFF_TOKEN_CACHE", in))
		if err != nil || c.TokenCache != want {
			t.Errorf("HANDOFF_TOKEN_CACHE=%q: %v %v, want %v", in, c.TokenCache, err, want)
		}
	}
	for _, bad := range []string{"1m", "-1s", "soon"} {
		if _, err := configFromEnv(env("HANDOFF_TOKEN_CACHE", bad)); err == nil || !strings.Contains(err.Error(), "HANDOFF_TOKEN_CACHE") {
			t.Errorf("HANDOFF_TOKEN_CACHE=%s: %v, want an error naming the variable", bad, err)
		}
	}
}

// TestConfig_Pprof: the runtime profiles are off by default and served only
// on a loopback address — they have no authentication of their own.
func TestConfig_Pprof(t *testing.T) {
	for _, in := range []string{"", "127.0.0.1:6060", "[::1]:0", "localhost:6060"} {
		c, err := configFromEnv(env("HANDOFF_PPROF", in))
		if err != nil || c.Pprof != in {
			t.Errorf("HANDOFF_PPROF=%q: %q %v", in, c.Pprof, err)
		}
	}
	for _, bad := range []string{":6060", "0.0.0.0:6060", "10.0.0.5:6060", "example.com:6060", "6060"} {
		if _, err := configFromEnv(env("HANDOFF_PPROF", bad)); err == nil || !strings.Contains(err.Error(), "HANDOFF_PPROF") {
			t.Errorf("HANDOFF_PPROF=%s: %v, want an error naming the variable", bad, err)
		}
	}
}
