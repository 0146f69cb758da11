package audit_test

import (
	"time"

	"github.com/opshandoff/handoff/domain"
)

// Shared fixtures of the audit tests: a clock reading and a workflow actor.

// t0 is when the test trails start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var workflow = domain.Actor{Kind: domain.ActorWorkflow, Name: "n8n-prod", Namespace: "campaigns"}
