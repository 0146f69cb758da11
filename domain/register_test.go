package domain_test

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

func registration() domain.Registration {
	return domain.Registration{Namespace: "campaigns", Key: "evt_42:crm_task", Type: "crm.task.create",
		Content: []byte(fixtureContent), EventID: "evt_42", Source: "shop-webhook", CorrelationID: "run-7"}
}

func TestNewOperation(t *testing.T) {
	requiresApproval := func(c *domain.Card) { c.RequiresApproval = true }
	for _, tt := range []struct {
		name     string
		card     func(*domain.Card)
		loop     bool
		claim    bool
		begin    bool
		want     domain.State
		events   int
		lastCode string
	}{
		{name: "received", want: domain.Received, events: 1},
		{name: "received_and_claimed", claim: true, want: domain.Processing, events: 1},
		{name: "received_and_began", claim: true, begin: true, want: domain.ActionPending, events: 1},
		{name: "awaiting_approval", card: requiresApproval, want: domain.AwaitingApproval, events: 1},
		{name: "awaiting_approval_is_not_claimed", card: requiresApproval, claim: true, want: domain.AwaitingApproval, events: 1},
		{name: "loop_detected", loop: true, want: domain.FailedTerminal, events: 1, lastCode: "loop_detected"},
		{name: "loop_detected_is_not_claimed", loop: true, claim: true, want: domain.FailedTerminal, events: 1, lastCode: "loop_detected"},
		{name: "loop_detected_wins_over_approval", card: requiresApproval, loop: true, want: domain.FailedTerminal, events: 1, lastCode: "loop_detected"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			card := testCard()
			if tt.card != nil {
				tt.card(&card)
			}
			r := registration()
			if tt.claim {
				r.Claim = &domain.Claim{Worker: "w-1", Lease: 10 * time.Second, Begin: tt.begin}
			}
			content, err := domain.CanonicalObject(r.Content)
			if err != nil {
				t.Fatal(err)
			}
			env := newEnv(card, t0, workflow)
			ch, err := domain.NewOperation(r, content, tt.loop, env)
			if err != nil {
				t.Fatalf("NewOperation: %v", err)
			}
			op := ch.Op
			if op.State != tt.want || len(ch.Events) != tt.events {
				t.Fatalf("state %s with %d events, want %s with %d", op.State, len(ch.Events), tt.want, tt.events)
			}
			checkAudit(t, "", 0, "", ch)
			wantAction := "registered"
			switch {
			case tt.want == domain.Processing:
				wantAction = domain.ActionRegisteredAndClaimed
			case tt.want == domain.ActionPending:
				wantAction = domain.ActionRegisteredAndBegan
			}
			if op.Version != int64(tt.events) || ch.Events[0].Action != wantAction || ch.Events[0].ToState == "" {
				t.Fatalf("version %d, first event %+v", op.Version, ch.Events[0])
			}
			if !strings.HasPrefix(op.ID, "op_") || op.Key != r.Key || op.Namespace != r.Namespace || op.EventID != "evt_42" {
				t.Fatalf("identity: %+v", op)
			}
			if op.Fingerprint != domain.Fingerprint(r.Type, content) || op.ContentVersion != 1 ||
				op.ContentSHA256 != domain.SHA256Hex(content) || string(op.Content) != string(content) || op.ContentAuthor != "" {
				t.Fatalf("content: fp %s v%d sha %s", op.Fingerprint, op.ContentVersion, op.ContentSHA256)
			}
			if cc := ch.Content; cc == nil || !cc.New || cc.Version.Version != 1 || cc.Version.SHA256 != op.ContentSHA256 {
				t.Fatalf("content snapshot %+v", ch.Content)
			}
			if op.ProviderKey != domain.ProviderKeyFor("campaigns", r.Key) {
				t.Fatalf("provider key %q", op.ProviderKey)
			}
			code := ""
			if op.LastError != nil {
				code = op.LastError.Code
			}
			if code != tt.lastCode {
				t.Fatalf("last error code %q, want %q", code, tt.lastCode)
			}
			if !tt.claim || (tt.want != domain.Processing && tt.want != domain.ActionPending) {
				if ch.Attempt != nil || op.Lease != nil || op.Attempts != 0 || op.LeaseToken != 0 {
					t.Fatalf("not claimed, yet attempt %+v lease %+v", ch.Attempt, op.Lease)
				}
				return
			}
			// Registered and claimed in one change: attempt 1 under fencing token 1.
			if op.Attempts != 1 || op.LeaseToken != 1 || op.Lease == nil || op.Lease.Token != 1 || op.Lease.Worker != "w-1" ||
				!op.Lease.ExpiresAt.Equal(t0.Add(10*time.Second)) || op.FirstAttemptAt == nil {
				t.Fatalf("claim: attempts %d token %d lease %+v", op.Attempts, op.LeaseToken, op.Lease)
			}
			a := ch.Attempt
			if a == nil || !a.New || a.Attempt.Number != 1 || a.Attempt.LeaseToken != 1 || a.Attempt.OperationID != op.ID {
				t.Fatalf("attempt %+v", ch.Attempt)
			}
			if began := a.Attempt.BeganAt != nil; began != tt.begin || (tt.begin && (!a.Attempt.BeganAt.Equal(t0) ||
				op.ProviderKeyFirstSentAt == nil || !op.ProviderKeyFirstSentAt.Equal(t0))) {
				t.Fatalf("began: attempt %+v, provider key first sent %v", a.Attempt, op.ProviderKeyFirstSentAt)
			}
			// One event for the one change, carrying both facts: the
			// registration's and the claim's.
			e := ch.Events[0]
			if e.Seq != 1 || e.PrevHash != "" || e.FromState != "" || e.ToState != tt.want.String() {
				t.Fatalf("event: %+v", e)
			}
			want := map[string]any{"fingerprint": op.Fingerprint, "content_sha256": op.ContentSHA256, "event_id": "evt_42",
				"worker": "w-1", "attempt": 1.0, "attempt_id": a.Attempt.ID, "lease_expires_at": t0.Add(10 * time.Second).Format(time.RFC3339Nano),
				"provider_key": op.ProviderKey, "provider_key_use": ch.KeyUse}
			var got map[string]any
			if err := json.Unmarshal(e.Detail, &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("detail %s (%v), want %v", e.Detail, err, want)
			}
		})
	}
}

func TestNewOperationKeepsTheCallersProviderKey(t *testing.T) {
	r := registration()
	r.ProviderKey = "stripe-idem-42"
	ch, err := domain.NewOperation(r, []byte(`{}`), false, newEnv(testCard(), t0, workflow))
	if err != nil || ch.Op.ProviderKey != "stripe-idem-42" {
		t.Fatalf("provider key %q, %v", ch.Op.ProviderKey, err)
	}
}

func TestRegisteredContentNeedsNoFourEyes(t *testing.T) {
	// The registering workflow is no person: anyone may approve version 1.
	card := testCard()
	card.RequiresApproval = true
	ch, err := domain.NewOperation(registration(), []byte(fixtureContent), false, newEnv(card, t0, workflow))
	if err != nil {
		t.Fatal(err)
	}
	ap, err := domain.Decide(ch.Op, domain.Approve{ContentVersion: 1, Reason: "ok"}, newEnv(card, t0, alice))
	if err != nil || ap.Op.State != domain.Received || ap.Op.Approval.By != alice.Identity() {
		t.Fatalf("approve: %v %v", ap.Op.State, err)
	}
	checkAudit(t, ch.Op.AuditHead, 1, "awaiting_approval", ap)
}

func TestLoopDetected(t *testing.T) {
	for _, tt := range []struct {
		name      string
		ancestors []string
		max       int
		want      bool
	}{
		{"no_cause", nil, 5, false},
		{"different_types", []string{"email.send", "crm.note"}, 5, false},
		{"repeats_its_own_type", []string{"email.send", "crm.task.create"}, 5, true},
		{"parent_of_same_type", []string{"crm.task.create"}, 5, true},
		{"depth_at_limit", []string{"a", "b", "c", "d"}, 5, false},
		{"depth_over_limit", []string{"a", "b", "c", "d", "e"}, 5, true},
		{"depth_one_allows_no_cause", []string{"a"}, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := domain.LoopDetected("crm.task.create", tt.ancestors, tt.max); got != tt.want {
				t.Fatalf("LoopDetected = %v, want %v", got, tt.want)
			}
		})
	}
	if domain.MaxCausationDepth != 5 {
		t.Fatalf("default depth = %d, API.md says 5", domain.MaxCausationDepth)
	}
}

func TestProviderKeyFor(t *testing.T) {
	k := domain.ProviderKeyFor("campaigns", "evt_42:crm_task")
	if k != domain.ProviderKeyFor("campaigns", "evt_42:crm_task") {
		t.Fatalf("provider key is not stable")
	}
	if !regexp.MustCompile(`^hk_[0-9a-f]{32}$`).MatchString(k) {
		t.Fatalf("provider key %q is not hk_ and 32 hex digits", k)
	}
	for _, other := range [][2]string{{"other", "evt_42:crm_task"}, {"campaigns", "evt_43:crm_task"},
		{"campaign", "sevt_42:crm_task"}, {"campaigns:evt_42", "crm_task"}} {
		if domain.ProviderKeyFor(other[0], other[1]) == k {
			t.Fatalf("provider key of %v collides with campaigns/evt_42:crm_task", other)
		}
	}
}

func TestRegistrationValidate(t *testing.T) {
	for _, key := range []string{"a", "evt_42:crm_task", "A-Z.a_z:0/9@x+y=z-", strings.Repeat("k", 255)} {
		r := registration()
		r.Key = key
		if errs := r.Validate(); len(errs) != 0 {
			t.Errorf("key %q refused: %v", key, errs)
		}
	}
	for _, key := range []string{"", strings.Repeat("k", 256), "a b", "é", "a#b", "a?b", "a%20b", "a\nb", "a\x00b", "a,b", "a*b", "(a)", "ключ"} {
		r := registration()
		r.Key = key
		if errs := r.Validate(); len(errs) != 1 || errs[0].Field != "key" {
			t.Errorf("key %q: %v, want one error on key", key, errs)
		}
	}
	for _, tt := range []struct {
		field string
		bad   func(*domain.Registration)
	}{
		{"type", func(r *domain.Registration) { r.Type = "" }},
		{"content", func(r *domain.Registration) { r.Content = nil }},
		{"event_id", func(r *domain.Registration) { r.EventID = "evt 42" }},
		{"caused_by", func(r *domain.Registration) { r.CausedBy = "a/b?c" }},
		{"supersedes", func(r *domain.Registration) { r.Supersedes = strings.Repeat("s", 256) }},
		{"source", func(r *domain.Registration) { r.Source = strings.Repeat("s", 256) }},
		{"correlation_id", func(r *domain.Registration) { r.CorrelationID = "\xff" }},
		{"provider_key", func(r *domain.Registration) { r.ProviderKey = strings.Repeat("é", 256) }},
		{"claim.worker", func(r *domain.Registration) { r.Claim = &domain.Claim{} }},
		{"claim.lease_seconds", func(r *domain.Registration) { r.Claim = &domain.Claim{Worker: "w", Lease: 3601 * time.Second} }},
		{"claim.lease_seconds", func(r *domain.Registration) { r.Claim = &domain.Claim{Worker: "w", Lease: -time.Second} }},
	} {
		r := registration()
		tt.bad(&r)
		if errs := r.Validate(); len(errs) != 1 || errs[0].Field != tt.field {
			t.Errorf("%s: Validate() = %v, want one error on it", tt.field, errs)
		}
	}
	r := registration()
	r.Claim = &domain.Claim{Worker: "w-1", Lease: time.Hour}
	if errs := r.Validate(); len(errs) != 0 {
		t.Errorf("a one-hour lease refused: %v", errs)
	}
	if domain.ActionKey("evt_42", "crm_task") != "evt_42:crm_task" {
		t.Errorf("ActionKey does not join event and action with a colon")
	}
}
