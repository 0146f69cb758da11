package audit

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// recordedDrill is what a drill_recorded event says of its receipt, and
// where the event is.
type recordedDrill struct {
	ID          string `json:"receipt_id"`
	Type        string `json:"type"`
	CardVersion int    `json:"card_version"`
	CardSHA256  string `json:"card_sha256"`
	Verdict     string `json:"verdict"`
	SHA256      string `json:"sha256"`
	RanBy       string `json:"ran_by"` // absent from events recorded before it was
	RanAt       string `json:"ran_at"` // likewise
	event       domain.AuditEvent
	ref         int64
	met         bool
}

// drillRecorded takes in a drill_recorded event.
func (v *Verifier) drillRecorded(e domain.AuditEvent, ref int64) {
	var r recordedDrill
	if err := json.Unmarshal(e.Detail, &r); err != nil || r.ID == "" {
		v.add(BreakEdited, e, ref, "a drill_recorded event that names no receipt")
		return
	}
	r.event, r.ref = e, ref
	if v.drills == nil {
		v.drills = map[string]*recordedDrill{}
	}
	v.drills[r.ID] = &r
}

// ExpectReceipt compares a receipt stored in the database — its row and
// its text — with the drill_recorded event that chained it.
func (v *Verifier) ExpectReceipt(rec domain.DrillRecord, text []byte) {
	v.init()
	v.receipts = true
	r := v.drills[rec.ID]
	if r == nil {
		v.addAt(BreakInserted, domain.SystemStream, 0, "", 0, fmt.Sprintf(
			"drill receipt %s (%s, verdict %s) is stored, but no drill_recorded event chained it: it was added outside the drill", rec.ID, rec.Type, rec.Verdict))
		return
	}
	r.met = true
	var differ []string
	if got := domain.SHA256Hex(text); got != r.SHA256 {
		differ = append(differ, fmt.Sprintf("its text's sha256 is %.16s…, the event recorded %.16s…", got, r.SHA256))
	}
	same := func(field, stored, recorded string) {
		if stored != recorded {
			differ = append(differ, fmt.Sprintf("its %s is %q, the event recorded %q", field, stored, recorded))
		}
	}
	same("sha256 column", rec.SHA256, r.SHA256)
	same("type", rec.Type, r.Type)
	same("verdict", rec.Verdict, r.Verdict)
	same("card_sha256", rec.CardSHA256, r.CardSHA256)
	same("card_version", fmt.Sprint(rec.CardVersion), fmt.Sprint(r.CardVersion))
	if r.RanBy != "" {
		same("ran_by", rec.RanBy, r.RanBy)
	}
	if r.RanAt != "" {
		same("ran_at", rec.RanAt.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano), r.RanAt)
	}
	if len(differ) > 0 {
		v.add(BreakEdited, r.event, r.ref, fmt.Sprintf("drill receipt %s was edited after the drill: %s",
			rec.ID, strings.Join(differ, "; ")))
	}
}

// drillReport reports, when the stored receipts were read, each receipt a
// drill_recorded event chained that is no longer stored.
func (v *Verifier) drillReport() {
	if !v.receipts {
		return
	}
	for _, id := range slices.Sorted(maps.Keys(v.drills)) {
		if r := v.drills[id]; !r.met {
			v.add(BreakDeleted, r.event, r.ref, fmt.Sprintf("drill receipt %s (%s, verdict %s), chained by this event, is no longer stored: it was deleted",
				id, r.Type, r.Verdict))
		}
	}
}
