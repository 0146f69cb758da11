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
// are answered with Status instead of reaching the server.
type fault struct {
	PathSuffix string `json:"path_suffix"`
	Status     int    `json:"status"`
	RetryAfter int    `json:"retry_after"`
	Times      int    `json:"times"`
}

// faultProxy forwards to the server, except where a rule says otherwise.
type faultProxy struct {
	next      http.Handler
	mu        sync.Mutex
	rules     []*fault
	hits      int
	forwarded int // requests passed on to the server
}

func newFaultProxy(target *url.URL) *faultProxy {
	return &faultProxy{next: httputil.NewSingleHostReverseProxy(target)}
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_conformance/faults" {
		p.control(w, r)
		return
	}
	if f := p.match(r.URL.Path); f != nil {
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(f.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "/problems/unavailable", "title": http.StatusText(f.Status),
			"status": f.Status, "code": "unavailable", "detail": "injected by the conformance proxy; nothing was written"})
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
		p.rules, p.hits, p.forwarded = nil, 0, 0
	}
	pending := 0
	for _, f := range p.rules {
		pending += f.Times
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]int{"hits": p.hits, "pending": pending, "forwarded": p.forwarded})
}
