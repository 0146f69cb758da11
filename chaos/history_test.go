package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

// call is one request a client sent and what came back, as the history
// records it. Times are nanoseconds since the history began, on the
// monotonic clock.
type call struct {
	Client   int             `json:"client"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Request  json.RawMessage `json:"request,omitempty"`
	Invoke   int64           `json:"invoke_ns"`
	Complete int64           `json:"complete_ns"`
	Status   int             `json:"status,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
	Err      string          `json:"error,omitempty"`
	// Refused: the connection was refused, so the server never saw the
	// request (a replica that was down).
	Refused bool `json:"refused,omitempty"`
	// Replayed: the answer carried Idempotent-Replayed: true.
	Replayed bool `json:"replayed,omitempty"`
}

// lost reports whether the call's effect is unknown: no answer came, or the
// answer was one a lost database connection gives (503, and the gateway
// errors), which the server cannot always be sure of.
func (c call) lost() bool {
	return c.Err != "" || c.Status == http.StatusServiceUnavailable ||
		c.Status == http.StatusBadGateway || c.Status == http.StatusGatewayTimeout
}

// history is every call of a run, recorded by its RoundTripper.
type history struct {
	start time.Time
	next  http.RoundTripper
	mu    sync.Mutex
	calls []call
}

type clientKey struct{}

// asClient marks ctx's requests as client n's, for the history and its
// visualization.
func asClient(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, clientKey{}, n)
}

func newHistory() *history {
	return &history{start: time.Now(), next: &http.Transport{MaxIdleConnsPerHost: 64}}
}

func (h *history) now() int64 { return int64(time.Since(h.start)) }

// wall converts a server's time to the history's clock; they share the
// machine.
func (h *history) wall(t time.Time) int64 { return int64(t.Sub(h.start)) }

// RoundTrip sends r and records it with its answer.
func (h *history) RoundTrip(r *http.Request) (*http.Response, error) {
	c := call{Method: r.Method, URL: r.URL.Path}
	if n, ok := r.Context().Value(clientKey{}).(int); ok {
		c.Client = n
	}
	if r.Body != nil {
		raw, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		c.Request = raw
		r.Body = io.NopCloser(bytes.NewReader(raw))
	}
	c.Invoke = h.now()
	resp, err := h.next.RoundTrip(r)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	c.Complete = h.now()
	if err != nil {
		c.Err = err.Error()
		c.Refused = errors.Is(err, syscall.ECONNREFUSED)
	} else {
		c.Status = resp.StatusCode
		c.Replayed = resp.Header.Get("Idempotent-Replayed") == "true"
		if json.Valid(body) {
			c.Response = body
		}
	}
	h.mu.Lock()
	h.calls = append(h.calls, c)
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (h *history) snapshot() []call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]call(nil), h.calls...)
}

// client is an http.Client whose every call lands in the history.
func (h *history) client() *http.Client {
	return &http.Client{Transport: h, Timeout: 10 * time.Second}
}

// writeJSONL saves the history, one call a line.
func writeJSONL(path string, calls []call) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, c := range calls {
		if err := enc.Encode(c); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
