package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestExecuteCommand: handoff execute sends one POST /v1/execute/TYPE as a
// workflow tool would — the token, the key in Idempotency-Key, the content
// as the body — and prints the answer.
func TestExecuteCommand(t *testing.T) {
	t.Setenv("HANDOFF_API_TOKEN", "")
	var got *http.Request
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, body = r, string(b)
		w.Header().Set("Location", "/v1/operations/op_1")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"id":"op_1","state":"action_pending"}`))
	}))
	defer srv.Close()
	var out bytes.Buffer
	err := executeCmd(context.Background(), config{Addr: "127.0.0.1:1"},
		[]string{"charge.create", "order_1:charge", "--content", `{"amount": 5}`, "--url", srv.URL, "--token", "hk_t", "--async"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if got.URL.Path != "/v1/execute/charge.create" || got.Header.Get("Authorization") != "Bearer hk_t" ||
		got.Header.Get("Idempotency-Key") != "order_1:charge" || got.Header.Get("Prefer") != "respond-async" || body != `{"amount": 5}` {
		t.Fatalf("sent %s %v %q", got.URL, got.Header, body)
	}
	if s := out.String(); !strings.Contains(s, "202 Accepted") || !strings.Contains(s, "Location: /v1/operations/op_1") || !strings.Contains(s, `"state": "action_pending"`) {
		t.Fatalf("printed:\n%s", s)
	}
	for _, bad := range [][]string{{"t"}, {"t", "k", "--content", "[1]", "--token", "x"}, {"t", "k", "--url", srv.URL}} {
		if err := executeCmd(context.Background(), config{}, bad, &out); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
