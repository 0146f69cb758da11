package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// The HTTP contract of API.md, through the real router, the real Ledger and
// a real database (SQLite, or PostgreSQL with HANDOFF_TEST_POSTGRES).

func contractCards() domain.Cards {
	crm := domain.Card{Name: "crm.task.create", Provider: "acme-crm", ProviderIdempotency: domain.IdempotencyNone,
		Lookup: domain.LookupManual, Retry: domain.RetryPolicy{MaxAttempts: 3, MaxElapsed: time.Hour, Backoff: time.Second, BackoffMax: time.Minute},
		Retryable: []domain.ErrorClass{domain.ClassTransient, domain.ClassRateLimited},
		Terminal:  []domain.ErrorClass{domain.ClassValidation, domain.ClassAuth}, Lease: 30 * time.Second,
		NotifyURL: "https://hooks.example.com/secret-path"}
	coupon := crm
	coupon.Name, coupon.Provider, coupon.RequiresApproval = "coupon.issue", "shop", true
	// A mailer that deduplicates by key for a day, with one attempt: a
	// doubtful send lands on the desk while the key is still retained.
	mail := crm
	mail.Name, mail.Provider, mail.ProviderIdempotency, mail.ProviderKeyRetention = "mail.send", "mailer", domain.IdempotencyKey, 24*time.Hour
	mail.Retry.MaxAttempts = 1
	// The same mailer for a type whose key it forgets at once.
	brief := mail
	brief.Name, brief.ProviderKeyRetention = "mail.brief", time.Microsecond
	return domain.Cards{crm.Name: crm, coupon.Name: coupon, mail.Name: mail, brief.Name: brief}
}

// people stands in for the OIDC verifier that comes later: the bearer is
// the person's name, mapped to an email and a role.
type people map[string]domain.Actor

func (p people) Authenticate(_ context.Context, bearer string) (domain.Actor, error) {
	if a, ok := p[bearer]; ok {
		return a, nil
	}
	return domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "unknown person")
}

func person(email string, role domain.Role) domain.Actor {
	return domain.Actor{Kind: domain.ActorPerson, Name: email, Email: email, Subject: email, Role: role}
}

type harness struct {
	t       *testing.T
	h       http.Handler
	store   *store.Store
	tokens  *auth.Tokens
	tok     string // a workflow in namespace "campaigns"
	other   string // a workflow in namespace "other"
	reg     *prometheus.Registry
	readyFn func(context.Context) error
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, contractCards())
}

// newHarnessWith is newHarness serving the given operation types.
func newHarnessWith(t *testing.T, cards domain.Cards) *harness {
	t.Helper()
	st := storetest.New(t)
	x := &harness{t: t, store: st, tokens: auth.NewTokens(st), reg: prometheus.NewRegistry()}
	x.tok = x.token("campaigns", "n8n")
	x.other = x.token("other", "zapier")
	chain := auth.Chain{Tokens: x.tokens, People: people{
		"alice": person("alice@example.com", domain.RoleOperator),
		"bob":   person("bob@example.com", domain.RoleApprover),
		"carol": person("carol@example.com", domain.RoleApprover),
		"vera":  person("vera@example.com", domain.RoleViewer),
		"ivy": {Kind: domain.ActorPerson, Issuer: "https://idp.example.com", Subject: "u-ivy", Email: "ivy@example.com",
			Role: domain.RoleOperator},
	}}
	e, err := api.New(api.Config{Ledger: domain.NewLedger(st, cards), Auth: chain,
		Ready: func(ctx context.Context) error { return x.readyFn(ctx) }, Logger: slog.New(slog.DiscardHandler),
		BodyLimit: 256 << 10, Registry: x.reg})
	if err != nil {
		t.Fatal(err)
	}
	x.readyFn = st.Ping
	x.h = e
	return x
}

func (x *harness) token(ns, name string) string {
	secret, _, err := x.tokens.Create(context.Background(), ns, name)
	if err != nil {
		x.t.Fatal(err)
	}
	return secret
}

// reply is one HTTP answer, decoded.
type reply struct {
	t      *testing.T
	code   int
	header http.Header
	raw    []byte
	body   map[string]any
}

// do sends body (a string is sent as is, anything else as JSON) as bearer;
// extra are header name/value pairs.
func (x *harness) do(method, path, bearer string, body any, extra ...string) *reply {
	x.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			x.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	w := httptest.NewRecorder()
	x.h.ServeHTTP(w, req)
	r := &reply{t: x.t, code: w.Code, header: w.Header(), raw: w.Body.Bytes()}
	if strings.Contains(w.Header().Get("Content-Type"), "json") {
		if err := json.Unmarshal(r.raw, &r.body); err != nil {
			x.t.Fatalf("%s %s: body %q: %v", method, path, r.raw, err)
		}
	}
	return r
}

// ok asserts a success status.
func (r *reply) ok(status int) map[string]any {
	r.t.Helper()
	if r.code != status {
		r.t.Fatalf("status %d, want %d: %s", r.code, status, r.raw)
	}
	return r.body
}

// problem asserts a problem+json answer with the status and code.
func (r *reply) problem(status int, code string) map[string]any {
	r.t.Helper()
	if r.code != status || r.header.Get("Content-Type") != "application/problem+json" || r.body["code"] != code {
		r.t.Fatalf("got %d %s %s, want %d %s", r.code, r.header.Get("Content-Type"), r.raw, status, code)
	}
	if r.body["type"] != "/problems/"+strings.ReplaceAll(code, "_", "-") || r.body["status"] != float64(status) {
		r.t.Fatalf("problem type/status: %s", r.raw)
	}
	return r.body
}

// fields lists the field names of a problem's errors.
func (r *reply) fields() []string {
	var out []string
	errs, _ := r.body["errors"].([]any)
	for _, e := range errs {
		out = append(out, e.(map[string]any)["field"].(string))
	}
	return out
}

// register registers key of type typ with content {"n": key}.
func (x *harness) register(key, typ string, claim map[string]any) map[string]any {
	x.t.Helper()
	body := map[string]any{"key": key, "type": typ, "content": map[string]any{"n": key}}
	if claim != nil {
		body["claim"] = claim
	}
	return x.do("POST", "/v1/operations", x.tok, body).ok(201)
}

func opPath(op map[string]any, action string) string {
	p := "/v1/operations/" + op["id"].(string)
	if action != "" {
		p += "/" + action
	}
	return p
}

// claimed registers and claims key, returning the operation and its token.
func (x *harness) claimed(key string) (map[string]any, float64) {
	x.t.Helper()
	res := x.register(key, "crm.task.create", map[string]any{"worker": "w-1"})
	claim := res["claim"].(map[string]any)
	return res, claim["lease"].(map[string]any)["token"].(float64)
}

// unknownOutcome drives key to unknown_outcome: claim, begin, time out.
func (x *harness) unknownOutcome(key string) map[string]any {
	x.t.Helper()
	op, tok := x.claimed(key)
	x.do("POST", opPath(op, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	settled := x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "failed_retryable",
		"error": map[string]any{"class": "timeout", "message": "read timeout"}}).ok(200)
	if settled["state"] != "unknown_outcome" {
		x.t.Fatalf("state %v, want unknown_outcome", settled["state"])
	}
	return settled
}
