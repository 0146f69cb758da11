package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"pgregory.net/rapid"
)

// The retry card policy: whatever the worker asks, the server settles as the
// card allows (PRODUCT.md invariant 4, API.md "settle").

func withKeyDedup(kind domain.ProviderIdempotency, retention time.Duration) func(*domain.Card) {
	return func(c *domain.Card) { c.ProviderIdempotency, c.ProviderKeyRetention = kind, retention }
}

func TestSettlePolicy(t *testing.T) {
	key24h := withKeyDedup(domain.IdempotencyKey, 24*time.Hour)
	tests := []struct {
		name    string
		from    domain.State // processing or action_pending, from fixture(): attempt 3, first attempt t0-10m
		card    func(*domain.Card)
		op      func(*domain.Operation)
		asked   domain.Outcome
		class   domain.ErrorClass // zero: the worker sent no error
		want    domain.State
		code    string // last_error.code the policy sets; "" keeps the worker's
		retried bool   // failed_retryable with a next_retry_at
	}{
		{name: "after_begin/timeout", from: domain.ActionPending, asked: domain.OutcomeFailedRetryable, class: domain.ClassTimeout, want: domain.UnknownOutcome},
		{name: "after_begin/unknown", from: domain.ActionPending, asked: domain.OutcomeFailedRetryable, class: domain.ClassUnknown, want: domain.UnknownOutcome},
		{name: "after_begin/transient_even_if_card_retries_it", from: domain.ActionPending, asked: domain.OutcomeFailedRetryable, class: domain.ClassTransient, want: domain.UnknownOutcome},
		{name: "after_begin/no_error_given", from: domain.ActionPending, asked: domain.OutcomeFailedRetryable, want: domain.UnknownOutcome},
		{name: "after_begin/asked_unknown_outcome", from: domain.ActionPending, asked: domain.OutcomeUnknown, class: domain.ClassRateLimited, want: domain.UnknownOutcome},
		{name: "after_begin/asked_terminal_but_timeout", from: domain.ActionPending, asked: domain.OutcomeFailedTerminal, class: domain.ClassTimeout, want: domain.UnknownOutcome},
		{name: "after_begin/timeout/key_within_retention", from: domain.ActionPending, card: key24h,
			op: sentAgo(time.Hour), asked: domain.OutcomeFailedRetryable, class: domain.ClassTimeout, want: domain.FailedRetryable, retried: true, code: domain.CodeResendGuarded},
		{name: "after_begin/unknown_outcome/key_within_retention", from: domain.ActionPending, card: key24h,
			op: sentAgo(time.Hour), asked: domain.OutcomeUnknown, class: domain.ClassTransient, want: domain.FailedRetryable, retried: true, code: domain.CodeResendGuarded},
		{name: "after_begin/timeout/key_and_params_within_retention", from: domain.ActionPending,
			card: withKeyDedup(domain.IdempotencyKeyAndParams, time.Hour), op: sentAgo(59 * time.Minute),
			asked: domain.OutcomeFailedRetryable, class: domain.ClassTimeout, want: domain.FailedRetryable, retried: true, code: domain.CodeResendGuarded},
		{name: "after_begin/timeout/key_outside_retention", from: domain.ActionPending, card: key24h,
			op: sentAgo(25 * time.Hour), asked: domain.OutcomeFailedRetryable, class: domain.ClassTimeout, want: domain.UnknownOutcome},
		{name: "after_begin/timeout/key_retention_just_ended", from: domain.ActionPending, card: key24h,
			op: sentAgo(24 * time.Hour), asked: domain.OutcomeFailedRetryable, class: domain.ClassTimeout, want: domain.UnknownOutcome},
		{name: "after_begin/rate_limited_proves_no_effect", from: domain.ActionPending, asked: domain.OutcomeFailedRetryable,
			class: domain.ClassRateLimited, want: domain.FailedRetryable, retried: true},

		{name: "terminal_class/processing_asked_retryable", from: domain.Processing, asked: domain.OutcomeFailedRetryable, class: domain.ClassValidation, want: domain.FailedTerminal},
		{name: "terminal_class/action_pending_asked_retryable", from: domain.ActionPending, asked: domain.OutcomeFailedRetryable, class: domain.ClassAuth, want: domain.FailedTerminal},
		{name: "terminal_class/action_pending_asked_unknown_is_a_doubt", from: domain.ActionPending, asked: domain.OutcomeUnknown, class: domain.ClassPermission, want: domain.UnknownOutcome},
		{name: "doubt_after_begin/wins_over_a_card_listing_timeout_terminal", from: domain.ActionPending,
			card:  func(c *domain.Card) { c.Terminal = append(c.Terminal, domain.ClassTimeout) },
			asked: domain.OutcomeFailedRetryable, class: domain.ClassTimeout, want: domain.UnknownOutcome},

		{name: "before_begin/timeout_is_retryable", from: domain.Processing, asked: domain.OutcomeFailedRetryable, class: domain.ClassTimeout, want: domain.FailedRetryable, retried: true},
		{name: "before_begin/asked_unknown_is_retryable", from: domain.Processing, asked: domain.OutcomeUnknown, class: domain.ClassTimeout, want: domain.FailedRetryable, retried: true},
		{name: "before_begin/asked_terminal", from: domain.Processing, asked: domain.OutcomeFailedTerminal, class: domain.ClassRateLimited, want: domain.FailedTerminal},
		{name: "class_the_card_does_not_retry", from: domain.Processing, asked: domain.OutcomeFailedRetryable, class: domain.ClassConflict,
			want: domain.FailedTerminal, code: "not_retryable"},

		{name: "limits/past_max_attempts", from: domain.Processing, card: func(c *domain.Card) { c.Retry.MaxAttempts = 3 },
			asked: domain.OutcomeFailedRetryable, class: domain.ClassRateLimited, want: domain.FailedTerminal, code: "retries_exhausted"},
		{name: "limits/below_max_attempts", from: domain.Processing, card: func(c *domain.Card) { c.Retry.MaxAttempts = 4 },
			asked: domain.OutcomeFailedRetryable, class: domain.ClassRateLimited, want: domain.FailedRetryable, retried: true},
		{name: "limits/resend_safe_but_attempts_exhausted", from: domain.ActionPending,
			card:  func(c *domain.Card) { key24h(c); c.Retry.MaxAttempts = 3 },
			asked: domain.OutcomeFailedRetryable, class: domain.ClassTimeout, want: domain.UnknownOutcome, code: domain.CodeResendGuarded},
		{name: "limits/human_retry_gives_fresh_attempts", from: domain.Processing, card: func(c *domain.Card) { c.Retry.MaxAttempts = 3 },
			op: func(o *domain.Operation) { o.RetryFrom = 2 }, asked: domain.OutcomeFailedRetryable, class: domain.ClassRateLimited,
			want: domain.FailedRetryable, retried: true},
		{name: "limits/past_max_elapsed", from: domain.Processing, card: func(c *domain.Card) { c.Retry.MaxElapsed = 10 * time.Minute },
			asked: domain.OutcomeFailedRetryable, class: domain.ClassRateLimited, want: domain.FailedTerminal, code: "retries_exhausted"},
		{name: "limits/no_max_elapsed", from: domain.Processing, card: func(c *domain.Card) { c.Retry.MaxElapsed = 0 },
			op:    func(o *domain.Operation) { o.FirstAttemptAt = ptr(t0.Add(-1000 * time.Hour)) },
			asked: domain.OutcomeFailedRetryable, class: domain.ClassRateLimited, want: domain.FailedRetryable, retried: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			card := testCard()
			if tt.card != nil {
				tt.card(&card)
			}
			if errs := card.Validate(); len(errs) > 0 {
				t.Fatalf("test card is not valid: %v", errs)
			}
			op := fixture(tt.from)
			if tt.op != nil {
				tt.op(&op)
			}
			s := domain.Settle{LeaseToken: op.LeaseToken, Outcome: tt.asked, RetryAfter: 3 * time.Second}
			if !tt.class.IsZero() {
				s.Error = &domain.ErrorInfo{Class: tt.class, Code: "E1", Message: "provider said no"}
			}
			env := newEnv(card, t0, workflow)
			ch, err := domain.Decide(op, s, env)
			if err != nil {
				t.Fatalf("settle refused: %v", err)
			}
			n := ch.Op
			if n.State != tt.want {
				t.Fatalf("settled as %s, want %s", n.State, tt.want)
			}
			checkAudit(t, op.AuditHead, op.Version, op.State.String(), ch)
			wantCode := "E1"
			if tt.code != "" {
				wantCode = tt.code
			} else if tt.class.IsZero() {
				wantCode = ""
			}
			if n.LastError == nil || n.LastError.Code != wantCode {
				t.Fatalf("last error %+v, want code %q", n.LastError, wantCode)
			}
			if !tt.class.IsZero() && n.LastError.Class != tt.class {
				t.Fatalf("last error class %s, want the worker's %s", n.LastError.Class, tt.class)
			}
			if tt.retried != (n.NextRetryAt != nil) {
				t.Fatalf("next retry at %v, want retried=%v", n.NextRetryAt, tt.retried)
			}
			if tt.retried {
				checkRetryScheduled(t, ch, env, 3*time.Second)
			}
			if n.Lease != nil || n.ProviderKey != op.ProviderKey || !timesEqual(n.ProviderKeyFirstSentAt, op.ProviderKeyFirstSentAt) {
				t.Fatalf("lease %+v, provider key %q (sent %v): the same key must be kept for the retry", n.Lease, n.ProviderKey, n.ProviderKeyFirstSentAt)
			}
		})
	}
}

func sentAgo(d time.Duration) func(*domain.Operation) {
	return func(o *domain.Operation) { o.ProviderKeyFirstSentAt = ptr(t0.Add(-d)) }
}

func timesEqual(a, b *time.Time) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && a.Equal(*b))
}

func TestDueExhaustsRetriesWhenTheElapsedLimitPasses(t *testing.T) {
	card := testCard() // max_elapsed 1h; the fixture's first attempt was at t0-10m
	op := fixture(domain.FailedRetryable)
	if d := domain.Due(op, card, t0.Add(50*time.Minute-time.Nanosecond)); d != nil {
		t.Fatalf("Due before the limit = %#v, want nil", d)
	}
	if ch, err := domain.Decide(op, domain.Exhaust{}, newEnv(card, t0, domain.System)); domain.ErrorCode(err) != domain.EInvalidTransition {
		t.Fatalf("Exhaust before the limit: %v %v", ch.Op.State, err)
	}
	now := t0.Add(50 * time.Minute)
	due := domain.Due(op, card, now)
	if _, ok := due.(domain.Exhaust); !ok {
		t.Fatalf("Due at the limit = %#v, want Exhaust", due)
	}
	ch, err := domain.Decide(op, due, newEnv(card, now, domain.System))
	if err != nil {
		t.Fatal(err)
	}
	if n := ch.Op; n.State != domain.FailedTerminal || n.LastError.Code != "retries_exhausted" ||
		n.LastError.Class != domain.ClassRateLimited || n.NextRetryAt != nil {
		t.Fatalf("after Exhaust: %s %+v next %v", n.State, n.LastError, n.NextRetryAt)
	}
	checkAudit(t, op.AuditHead, op.Version, op.State.String(), ch)

	card.Retry.MaxElapsed = 0
	if d := domain.Due(op, card, t0.Add(1000*time.Hour)); d != nil {
		t.Fatalf("without max_elapsed Due = %#v, want nil", d)
	}
	for _, s := range domain.States {
		if s != domain.FailedRetryable && !s.Leased() {
			if d := domain.Due(fixture(s), testCard(), elapsedPassed); d != nil {
				t.Fatalf("Due(%s) = %#v, want nil", s, d)
			}
		}
	}
}

func TestDueExpiresLeases(t *testing.T) {
	for _, tt := range []struct {
		name string
		from domain.State
		card func(*domain.Card)
		want domain.State
	}{
		{name: "processing", from: domain.Processing, want: domain.Received}, // nothing was sent
		{name: "action_pending", from: domain.ActionPending, want: domain.UnknownOutcome},
		// A provider that dedups by key and still remembers it: the system
		// policy re-sends under the same key (the doubt is still recorded).
		{name: "action_pending_dedup_inside_retention", from: domain.ActionPending,
			card: withKeyDedup(domain.IdempotencyKey, 24*time.Hour), want: domain.FailedRetryable},
		// Sent 5s before t0, the lease ends at t0+20s: a 25s retention has closed.
		{name: "action_pending_dedup_retention_closed", from: domain.ActionPending,
			card: withKeyDedup(domain.IdempotencyKey, 25*time.Second), want: domain.UnknownOutcome},
		// Out of attempts (3 of 3): a person decides, even inside retention.
		{name: "action_pending_dedup_exhausted", from: domain.ActionPending,
			card: func(c *domain.Card) { withKeyDedup(domain.IdempotencyKey, 24*time.Hour)(c); c.Retry.MaxAttempts = 3 },
			want: domain.UnknownOutcome},
	} {
		t.Run(tt.name, func(t *testing.T) {
			card := testCard()
			if tt.card != nil {
				tt.card(&card)
			}
			op := fixture(tt.from) // lease 3 until t0+20s
			if d := domain.Due(op, card, t0.Add(20*time.Second-time.Nanosecond)); d != nil {
				t.Fatalf("Due with a live lease = %#v", d)
			}
			now := t0.Add(20 * time.Second)
			due := domain.Due(op, card, now)
			if _, ok := due.(domain.ExpireLease); !ok {
				t.Fatalf("Due after expiry = %#v, want ExpireLease", due)
			}
			ch, err := domain.Decide(op, due, newEnv(card, now, domain.System))
			if err != nil {
				t.Fatal(err)
			}
			n := ch.Op
			if n.State != tt.want || n.Lease != nil || n.LeaseToken != op.LeaseToken || ch.Attempt.Attempt.Outcome != "lease_expired" {
				t.Fatalf("after expiry: %s lease %+v token %d attempt %+v", n.State, n.Lease, n.LeaseToken, ch.Attempt)
			}
			if tt.want == domain.UnknownOutcome && (n.LastError == nil || n.LastError.Code != "lease_expired") {
				t.Fatalf("last error %+v", n.LastError)
			}
			if _, err := domain.Decide(n, domain.Settle{LeaseToken: op.LeaseToken, Outcome: domain.OutcomeCompleted,
				Result: crmResult}, newEnv(card, now, workflow)); domain.ErrorCode(err) != domain.EStaleLease {
				t.Fatalf("settle with the expired lease: %v, want stale_lease", err)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	card := testCard() // backoff 2s, backoff_max 5m
	for _, tt := range []struct {
		name       string
		n          int
		retryAfter time.Duration
		jitter     float64
		min, max   time.Duration
	}{
		{"jitter_0", 1, 0, 0, 0, 0},
		{"jitter_0_with_retry_after", 4, 7 * time.Second, 0, 7 * time.Second, 7 * time.Second},
		{"first_retry_half", 1, 0, 0.5, time.Second, time.Second},
		{"third_retry_half", 3, 0, 0.5, 4 * time.Second, 4 * time.Second},
		{"near_cap", 30, 0, 0.999, 299 * time.Second, 5 * time.Minute},
		{"huge_n_does_not_overflow", 5000, 0, 0.999, 299 * time.Second, 5 * time.Minute},
		{"retry_after_above_cap_wins", 30, 10 * time.Minute, 0.999, 10 * time.Minute, 10 * time.Minute},
		{"retry_after_is_a_floor", 1, 30 * time.Second, 0.999, 30 * time.Second, 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := domain.Backoff(card, tt.n, tt.retryAfter, func() float64 { return tt.jitter })
			if d < tt.min || d > tt.max {
				t.Fatalf("Backoff = %s, want within [%s, %s]", d, tt.min, tt.max)
			}
		})
	}
}

// TestBackoffBounds: full jitter over [0, min(backoff·2^(n-1), cap)), never
// below retry_after and, when retry_after is within the cap, never above it.
func TestBackoffBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		card := testCard()
		card.Retry.Backoff = time.Duration(rapid.Int64Range(int64(time.Millisecond), int64(time.Minute)).Draw(t, "backoff"))
		card.Retry.BackoffMax = card.Retry.Backoff + time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "extra"))
		n := rapid.IntRange(1, 80).Draw(t, "n")
		retryAfter := time.Duration(rapid.Int64Range(0, int64(card.Retry.BackoffMax)).Draw(t, "retry_after"))
		j1 := rapid.Float64Range(0, 0.999999).Draw(t, "jitter")
		j2 := rapid.Float64Range(j1, 0.999999).Draw(t, "higher_jitter")
		d1 := domain.Backoff(card, n, retryAfter, func() float64 { return j1 })
		d2 := domain.Backoff(card, n, retryAfter, func() float64 { return j2 })
		if d1 < retryAfter || d1 > card.Retry.BackoffMax {
			t.Fatalf("Backoff = %s, want within [%s, %s]", d1, retryAfter, card.Retry.BackoffMax)
		}
		if d2 < d1 {
			t.Fatalf("more jitter gave a shorter delay: %s < %s", d2, d1)
		}
		window := min(float64(card.Retry.Backoff)*float64(uint64(1)<<min(n-1, 62)), float64(card.Retry.BackoffMax))
		if lo := time.Duration(window * j1 * 0.999); d1 < lo {
			t.Fatalf("Backoff = %s, want at least jitter·window = %s", d1, lo)
		}
	})
}

func TestResendSafe(t *testing.T) {
	sent := ptr(t0.Add(-time.Hour))
	for _, tt := range []struct {
		name string
		card func(*domain.Card)
		sent *time.Time
		want bool
	}{
		{"no_dedup", nil, sent, false},
		{"key_inside_retention", withKeyDedup(domain.IdempotencyKey, 2*time.Hour), sent, true},
		{"key_and_params_inside_retention", withKeyDedup(domain.IdempotencyKeyAndParams, 2*time.Hour), sent, true},
		{"key_at_end_of_retention", withKeyDedup(domain.IdempotencyKey, time.Hour), sent, false},
		{"key_never_sent", withKeyDedup(domain.IdempotencyKey, 2*time.Hour), nil, false},
		{"key_without_retention", withKeyDedup(domain.IdempotencyKey, 0), sent, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			card := testCard()
			if tt.card != nil {
				tt.card(&card)
			}
			if got := card.ResendSafe(tt.sent, t0); got != tt.want {
				t.Fatalf("ResendSafe = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestExpireAfterBeginResendsWithinRetention: the timeline of the system
// policy tells what happened — the lease expired after begin, so the outcome
// was unknown — and then why nobody was asked: the provider deduplicates by
// key until a time the event names.
func TestExpireAfterBeginResendsWithinRetention(t *testing.T) {
	card := testCard()
	withKeyDedup(domain.IdempotencyKey, 24*time.Hour)(&card)
	op := fixture(domain.ActionPending) // first sent t0-5s, lease until t0+20s
	now := t0.Add(20 * time.Second)
	ch, err := domain.Decide(op, domain.ExpireLease{}, newEnv(card, now, domain.System))
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Events) != 2 {
		t.Fatalf("%d events, want lease_expired then resend_within_retention", len(ch.Events))
	}
	first, second := ch.Events[0], ch.Events[1]
	if first.Action != "lease_expired" || first.FromState != "action_pending" || first.ToState != "unknown_outcome" {
		t.Fatalf("first event %s %s → %s", first.Action, first.FromState, first.ToState)
	}
	until := t0.Add(-5 * time.Second).Add(24 * time.Hour).UTC().Format(time.RFC3339)
	if second.Action != domain.CodeResendGuarded || second.FromState != "unknown_outcome" || second.ToState != "failed_retryable" ||
		second.Actor.Kind != domain.ActorSystem || !strings.Contains(string(second.Detail), `"dedup_until":"`+until+`"`) {
		t.Fatalf("second event %s %s → %s by %s, detail %s", second.Action, second.FromState, second.ToState, second.Actor.Kind, second.Detail)
	}
	n := ch.Op
	if n.LastError == nil || n.LastError.Code != domain.CodeResendGuarded || n.NextRetryAt == nil || n.ProviderKey != op.ProviderKey ||
		!n.ProviderKeyFirstSentAt.Equal(*op.ProviderKeyFirstSentAt) || n.Version != op.Version+2 || ch.FromVersion != op.Version {
		t.Fatalf("after the policy: error %+v next %v key %q first sent %v version %d from %d", n.LastError, n.NextRetryAt,
			n.ProviderKey, n.ProviderKeyFirstSentAt, n.Version, ch.FromVersion)
	}
	// Invariant 3 holds through the guard: once the key has left its
	// retention, the next claim is refused and the item goes to a person.
	later := t0.Add(25 * time.Hour)
	if _, ok := domain.Due(n, card, later).(domain.LapseResend); !ok {
		t.Fatalf("Due after the retention window = %#v, want LapseResend", domain.Due(n, card, later))
	}
}

// TestResendSameKeyRefusalSaysWhy: a refused re-send names the reason a
// person can act on — the provider does not deduplicate, or when the key
// left its retention window.
func TestResendSameKeyRefusalSaysWhy(t *testing.T) {
	op := fixture(domain.UnknownOutcome) // first sent t0-5m
	r := domain.Resolve{Action: domain.ResolveResendSameKey, Reason: "provider dedups", ExpectedVersion: op.Version}
	for _, tt := range []struct {
		name string
		card func(*domain.Card)
		want string
	}{
		{"no_dedup", func(*domain.Card) {}, "acme-crm does not deduplicate by key"},
		{"retention_closed", withKeyDedup(domain.IdempotencyKey, time.Minute),
			"the provider key left its retention window at " + t0.Add(-4*time.Minute).UTC().Format(time.RFC3339)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			card := testCard()
			tt.card(&card)
			_, err := domain.Decide(op, r, newEnv(card, t0, alice))
			if domain.ErrorCode(err) != domain.EInvalidTransition || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want invalid_transition naming %q", err, tt.want)
			}
		})
	}
}
