package domain_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// command is one column header of TestDecide's matrix: how to build the
// command from the loaded operation, who sends it and when, and what must
// hold of an accepted change beyond the state.
type command struct {
	name  string
	actor domain.Actor // zero: the workflow
	at    time.Time    // zero: t0
	card  func(*domain.Card)
	build func(op domain.Operation) domain.Command
	check func(t *testing.T, before domain.Operation, ch domain.Change, env domain.Env)
}

var (
	claimW2      = domain.Claim{Worker: "w-2"}
	claimW2Begin = domain.Claim{Worker: "w-2", Begin: true}
	crmResult    = &domain.Result{Ref: "crm_123", Data: []byte(`{"id":123}`)}
	rateLimited  = &domain.ErrorInfo{Class: domain.ClassRateLimited, Code: "429", Message: "slow down"}
)

func live(op domain.Operation) int64 { return op.LeaseToken }

func commands() []command {
	settle := func(o domain.Outcome, e *domain.ErrorInfo, token func(domain.Operation) int64) func(domain.Operation) domain.Command {
		return func(op domain.Operation) domain.Command {
			s := domain.Settle{LeaseToken: token(op), Outcome: o, Error: e, RetryAfter: 20 * time.Second}
			if o == domain.OutcomeCompleted {
				s.Result = crmResult
			}
			return s
		}
	}
	old := func(op domain.Operation) int64 { return op.LeaseToken - 1 }
	future := func(op domain.Operation) int64 { return op.LeaseToken + 1 }
	approve := func(dv int, ev int64) func(domain.Operation) domain.Command {
		return func(op domain.Operation) domain.Command {
			return domain.Approve{ContentVersion: op.ContentVersion + dv, Reason: "looks right", ExpectedVersion: op.Version + ev}
		}
	}
	reject := func(op domain.Operation) domain.Command {
		return domain.Reject{ContentVersion: op.ContentVersion, Reason: "wrong owner", ExpectedVersion: op.Version}
	}
	resolve := func(a, then domain.ResolveAction, ev int64) func(domain.Operation) domain.Command {
		return func(op domain.Operation) domain.Command {
			r := domain.Resolve{Action: a, Then: then, Reason: "checked the CRM", ExpectedVersion: op.Version + ev}
			if a == domain.ResolveConfirmExecuted {
				r.Result = crmResult
			}
			return r
		}
	}
	assign := func(ev int64) func(domain.Operation) domain.Command {
		return func(op domain.Operation) domain.Command {
			return domain.Assign{To: carol.Person(), Reason: "on call", ExpectedVersion: op.Version + ev}
		}
	}
	note := func(ev int64) func(domain.Operation) domain.Command {
		return func(op domain.Operation) domain.Command {
			return domain.Note{Text: "called the CRM team", ExpectedVersion: op.Version + ev}
		}
	}
	revise := func(ev int64) func(domain.Operation) domain.Command {
		return func(op domain.Operation) domain.Command {
			return domain.Revise{Content: []byte(`{"owner":"u_10"}`), Reason: "owner left", ExpectedVersion: op.Version + ev}
		}
	}
	authoritative := func(c *domain.Card) { c.LookupAuthoritative = true }
	return []command{
		{name: "claim", build: func(domain.Operation) domain.Command { return claimW2 }, check: checkClaim},
		{name: "claim/retry_later", at: beforeRetryAt, build: func(domain.Operation) domain.Command { return claimW2 },
			check: checkClaim},
		{name: "claim+begin", build: func(domain.Operation) domain.Command { return claimW2Begin }, check: checkClaimBegan},
		{name: "claim+begin/retry_later", at: beforeRetryAt, build: func(domain.Operation) domain.Command { return claimW2Begin },
			check: checkClaimBegan},

		{name: "heartbeat", build: func(op domain.Operation) domain.Command {
			return domain.Heartbeat{LeaseToken: op.LeaseToken, Lease: 45 * time.Second}
		}, check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
			if l := ch.Op.Lease; l.Token != b.LeaseToken || l.Worker != "w-1" || !l.ExpiresAt.Equal(env.Now.Add(45*time.Second)) {
				t.Fatalf("lease after heartbeat = %+v", l)
			}
		}},
		{name: "heartbeat/old_token", build: func(op domain.Operation) domain.Command { return domain.Heartbeat{LeaseToken: old(op)} }},
		{name: "heartbeat/expired_lease", at: leaseExpired, build: func(op domain.Operation) domain.Command {
			return domain.Heartbeat{LeaseToken: live(op)}
		}},

		{name: "begin", build: func(op domain.Operation) domain.Command { return domain.Begin{LeaseToken: live(op)} },
			check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
				if p := ch.Op.ProviderKeyFirstSentAt; p == nil || !p.Equal(env.Now) {
					t.Fatalf("provider_key_first_sent_at = %v, want now", p)
				}
				if ch.Op.Lease == nil || ch.Op.Lease.Token != b.LeaseToken || ch.Attempt == nil || ch.Attempt.Attempt.BeganAt == nil {
					t.Fatalf("begin must keep the lease and record the attempt's start")
				}
			}},
		{name: "begin/old_token", build: func(op domain.Operation) domain.Command { return domain.Begin{LeaseToken: old(op)} }},
		{name: "begin/expired_lease", at: leaseExpired, build: func(op domain.Operation) domain.Command {
			return domain.Begin{LeaseToken: live(op)}
		}},

		{name: "settle/completed", build: settle(domain.OutcomeCompleted, nil, live),
			check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
				checkSettled(t, ch)
				if ch.Op.Result == nil || ch.Op.Result.Ref != "crm_123" || ch.Op.LastError != nil {
					t.Fatalf("result %+v, last error %+v", ch.Op.Result, ch.Op.LastError)
				}
			}},
		{name: "settle/failed_retryable", build: settle(domain.OutcomeFailedRetryable, rateLimited, live),
			check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
				checkSettled(t, ch)
				checkRetryScheduled(t, ch, env, 20*time.Second)
				if *ch.Op.LastError != *rateLimited {
					t.Fatalf("last error %+v, want the worker's", ch.Op.LastError)
				}
			}},
		{name: "settle/failed_terminal", build: settle(domain.OutcomeFailedTerminal,
			&domain.ErrorInfo{Class: domain.ClassValidation, Code: "422"}, live),
			check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
				checkSettled(t, ch)
				if ch.Op.NextRetryAt != nil || ch.Op.LastError.Class != domain.ClassValidation {
					t.Fatalf("next retry %v, last error %+v", ch.Op.NextRetryAt, ch.Op.LastError)
				}
			}},
		{name: "settle/unknown_outcome", build: settle(domain.OutcomeUnknown, &domain.ErrorInfo{Class: domain.ClassTimeout}, live),
			check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
				checkSettled(t, ch)
				if ch.Op.LastError.Class != domain.ClassTimeout {
					t.Fatalf("last error %+v", ch.Op.LastError)
				}
				if ch.Op.State == domain.FailedRetryable { // before begin nothing was sent
					checkRetryScheduled(t, ch, env, 20*time.Second)
				}
			}},
		{name: "settle/completed_no_ref", build: func(op domain.Operation) domain.Command {
			return domain.Settle{LeaseToken: op.LeaseToken, Outcome: domain.OutcomeCompleted, Result: &domain.Result{}}
		}},
		{name: "settle/old_token", build: settle(domain.OutcomeCompleted, nil, old)},
		{name: "settle/future_token", build: settle(domain.OutcomeFailedRetryable, rateLimited, future)},
		{name: "settle/expired_lease", at: leaseExpired, build: settle(domain.OutcomeCompleted, nil, live)},

		{name: "reconcile/found", build: func(domain.Operation) domain.Command {
			return domain.Reconcile{Found: true, Result: crmResult, Evidence: "GET /tasks → 1 row"}
		}, check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
			if ch.Op.Result == nil || ch.Op.Result.Ref != crmResult.Ref {
				t.Fatalf("result %+v", ch.Op.Result)
			}
		}},
		{name: "reconcile/found_no_ref", build: func(domain.Operation) domain.Command { return domain.Reconcile{Found: true} }},
		{name: "reconcile/not_found_authoritative", card: authoritative, build: func(domain.Operation) domain.Command {
			return domain.Reconcile{Evidence: "GET /tasks → 0 rows"}
		}, check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
			if ch.Op.LastError == nil || ch.Op.LastError.Code != "not_found_at_provider" {
				t.Fatalf("last error %+v", ch.Op.LastError)
			}
			checkRetryScheduled(t, ch, env, 0)
		}},
		{name: "reconcile/not_found_inconclusive", build: func(domain.Operation) domain.Command {
			return domain.Reconcile{Evidence: "GET /tasks → 0 rows"}
		}, check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
			if ev := ch.Events[0]; ev.Action != "reconcile_inconclusive" || !bytes.Contains(ev.Detail, []byte("0 rows")) {
				t.Fatalf("the evidence must reach the timeline: %s %s", ev.Action, ev.Detail)
			}
		}},

		{name: "expire_lease", actor: domain.System, at: leaseExpired, build: func(domain.Operation) domain.Command { return domain.ExpireLease{} },
			check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
				checkSettled(t, ch)
				if ch.Op.State == domain.UnknownOutcome && (ch.Op.LastError == nil || ch.Op.LastError.Code != "lease_expired") {
					t.Fatalf("last error %+v", ch.Op.LastError)
				}
			}},
		{name: "expire_lease/live", actor: domain.System, build: func(domain.Operation) domain.Command { return domain.ExpireLease{} }},
		{name: "exhaust", actor: domain.System, at: elapsedPassed, build: func(domain.Operation) domain.Command { return domain.Exhaust{} },
			check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
				if e := ch.Op.LastError; e == nil || e.Code != "retries_exhausted" || e.Class != b.LastError.Class || ch.Op.NextRetryAt != nil {
					t.Fatalf("last error %+v, next retry %v", e, ch.Op.NextRetryAt)
				}
			}},
		{name: "exhaust/not_due", actor: domain.System, build: func(domain.Operation) domain.Command { return domain.Exhaust{} }},

		{name: "approve", actor: bob, build: approve(0, 0), check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
			a := ch.Op.Approval
			if a == nil || a.ContentVersion != b.ContentVersion || a.By != bob.Identity() || !a.At.Equal(env.Now) {
				t.Fatalf("approval %+v", a)
			}
			if !bytes.Equal(ch.Op.Content, b.Content) || ch.Content == nil || ch.Content.Version.ApprovedBy != bob.Identity() {
				t.Fatalf("approve must sign off the current snapshot, unchanged")
			}
		}},
		{name: "approve/own_revision", actor: alice, build: approve(0, 0)},
		{name: "approve/old_content_version", actor: bob, build: approve(-1, 0)},
		{name: "approve/stale_expected_version", actor: bob, build: approve(0, -1)},
		{name: "reject", actor: bob, build: reject, check: checkResolution("reject")},
		{name: "reject/own_revision", actor: alice, build: reject},

		{name: "resolve/confirm_executed", actor: alice, build: resolve(domain.ResolveConfirmExecuted, domain.ResolveAction{}, 0),
			check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
				checkResolution("confirm_executed")(t, b, ch, env)
				if ch.Op.Result != crmResult {
					t.Fatalf("result %+v", ch.Op.Result)
				}
			}},
		{name: "resolve/confirm_executed_no_ref", actor: alice, build: func(op domain.Operation) domain.Command {
			return domain.Resolve{Action: domain.ResolveConfirmExecuted, Reason: "seen it", ExpectedVersion: op.Version}
		}},
		{name: "resolve/confirm_not_executed_no_then", actor: alice, build: resolve(domain.ResolveConfirmNotExecuted, domain.ResolveAction{}, 0)},
		{name: "resolve/confirm_not_executed+retry", actor: alice, build: resolve(domain.ResolveConfirmNotExecuted, domain.ResolveRetry, 0),
			check: checkHumanRetry("confirm_not_executed+retry")},
		{name: "resolve/confirm_not_executed+cancel", actor: alice, build: resolve(domain.ResolveConfirmNotExecuted, domain.ResolveCancel, 0),
			check: checkResolution("confirm_not_executed+cancel")},
		{name: "resolve/retry", actor: alice, build: resolve(domain.ResolveRetry, domain.ResolveAction{}, 0), check: checkHumanRetry("retry")},
		{name: "resolve/cancel", actor: alice, build: resolve(domain.ResolveCancel, domain.ResolveAction{}, 0), check: checkResolution("cancel")},
		{name: "resolve/stale_expected_version", actor: alice, build: resolve(domain.ResolveRetry, domain.ResolveAction{}, -1)},
		{name: "resolve/resend_same_key", actor: alice, card: withKeyDedup(domain.IdempotencyKey, 24*time.Hour),
			build: resolve(domain.ResolveResendSameKey, domain.ResolveAction{}, 0), check: checkResendSameKey},
		{name: "resolve/resend_same_key/no_dedup", actor: alice, build: resolve(domain.ResolveResendSameKey, domain.ResolveAction{}, 0)},
		{name: "resolve/resend_same_key/retention_closed", actor: alice, card: withKeyDedup(domain.IdempotencyKey, 5*time.Minute),
			build: resolve(domain.ResolveResendSameKey, domain.ResolveAction{}, 0)},

		{name: "assign", actor: alice, build: assign(0), check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
			if ch.Op.Assignee != carol.Identity() || ch.Events[0].Reason != "on call" {
				t.Fatalf("assignee %q, reason %q", ch.Op.Assignee, ch.Events[0].Reason)
			}
		}},
		{name: "assign/stale_expected_version", actor: alice, build: assign(-1)},
		{name: "note", actor: alice, build: note(0), check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
			n := ch.Op
			n.Version, n.UpdatedAt, n.AuditHead = b.Version, b.UpdatedAt, b.AuditHead
			if ch.Events[0].Reason != "called the CRM team" || !equalOps(n, b) {
				t.Fatalf("a note must change nothing but the timeline")
			}
		}},
		{name: "note/stale_expected_version", actor: alice, build: note(-1)},
		{name: "revise", actor: bob, build: revise(0), check: func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
			n := ch.Op
			if n.ContentVersion != b.ContentVersion+1 || string(n.Content) != `{"owner":"u_10"}` || n.ContentAuthor != bob.Identity() ||
				n.Approval != nil || n.NextRetryAt != nil || ch.Content == nil || !ch.Content.New {
				t.Fatalf("revision: version %d content %s author %q approval %+v", n.ContentVersion, n.Content, n.ContentAuthor, n.Approval)
			}
		}},
		{name: "revise/stale_expected_version", actor: bob, build: revise(-1)},
	}
}

func checkClaim(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
	t.Helper()
	n := ch.Op
	if n.LeaseToken != b.LeaseToken+1 {
		t.Fatalf("lease token %d → %d, want +1", b.LeaseToken, n.LeaseToken)
	}
	if l := n.Lease; l.Token != n.LeaseToken || l.Worker != "w-2" || !l.ExpiresAt.Equal(env.Now.Add(env.Card.Lease)) {
		t.Fatalf("lease %+v", l)
	}
	if n.Attempts != b.Attempts+1 || n.NextRetryAt != nil {
		t.Fatalf("attempts %d → %d, next retry %v", b.Attempts, n.Attempts, n.NextRetryAt)
	}
	if a := ch.Attempt; a == nil || !a.New || a.Attempt.Number != n.Attempts || a.Attempt.LeaseToken != n.LeaseToken || a.Attempt.ID == "" {
		t.Fatalf("attempt %+v", ch.Attempt)
	}
	if !bytes.Equal(n.Content, b.Content) || n.ContentSHA256 != b.ContentSHA256 || n.ProviderKey != b.ProviderKey {
		t.Fatalf("a claim must hand out the stored snapshot and provider key")
	}
}

// checkClaimBegan: a claim that began at once is the claim and the begin
// in one event — the lease, the attempt inserted with its began_at, the
// provider key's first send — and never passes through processing.
func checkClaimBegan(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
	t.Helper()
	checkClaim(t, b, ch, env)
	ev := ch.Events[0]
	if ev.Action != domain.ActionClaimedAndBegan || ev.FromState != b.State.String() || ev.ToState != "action_pending" {
		t.Fatalf("event %s %s → %s, want %s %s → action_pending", ev.Action, ev.FromState, ev.ToState,
			domain.ActionClaimedAndBegan, b.State)
	}
	if !bytes.Contains(ev.Detail, []byte(`"worker":"w-2"`)) || !bytes.Contains(ev.Detail, []byte(`"attempt_id":"`)) {
		t.Fatalf("the event must carry the claim's detail, got %s", ev.Detail)
	}
	if a := ch.Attempt.Attempt; a.BeganAt == nil || !a.BeganAt.Equal(env.Now) || !a.ClaimedAt.Equal(env.Now) {
		t.Fatalf("attempt claimed %v began %v, want both now", a.ClaimedAt, a.BeganAt)
	}
	if p := ch.Op.ProviderKeyFirstSentAt; p == nil || !p.Equal(env.Now) {
		t.Fatalf("provider_key_first_sent_at = %v, want now", p)
	}
}

// checkSettled: the lease is gone and the attempt is closed.
func checkSettled(t *testing.T, ch domain.Change) {
	t.Helper()
	if ch.Op.Lease != nil || ch.Attempt == nil || ch.Attempt.Attempt.SettledAt == nil || ch.Attempt.Attempt.Outcome == "" {
		t.Fatalf("lease %+v, attempt %+v", ch.Op.Lease, ch.Attempt)
	}
}

func checkRetryScheduled(t *testing.T, ch domain.Change, env domain.Env, retryAfter time.Duration) {
	t.Helper()
	n := ch.Op
	want := env.Now.Add(domain.Backoff(env.Card, n.Attempts-n.RetryFrom, retryAfter, env.Jitter))
	if n.NextRetryAt == nil || !n.NextRetryAt.Equal(want) || n.NextRetryAt.Before(env.Now.Add(retryAfter)) {
		t.Fatalf("next retry %v, want %s", n.NextRetryAt, want)
	}
}

func checkResolution(action string) func(*testing.T, domain.Operation, domain.Change, domain.Env) {
	return func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
		t.Helper()
		r := ch.Op.Resolution
		if r == nil || r.Action != action || r.By != env.Actor.Identity() || r.Reason == "" || ch.Events[0].Reason != r.Reason {
			t.Fatalf("resolution %+v, want %s by %s with the reason", r, action, env.Actor.Identity())
		}
	}
}

func checkHumanRetry(action string) func(*testing.T, domain.Operation, domain.Change, domain.Env) {
	return func(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
		t.Helper()
		checkResolution(action)(t, b, ch, env)
		if n := ch.Op; n.RetryFrom != b.Attempts || n.FirstAttemptAt != nil || n.ProviderKey != b.ProviderKey || n.NextRetryAt != nil {
			t.Fatalf("a person's retry starts a fresh budget with the same provider key: %+v", n)
		}
	}
}

// checkResendSameKey: a person's re-send keeps the provider key, is due at
// once with a fresh budget, and keeps the resend guard so the item returns
// to a person if the key leaves its retention before the next claim.
func checkResendSameKey(t *testing.T, b domain.Operation, ch domain.Change, env domain.Env) {
	t.Helper()
	checkResolution("resend_same_key")(t, b, ch, env)
	n := ch.Op
	if n.ProviderKey != b.ProviderKey || !n.ProviderKeyFirstSentAt.Equal(*b.ProviderKeyFirstSentAt) || n.RetryFrom != b.Attempts ||
		n.FirstAttemptAt != nil || n.NextRetryAt == nil || !n.NextRetryAt.Equal(env.Now) {
		t.Fatalf("re-send: key %q first sent %v retry from %d first attempt %v next %v", n.ProviderKey, n.ProviderKeyFirstSentAt,
			n.RetryFrom, n.FirstAttemptAt, n.NextRetryAt)
	}
	if n.LastError == nil || n.LastError.Code != domain.CodeResendGuarded {
		t.Fatalf("last error %+v, want the resend guard", n.LastError)
	}
	until := b.ProviderKeyFirstSentAt.Add(env.Card.ProviderKeyRetention).UTC().Format(time.RFC3339)
	if d := string(ch.Events[0].Detail); !strings.Contains(d, `"dedup_until":"`+until+`"`) {
		t.Fatalf("event detail %s does not name dedup_until %s", d, until)
	}
	if got := domain.Due(n, env.Card, b.ProviderKeyFirstSentAt.Add(env.Card.ProviderKeyRetention)); got != (domain.LapseResend{}) {
		t.Fatalf("Due once the key left its retention = %#v, want LapseResend", got)
	}
}

// equalOps compares operations field by field, times with Equal.
func equalOps(a, b domain.Operation) bool {
	return a.State == b.State && a.Version == b.Version && a.Attempts == b.Attempts && a.LeaseToken == b.LeaseToken &&
		bytes.Equal(a.Content, b.Content) && a.ContentVersion == b.ContentVersion && a.Assignee == b.Assignee &&
		a.Result == b.Result && a.LastError == b.LastError && a.Lease == b.Lease && a.Approval == b.Approval &&
		a.Resolution == b.Resolution && a.NextRetryAt == b.NextRetryAt && a.AuditHead == b.AuditHead
}
