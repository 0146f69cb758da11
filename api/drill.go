package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// drillReceiptRequest is POST /v1/drill-receipts: the receipt file's text,
// byte for byte, so the hash recorded here is the file's.
type drillReceiptRequest struct {
	Receipt string `json:"receipt" schema:"required" doc:"the receipt's JSON file as written by handoff drill, as a string"`
}

// receiptFields are the fields of a receipt the record keeps.
type receiptFields struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Card struct {
		Version int    `json:"version"`
		SHA256  string `json:"sha256"`
	} `json:"card"`
	RanBy      string    `json:"ran_by"`
	FinishedAt time.Time `json:"finished_at"`
	Verdict    string    `json:"verdict"`
}

type drillReceiptJSON struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	Verdict      string `json:"verdict"`
	SHA256       string `json:"sha256" doc:"of the receipt text as sent"`
	AuditEventID string `json:"audit_event_id" doc:"the drill_recorded event on the system stream"`
}

func parseDrillReceipt(data []byte) (drillReceiptRequest, error) {
	var req drillReceiptRequest
	err := unmarshalStrict(data, &req)
	return req, err
}

func (s *server) recordDrill(c *gin.Context) {
	req, ok := bind(s, c, parseDrillReceipt)
	if !ok {
		return
	}
	var f receiptFields // the receipt is a document: its other fields are kept, not checked
	if err := json.Unmarshal([]byte(req.Receipt), &f); err != nil {
		s.fail(c, domain.Invalid(domain.FieldError{Field: "receipt", Message: "must be a drill receipt's JSON text"}))
		return
	}
	rec := domain.DrillRecord{ID: f.ID, Type: f.Type, CardVersion: f.Card.Version, CardSHA256: f.Card.SHA256,
		Verdict: f.Verdict, RanBy: f.RanBy, RanAt: f.FinishedAt}
	e, err := s.ledger.Drills.RecordDrill(c.Request.Context(), actorOf(c), rec, []byte(req.Receipt))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusCreated, drillReceiptJSON{ID: rec.ID, Type: rec.Type, Verdict: rec.Verdict,
		SHA256: domain.SHA256Hex([]byte(req.Receipt)), AuditEventID: e.ID})
}
