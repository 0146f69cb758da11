package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/api"
)

// TestHSTS_EveryResponseWhenPublicURLIsHTTPS: with an https public URL,
// every answer — API, probe, desk, a 404 — tells the browser to stay on
// https for at least a year; on a loopback http URL nothing is sent.
func TestHSTS_EveryResponseWhenPublicURLIsHTTPS(t *testing.T) {
	apiHandler, err := api.New(api.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	desk := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusSeeOther) })
	paths := []string{"/v1/operations", "/healthz", "/metrics", "/desk", "/static/app.css", "/nowhere"}

	cfg, err := configFromEnv(env(oidcEnv...))
	if err != nil {
		t.Fatal(err)
	}
	h := withHSTS(routes(apiHandler, desk), cfg.SignIn.PublicURL)
	for _, p := range paths {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		v := w.Header().Get("Strict-Transport-Security")
		age, ok := strings.CutPrefix(v, "max-age=")
		n, _ := strconv.Atoi(strings.SplitN(age, ";", 2)[0])
		if !ok || n < 31536000 {
			t.Errorf("GET %s (%d): Strict-Transport-Security %q, want max-age ≥ 31536000", p, w.Code, v)
		}
	}

	dev, err := configFromEnv(env())
	if err != nil {
		t.Fatal(err)
	}
	h = withHSTS(routes(apiHandler, desk), dev.SignIn.PublicURL)
	for _, p := range paths {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		if v := w.Header().Get("Strict-Transport-Security"); v != "" {
			t.Errorf("GET %s over plain http: Strict-Transport-Security %q", p, v)
		}
	}
}
