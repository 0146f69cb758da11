package sandbox

import (
	"encoding/json"
	"net/http"
)

// The provider-shaped lookups: what a CRM or a payments API answers, so a
// card's lookup_adapter can be exercised against every reading rule.
//
//	GET /v1/records?external_id=hk_…   a list: {"object": "list", "data": [record…]}, empty when nothing matched
//	GET /v1/records/hk_…               one record by its ID (the provider key), or 404
//
// A record is {"id": "sbx_1", "external_id": "hk_…", "status": "completed",
// "params": {…}}: the latest execution under the key, with the params it
// was executed with — so a record under the key with other params shows up
// as what it is. The list is an index that lags: it misses a key's record
// for the first Config.IndexLagReads reads of that key, as a search index
// fed after the write would. The record by ID never lags. Both answer 404
// when the sandbox offers no lookups.

// Record is a provider-shaped record.
type Record struct {
	ID         string          `json:"id"`
	ExternalID string          `json:"external_id"`
	Status     string          `json:"status"`
	Params     json.RawMessage `json:"params"`
}

// RecordList is a provider-shaped list answer.
type RecordList struct {
	Object string   `json:"object"`
	Data   []Record `json:"data"`
}

// Lookups is how often the provider-shaped lookups were asked about key.
func (s *Sandbox) Lookups(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[key]
}

// LagIndex makes the list miss key's record for its first reads reads, on
// top of Config.IndexLagReads: one lagging key among others.
func (s *Sandbox) LagIndex(key string, reads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lag == nil {
		s.lag = map[string]int{}
	}
	s.lag[key] = reads
}

// recordOf is key's latest execution as a record; it counts the read.
func (s *Sandbox) recordOf(key string) (Record, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reads == nil {
		s.reads = map[string]int{}
	}
	s.reads[key]++
	h := s.history[key]
	if len(h) == 0 {
		return Record{}, s.reads[key], false
	}
	last := h[len(h)-1]
	return Record{ID: last.Ref, ExternalID: key, Status: "completed", Params: last.Params}, s.reads[key], true
}

func (s *Sandbox) listRecords(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Lookup == LookupNone {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "this provider offers no lookup"})
		return
	}
	key := r.URL.Query().Get("external_id")
	if key == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "external_id is required"})
		return
	}
	rec, reads, ok := s.recordOf(key)
	s.mu.Lock()
	lag := max(s.cfg.IndexLagReads, s.lag[key])
	s.mu.Unlock()
	list := RecordList{Object: "list", Data: []Record{}}
	if ok && reads > lag {
		list.Data = append(list.Data, rec)
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Sandbox) getRecord(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Lookup == LookupNone {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "this provider offers no lookup"})
		return
	}
	rec, _, ok := s.recordOf(r.PathValue("id"))
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"type": "invalid_request_error", "code": "resource_missing"}})
		return
	}
	writeJSON(w, http.StatusOK, rec)
}
