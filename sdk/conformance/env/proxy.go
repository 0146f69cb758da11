package main

import (
	"encoding/json"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// fault is one rule: the next Times requests whose path ends in PathSuffix
// are answered with Status instead of reaching the server — or, with
// Forward, after reaching it: the server acts and its answer is lost.
type fault struct {
	PathSuffix string `json:"path_suffix"`
	Status     int    `json:"status"`
	RetryAfter int    `json:"retry_after"`
	Times      int    `json:"times"`
	Forward    bool   `json:"forward"`
}

// faultProxy forwards to the server, except where a rule says otherwise.
// It counts the settles the server answered as replays (the header
// Idempotent-Replayed: true on a settle's answer).
type faultProxy struct {
	next      http.Handler
	mu        sync.Mutex
	rules     []*fault
	hits      int
	forwarded int // requests passed on to the server

	settlesReplayed int
}

func newFaultProxy(target *url.URL) *faultProxy {
	p := &faultProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if strings.HasSuffix(resp.Request.URL.Path, "/settle") && resp.Header.Get("Idempotent-Replayed") == "true" {
			p.mu.Lock()
			p.settlesReplayed++
			p.mu.Unlock()
		}
		return nil
	}
	p.next = rp
	return p
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_conformance/faults" {
		p.control(w, r)
		return
	}
	if f := p.match(r.URL.Path); f != nil {
		detail := "injected by the conformance proxy; nothing was written"
		if f.Forward { // the server acts; the answer it gave is dropped
			p.mu.Lock()
			p.forwarded++
			p.mu.Unlock()
			p.next.ServeHTTP(discard{}, r)
			detail = "injected by the conformance proxy after the server answered; that answer was dropped"
		}
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(f.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "/problems/unavailable", "title": http.StatusText(f.Status),
			"status": f.Status, "code": "unavailable", "detail": detail})
		return
	}
	p.mu.Lock()
	p.forwarded++
	p.mu.Unlock()
	p.next.ServeHTTP(w, r)
}

func (p *faultProxy) match(path string) *fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.rules {
		if f.Times > 0 && strings.HasSuffix(path, f.PathSuffix) {
			f.Times--
			p.hits++
			return f
		}
	}
	return nil
}

func (p *faultProxy) control(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch r.Method {
	case http.MethodPost:
		var f fault
		if err := json.NewDecoder(r.Body).Decode(&f); err != nil || f.PathSuffix == "" || f.Status < 400 || f.Times < 1 {
			http.Error(w, `{"error": "path_suffix, status >= 400 and times >= 1 are required"}`, http.StatusBadRequest)
			return
		}
		p.rules = append(p.rules, &f)
	case http.MethodDelete:
		p.rules, p.hits, p.forwarded, p.settlesReplayed = nil, 0, 0, 0
	}
	pending := 0
	for _, f := range p.rules {
		pending += f.Times
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]int{"hits": p.hits, "pending": pending, "forwarded": p.forwarded,
		"settles_replayed": p.settlesReplayed})
}

// discard is a ResponseWriter that drops what it is given: a forwarded
// request's lost answer.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
