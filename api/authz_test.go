package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/auth/oidctest"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// peopleRig is the contract harness with real people: the API verifies
// their JWTs with the OIDC verifier against a provider running in the test
// process, exactly as `serve` wires it.
type peopleRig struct {
	*harness
	idp *oidctest.Provider
	// jwt holds one ID token per person, by name.
	jwt map[string]string
	// persons are the people by name.
	persons map[string]oidctest.Person
}

var peopleRoles = auth.RoleMap{"viewers": domain.RoleViewer, "ops": domain.RoleOperator, "leads": domain.RoleApprover,
	"platform": domain.RoleAdmin, "audit": domain.RoleAuditor}

func newPeopleRig(t *testing.T) *peopleRig {
	t.Helper()
	st := storetest.New(t)
	x := &harness{t: t, store: st, tokens: auth.NewTokens(st), reg: prometheus.NewRegistry()}
	x.tok = x.token("campaigns", "n8n")
	x.other = x.token("other", "zapier")
	idp := oidctest.Start(t)
	o, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: idp.Issuer(), ClientID: idp.ClientID,
		ClientSecret: idp.ClientSecret, RedirectURL: "http://127.0.0.1:8080/auth/callback", RoleMap: peopleRoles, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	e, err := api.New(api.Config{Ledger: domain.NewLedger(st, contractCards()), Auth: auth.Chain{Tokens: x.tokens, People: o},
		Ready: st.Ping, Logger: slog.New(slog.DiscardHandler), Registry: x.reg})
	if err != nil {
		t.Fatal(err)
	}
	x.h, x.readyFn = e, st.Ping
	r := &peopleRig{harness: x, idp: idp, jwt: map[string]string{}, persons: map[string]oidctest.Person{}}
	for name, groups := range map[string][]string{"viewer": {"viewers"}, "auditor": {"audit"}, "operator": {"ops"},
		"approver": {"leads"}, "approver2": {"ops", "leads"}, "admin": {"ops", "platform"}} {
		p := oidctest.Person{Subject: "sub-" + name, Email: name + "@example.com", Name: name, Groups: groups}
		r.persons[name] = p
		r.jwt[name] = idp.IDToken(t, p)
		// They signed in to the desk once: the people an item is assigned to.
		r.signIn(domain.Actor{Kind: domain.ActorPerson, Issuer: idp.Issuer(), Subject: p.Subject, Email: p.Email, Name: name,
			Role: rigRoles[name]})
	}
	return r
}

// rigRoles are the roles peopleRoles gives the rig's people.
var rigRoles = map[string]domain.Role{"viewer": domain.RoleViewer, "auditor": domain.RoleAuditor, "operator": domain.RoleOperator,
	"approver": domain.RoleApprover, "approver2": domain.RoleApprover, "admin": domain.RoleAdmin}

// signIn records a desk sign-in of p: from then on Handoff knows them.
func (x *peopleRig) signIn(p domain.Actor) {
	x.t.Helper()
	ctx, now := context.Background(), time.Now().UTC()
	s := domain.Session{Hash: p.Issuer + "|" + p.Subject, Person: p, CreatedAt: now, LastSeenAt: now}
	if err := x.store.CreateSession(ctx, s, domain.SystemEvent(ctx, &domain.IDSource{}, now, p, "signed_in", "", nil)); err != nil {
		x.t.Fatal(err)
	}
}

// humanRoute is one human action: setup makes a fresh operation the action
// applies to and returns it with a valid body.
type humanRoute struct {
	action  string
	min     domain.Role // operator or approver
	after   string      // the state a successful call leaves
	setup   func(x *peopleRig, key string) (map[string]any, map[string]any)
	changed func(op map[string]any) bool
}

var humanRoutes = []humanRoute{
	{"resolve", domain.RoleOperator, "completed", func(x *peopleRig, key string) (map[string]any, map[string]any) {
		op := x.unknownOutcome(key)
		return op, map[string]any{"action": "confirm_executed", "result": map[string]any{"ref": "crm_1"}, "reason": "seen in the CRM",
			"expected_version": op["version"]}
	}, nil},
	{"assign", domain.RoleOperator, "unknown_outcome", func(x *peopleRig, key string) (map[string]any, map[string]any) {
		op := x.unknownOutcome(key)
		return op, map[string]any{"assignee": "operator@example.com", "reason": "mine", "expected_version": op["version"]}
	}, func(op map[string]any) bool { return op["assignee"] == "operator@example.com" }},
	{"notes", domain.RoleOperator, "unknown_outcome", func(x *peopleRig, key string) (map[string]any, map[string]any) {
		op := x.unknownOutcome(key)
		return op, map[string]any{"text": "called the provider"}
	}, nil},
	{"revisions", domain.RoleOperator, "awaiting_approval", func(x *peopleRig, key string) (map[string]any, map[string]any) {
		op := x.register(key, "crm.task.create", nil)
		return op, map[string]any{"content": map[string]any{"owner": "u_10"}, "reason": "fix the owner", "expected_version": op["version"]}
	}, nil},
	{"approve", domain.RoleApprover, "received", func(x *peopleRig, key string) (map[string]any, map[string]any) {
		return x.register(key, "coupon.issue", nil), map[string]any{"content_version": 1, "reason": "looks right"}
	}, nil},
	{"reject", domain.RoleApprover, "cancelled", func(x *peopleRig, key string) (map[string]any, map[string]any) {
		return x.register(key, "coupon.issue", nil), map[string]any{"content_version": 1, "reason": "wrong amount"}
	}, nil},
}

// TestAuthz_HumanRoutes is the authorization matrix: every human route ×
// every kind of caller answers exactly the expected status, and a refused
// call changes nothing.
func TestAuthz_HumanRoutes(t *testing.T) {
	x := newPeopleRig(t)
	forged := x.persons["admin"]
	forged.BadSignature = true
	callers := []struct {
		name   string
		bearer func(x *peopleRig) string
		role   domain.Role // zero: not a person
		status int         // when not a person with a role that may act
	}{
		{"no credentials", func(*peopleRig) string { return "" }, domain.Role{}, 401},
		{"forged person JWT", func(x *peopleRig) string { return x.idp.IDToken(t, forged) }, domain.Role{}, 401},
		{"workflow token", func(x *peopleRig) string { return x.tok }, domain.Role{}, 403},
		{"other namespace", func(x *peopleRig) string { return x.other }, domain.Role{}, 403},
		{"viewer", func(x *peopleRig) string { return x.jwt["viewer"] }, domain.RoleViewer, 403},
		{"auditor", func(x *peopleRig) string { return x.jwt["auditor"] }, domain.RoleAuditor, 403},
		{"operator", func(x *peopleRig) string { return x.jwt["operator"] }, domain.RoleOperator, 403},
		{"approver", func(x *peopleRig) string { return x.jwt["approver"] }, domain.RoleApprover, 403},
		{"admin", func(x *peopleRig) string { return x.jwt["admin"] }, domain.RoleAdmin, 403},
	}
	for _, rt := range humanRoutes {
		for _, who := range callers {
			t.Run(rt.action+"/"+who.name, func(t *testing.T) {
				x.t = t
				op, body := rt.setup(x, strings.ReplaceAll(fmt.Sprintf("authz-%s-%s", rt.action, who.name), " ", "_"))
				want := who.status
				if !who.role.IsZero() && who.role.AtLeast(rt.min) {
					want = 200
				}
				r := x.do("POST", opPath(op, rt.action), who.bearer(x), body)
				after := x.do("GET", opPath(op, ""), x.tok, nil).ok(200)
				if want != 200 {
					r.problem(want, map[int]string{401: "unauthenticated", 403: "forbidden"}[want])
					if after["version"] != op["version"] {
						t.Fatalf("a refused %s changed the operation: version %v → %v", rt.action, op["version"], after["version"])
					}
					return
				}
				got := r.ok(200)
				if got["state"] != rt.after || after["version"].(float64) != op["version"].(float64)+1 || (rt.changed != nil && !rt.changed(got)) {
					t.Fatalf("%s by %s: %v", rt.action, who.name, got)
				}
			})
		}
	}
	// The same 403 for an operation that does not exist: the answer gives
	// another namespace's workflow no hint of what exists.
	t.Run("other namespace cannot probe", func(t *testing.T) {
		x.t = t
		for _, rt := range humanRoutes {
			_, body := rt.setup(x, "probe-"+rt.action)
			x.do("POST", "/v1/operations/op_01ZZZZZZZZZZZZZZZZZZZZZZZZ/"+rt.action, x.other, body).problem(403, "forbidden")
		}
	})
}
