package web

import (
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// TestQueueRow_HoldBadge: the queue's badge names the hold that keeps an
// item back; a revision waiting for the earlier send's outcome is no twin.
func TestQueueRow_HoldBadge(t *testing.T) {
	for code, want := range map[string]string{
		domain.CodeTwinUnresolved: "twin",
		domain.CodeSupersedesSent: "supersedes",
		domain.CodeRevisionWaits:  "waits",
		"timeout":                 "",
	} {
		op := domain.Operation{ID: "op_1", Key: "evt_1:task", State: domain.UnknownOutcome,
			LastError: &domain.ErrorInfo{Class: domain.ClassConflict, Code: code, Message: "held: " + code}}
		r := queueRow(op, domain.Card{}, time.Now(), nil)
		if r.Hold != want || (want != "") != (r.Twin != "") {
			t.Errorf("%s: badge %q (title %q), want %q", code, r.Hold, r.Twin, want)
		}
	}
}
