// Package sandbox is a simulated provider for drills and demos: an HTTP
// service that carries out a pretend side effect, counts every execution per
// provider key, deduplicates (or not) the way a card says a provider does,
// answers lookups (authoritatively or not) and injects the faults that make
// side effects happen twice in real life. It imports nothing of Handoff's:
// the drill talks to it over HTTP, exactly as a worker talks to a provider.
//
// The wire:
//
//	POST /execute   {"key": "hk_…", "params": {…}}     carry out the side effect
//	GET  /lookup?key=hk_…                              did it happen? (404 when lookups are off)
//	GET  /executions?key=hk_…                          how often it happened, with each execution's params
//	POST /clock     {"advance": "25h"}                 move the sandbox's clock (retention)
//
// A request names its fault in the Sandbox-Fault header: fail_before (the
// connection drops before anything is executed), timeout_after (executed,
// then the answer never comes), rate_limited (429 with Retry-After, nothing
// executed), server_error (503, nothing executed), slow (answered after a
// delay), and lookup_miss (a lookup that is not authoritative misses the
// record, as a lagging search index would).
package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Idempotency modes: what the simulated provider does with a key it has seen.
const (
	// IdempotencyNone executes every request.
	IdempotencyNone = "none"
	// IdempotencyKey answers a repeated key inside the retention window with
	// the stored answer and executes nothing.
	IdempotencyKey = "key"
	// IdempotencyKeyAndParams is IdempotencyKey, but refuses (422) a repeated
	// key whose parameters changed.
	IdempotencyKeyAndParams = "key_and_params"
)

// Lookup modes.
const (
	LookupNone          = "none"          // no lookup endpoint (404)
	LookupAuthoritative = "authoritative" // finds every execution; "not found" proves nothing happened
	LookupUnsure        = "unsure"        // may miss an execution (lookup_miss); "not found" proves nothing
)

// Faults, named in the Sandbox-Fault request header.
const (
	FaultFailBefore   = "fail_before"
	FaultTimeoutAfter = "timeout_after"
	FaultRateLimited  = "rate_limited"
	FaultServerError  = "server_error"
	FaultSlow         = "slow"
	FaultLookupMiss   = "lookup_miss"
	// FaultValidation and FaultAuth refuse the request before executing
	// it (400 and 401): the provider proves it did nothing.
	FaultValidation = "validation"
	FaultAuth       = "auth"
)

// FaultHeader is the request header naming the fault to inject.
const FaultHeader = "Sandbox-Fault"

// Config is how the simulated provider behaves.
type Config struct {
	// Idempotency is none, key or key_and_params.
	Idempotency string
	// Retention is how long a key is remembered; 0 means forever.
	Retention time.Duration
	// Lookup is none, authoritative or unsure.
	Lookup string
	// Hold is how long a timeout_after answer is held back (it ends early
	// when the caller gives up). Default 30s.
	Hold time.Duration
	// Slow is the delay of a slow answer. Default 2s.
	Slow time.Duration
	// RetryAfter is the Retry-After of a rate_limited answer. Default 1s.
	RetryAfter time.Duration
	// Now is the clock; default time.Now. POST /clock moves it further.
	Now func() time.Time
	// IndexLagReads is how many reads of a key the provider-shaped list
	// misses its record for (records.go): a lagging search index.
	IndexLagReads int
}

// Sandbox is one simulated provider.
type Sandbox struct {
	cfg Config

	mu      sync.Mutex
	offset  time.Duration
	refs    int
	records map[string]*record // by key: the answer the provider remembers
	history map[string][]Execution
	reads   map[string]int // provider-shaped lookups per key (records.go)
	lag     map[string]int // reads a key's record is missing from the list
}

type record struct {
	ref      string
	params   string // sha256 of the canonical params
	firstAt  time.Time
	response Answer
}

// Execution is one time the side effect happened.
type Execution struct {
	Ref    string          `json:"ref"`
	At     time.Time       `json:"at"`
	Params json.RawMessage `json:"params"`
}

// Answer is the sandbox's answer to an execute request.
type Answer struct {
	Key        string `json:"key"`
	Ref        string `json:"ref"`
	Executions int    `json:"executions"`
	Replayed   bool   `json:"replayed"`
}

// LookupAnswer is the sandbox's answer to a lookup.
type LookupAnswer struct {
	Key           string `json:"key"`
	Found         bool   `json:"found"`
	Ref           string `json:"ref,omitempty"`
	Authoritative bool   `json:"authoritative"`
}

// Count is how often a key's side effect happened.
type Count struct {
	Key        string      `json:"key"`
	Executions int         `json:"executions"`
	History    []Execution `json:"history"`
}

// New checks cfg and returns a sandbox.
func New(cfg Config) (*Sandbox, error) {
	switch cfg.Idempotency {
	case "":
		cfg.Idempotency = IdempotencyNone
	case IdempotencyNone, IdempotencyKey, IdempotencyKeyAndParams:
	default:
		return nil, fmt.Errorf("sandbox: idempotency %q is not none, key or key_and_params", cfg.Idempotency)
	}
	switch cfg.Lookup {
	case "":
		cfg.Lookup = LookupNone
	case LookupNone, LookupAuthoritative, LookupUnsure:
	default:
		return nil, fmt.Errorf("sandbox: lookup %q is not none, authoritative or unsure", cfg.Lookup)
	}
	if cfg.Retention < 0 {
		return nil, fmt.Errorf("sandbox: retention must not be negative")
	}
	if cfg.Hold <= 0 {
		cfg.Hold = 30 * time.Second
	}
	if cfg.Slow <= 0 {
		cfg.Slow = 2 * time.Second
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Sandbox{cfg: cfg, records: map[string]*record{}, history: map[string][]Execution{}}, nil
}

// Config is the sandbox's configuration, defaults filled in.
func (s *Sandbox) Config() Config { return s.cfg }

// Executions is how often the side effect happened under key.
func (s *Sandbox) Executions(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.history[key])
}

// History is every execution under key, oldest first.
func (s *Sandbox) History(key string) []Execution {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Execution(nil), s.history[key]...)
}

// Advance moves the sandbox's clock forward, as if d had passed.
func (s *Sandbox) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offset += d
}

func (s *Sandbox) now() time.Time { return s.cfg.Now().Add(s.offset) }

// Handler serves the sandbox's wire.
func (s *Sandbox) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /execute", s.execute)
	mux.HandleFunc("GET /lookup", s.lookup)
	mux.HandleFunc("GET /executions", s.executions)
	mux.HandleFunc("POST /clock", s.clock)
	mux.HandleFunc("GET /v1/records", s.listRecords)
	mux.HandleFunc("GET /v1/records/{id}", s.getRecord)
	return mux
}

type executeRequest struct {
	Key    string          `json:"key"`
	Params json.RawMessage `json:"params"`
}

func (s *Sandbox) execute(w http.ResponseWriter, r *http.Request) {
	var req executeRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Key == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "a JSON body with a key is required"})
		return
	}
	if len(req.Params) == 0 {
		req.Params = json.RawMessage("null")
	}
	switch fault := r.Header.Get(FaultHeader); fault {
	case "", FaultTimeoutAfter, FaultSlow:
	case FaultFailBefore:
		dropConnection(w)
		return
	case FaultRateLimited:
		w.Header().Set("Retry-After", strconv.Itoa(int(max(s.cfg.RetryAfter.Round(time.Second), time.Second)/time.Second)))
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "rate limited; nothing was executed"})
		return
	case FaultServerError:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "unavailable; nothing was executed"})
		return
	case FaultValidation:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request; nothing was executed"})
		return
	case FaultAuth:
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "credentials refused; nothing was executed"})
		return
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("unknown fault %q", fault)})
		return
	}
	if r.Header.Get(FaultHeader) == FaultSlow {
		if !wait(r, s.cfg.Slow) {
			return
		}
	}
	status, answer := s.apply(req)
	if r.Header.Get(FaultHeader) == FaultTimeoutAfter {
		// Executed; the answer is lost on the way back.
		wait(r, s.cfg.Hold)
		dropConnection(w)
		return
	}
	writeJSON(w, status, answer)
}

// apply is the provider's decision for one request, under the lock so that
// concurrent requests with one key are decided one after the other.
func (s *Sandbox) apply(req executeRequest) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	sum := paramsHash(req.Params)
	if rec, ok := s.records[req.Key]; ok && s.cfg.Idempotency != IdempotencyNone &&
		(s.cfg.Retention == 0 || now.Before(rec.firstAt.Add(s.cfg.Retention))) {
		if s.cfg.Idempotency == IdempotencyKeyAndParams && rec.params != sum {
			return http.StatusUnprocessableEntity, map[string]string{"error": "idempotency key reused with different parameters; nothing was executed", "key": req.Key}
		}
		a := rec.response
		a.Replayed = true
		a.Executions = len(s.history[req.Key])
		return http.StatusOK, a
	}
	s.refs++
	ref := fmt.Sprintf("sbx_%d", s.refs)
	s.history[req.Key] = append(s.history[req.Key], Execution{Ref: ref, At: now, Params: append(json.RawMessage(nil), req.Params...)})
	a := Answer{Key: req.Key, Ref: ref, Executions: len(s.history[req.Key])}
	s.records[req.Key] = &record{ref: ref, params: sum, firstAt: now, response: a}
	return http.StatusOK, a
}

func (s *Sandbox) lookup(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Lookup == LookupNone {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "this provider offers no lookup"})
		return
	}
	key := r.URL.Query().Get("key")
	if key == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "key is required"})
		return
	}
	s.mu.Lock()
	h := s.history[key]
	s.mu.Unlock()
	a := LookupAnswer{Key: key, Authoritative: s.cfg.Lookup == LookupAuthoritative}
	miss := r.Header.Get(FaultHeader) == FaultLookupMiss && s.cfg.Lookup == LookupUnsure
	if len(h) > 0 && !miss {
		a.Found, a.Ref = true, h[len(h)-1].Ref
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Sandbox) executions(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "key is required"})
		return
	}
	h := s.History(key)
	if h == nil {
		h = []Execution{}
	}
	writeJSON(w, http.StatusOK, Count{Key: key, Executions: len(h), History: h})
}

func (s *Sandbox) clock(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Advance string `json:"advance"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `a JSON body {"advance": "25h"} is required`})
		return
	}
	d, err := time.ParseDuration(req.Advance)
	if err != nil || d < 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "advance must be a non-negative duration such as 25h"})
		return
	}
	s.Advance(d)
	writeJSON(w, http.StatusOK, map[string]string{"now": s.now().UTC().Format(time.RFC3339Nano)})
}

// paramsHash is the params' fingerprint: compact JSON, so whitespace does
// not make the same parameters differ.
func paramsHash(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		buf.Reset()
		buf.Write(raw)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

// wait sleeps d, or until the caller went away; it reports whether the
// full time passed.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// dropConnection closes the connection without an answer.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
