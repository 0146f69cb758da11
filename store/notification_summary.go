package store

import (
	"encoding/json"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// outboxSummary is a notification's summary as the outbox's summary column
// keeps it, in JSON. Its members are those rows already written carry, so
// every stored notification reads back.
type outboxSummary struct {
	ID            string          `json:"id"`
	Key           string          `json:"key"`
	Type          string          `json:"type"`
	Namespace     string          `json:"namespace"`
	State         string          `json:"state"`
	Reason        string          `json:"reason"`
	LastError     *outboxError    `json:"last_error"`
	Attempts      int             `json:"attempts"`
	Provider      string          `json:"provider"`
	ProviderKey   string          `json:"provider_key"`
	AgeSeconds    int64           `json:"age_seconds"`
	EnteredDeskAt *time.Time      `json:"entered_desk_at,omitempty"`
	Assignee      string          `json:"assignee"`
	DeskPath      string          `json:"desk_path"`
	Decision      string          `json:"decision,omitempty"`
	DecidedBy     string          `json:"decided_by,omitempty"`
	Content       json.RawMessage `json:"content,omitempty"`
	ResultRef     string          `json:"result_ref,omitempty"`
	ResultData    json.RawMessage `json:"result_data,omitempty"`
	Incident      *outboxIncident `json:"incident,omitempty"`
}

// outboxIncident is the incident an incident's notice tells of.
type outboxIncident struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	OpenItems  int    `json:"open_items"`
	TotalItems int    `json:"total_items"`
	NewItems   int    `json:"new_items"`
	Reopened   bool   `json:"reopened,omitempty"`
	DeskPath   string `json:"desk_path"`
}

type outboxError struct {
	Class   string `json:"class"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// encodeSummary is the summary column of a notification.
func encodeSummary(s domain.NotificationSummary) string {
	o := outboxSummary{ID: s.ID, Key: s.Key, Type: s.Type, Namespace: s.Namespace, State: s.State, Reason: s.Reason,
		Attempts: s.Attempts, Provider: s.Provider, ProviderKey: s.ProviderKey, AgeSeconds: s.AgeSeconds, EnteredDeskAt: s.EnteredDeskAt,
		Assignee: s.Assignee, DeskPath: s.DeskPath, Decision: s.Decision, DecidedBy: s.DecidedBy,
		Content: s.Content, ResultRef: s.ResultRef, ResultData: s.ResultData}
	if e := s.LastError; e != nil {
		o.LastError = &outboxError{Class: e.Class, Code: e.Code, Message: e.Message}
	}
	if in := s.Incident; in != nil {
		o.Incident = &outboxIncident{ID: in.ID, Status: in.Status, OpenItems: in.OpenItems, TotalItems: in.TotalItems,
			NewItems: in.NewItems, Reopened: in.Reopened, DeskPath: in.DeskPath}
	}
	// json.Marshal fails only on content that is not JSON, which the
	// ledger never accepts; the column is then empty, and delivery reports
	// it unreadable.
	b, _ := json.Marshal(o)
	return string(b)
}

// decodeSummary reads a summary column back.
func decodeSummary(col string) (domain.NotificationSummary, error) {
	var o outboxSummary
	if err := json.Unmarshal([]byte(col), &o); err != nil {
		return domain.NotificationSummary{}, err
	}
	s := domain.NotificationSummary{ID: o.ID, Key: o.Key, Type: o.Type, Namespace: o.Namespace, State: o.State, Reason: o.Reason,
		Attempts: o.Attempts, Provider: o.Provider, ProviderKey: o.ProviderKey, AgeSeconds: o.AgeSeconds, EnteredDeskAt: o.EnteredDeskAt,
		Assignee: o.Assignee, DeskPath: o.DeskPath, Decision: o.Decision, DecidedBy: o.DecidedBy,
		Content: o.Content, ResultRef: o.ResultRef, ResultData: o.ResultData}
	if e := o.LastError; e != nil {
		s.LastError = &domain.NotifiedError{Class: e.Class, Code: e.Code, Message: e.Message}
	}
	if in := o.Incident; in != nil {
		s.Incident = &domain.NotifiedIncident{ID: in.ID, Status: in.Status, OpenItems: in.OpenItems, TotalItems: in.TotalItems,
			NewItems: in.NewItems, Reopened: in.Reopened, DeskPath: in.DeskPath}
	}
	return s, nil
}
