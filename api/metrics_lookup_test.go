package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/lookup"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/sandbox"
	"github.com/opshandoff/handoff/store/storetest"
	"github.com/prometheus/client_golang/prometheus"
)

// TestLookupMetrics drives a known scenario through the lookup loop — one
// timeout the provider executed (found), one it never received under an
// authoritative lookup (not found: retried), one whose record holds other
// content (conflict: the desk, then a person confirms) — and asserts
// handoff_lookups_total and handoff_settled_total exactly.
func TestLookupMetrics(t *testing.T) {
	ctx := context.Background()
	sbx, _ := sandbox.New(sandbox.Config{Lookup: sandbox.LookupAuthoritative})
	crm := httptest.NewServer(sbx.Handler())
	defer crm.Close()
	base := contractCards()["crm.task.create"]
	list := base
	list.Name, list.Lookup, list.NotifyURL = "crm.list", domain.LookupAPI, ""
	list.TwinsAllowed = true // the same content under three keys is this scenario, not a twin to hold
	list.LookupAdapter = &domain.LookupAdapter{Method: "GET", URL: crm.URL + "/v1/records?external_id={provider_key}",
		Found: domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", WhenNonempty: "/data",
			Compare: []domain.LookupCompare{{Answer: "/data/0/params", Content: ""}}}}
	get := list
	get.Name, get.LookupAuthoritative = "crm.get", true
	get.LookupAdapter = &domain.LookupAdapter{Method: "GET", URL: crm.URL + "/v1/records/{provider_key}",
		Found: domain.LookupFound{Status: []int{200}, Ref: "/id", Key: "/external_id"}, NotFoundStatus: []int{404}}
	st := storetest.New(t)
	l := domain.NewLedger(st, domain.Cards{list.Name: list, get.Name: get})
	reg := prometheus.NewRegistry()
	rec, err := api.NewRecovery(reg, st)
	if err != nil {
		t.Fatal(err)
	}
	l.Observer, l.Workflow.Events = rec, rec
	h, err := api.New(api.Config{Ledger: l, Auth: auth.Chain{}, Registry: reg, Ready: st.Ping})
	if err != nil {
		t.Fatal(err)
	}
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	timedOut := func(key, typ string, executed string) domain.Operation {
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: typ, Content: json.RawMessage(`{"a":1}`), Claim: &domain.Claim{Worker: "w"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Workflow.Begin(ctx, wf, res.Operation.ID, domain.Begin{LeaseToken: res.Claim.Lease.Token}); err != nil {
			t.Fatal(err)
		}
		if executed != "" {
			resp, err := http.Post(crm.URL+"/execute", "application/json",
				bytes.NewReader([]byte(`{"key":"`+res.Operation.ProviderKey+`","params":`+executed+`}`)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		op, err := l.Workflow.Settle(ctx, wf, res.Operation.ID, domain.Settle{LeaseToken: res.Claim.Lease.Token, Outcome: domain.OutcomeUnknown,
			Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Code: "timeout"}})
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	timedOut("found", "crm.list", `{"a":1}`)
	timedOut("absent", "crm.get", "")
	conflict := timedOut("conflict", "crm.list", `{"a":2}`)
	lk := &reconcile.Lookuper{Ledger: l.Upkeep, Store: st, Looker: lookup.New(true, nil), Types: l.Cards.LookupTypes(), Observe: rec.ObserveLookup,
		Now: func() time.Time { return time.Now().Add(time.Hour) }} // after the calls' deadline: a not-found counts
	if n, err := lk.Pass(ctx); err != nil || n != 3 {
		t.Fatalf("pass: %d %v", n, err)
	}
	alice := person("alice@example.com", domain.RoleOperator)
	if _, err := l.Desk.Resolve(ctx, alice, conflict.ID, domain.Resolve{Action: domain.ResolveConfirmExecuted,
		Result: &domain.Result{Ref: "sbx_2"}, Reason: "the record is ours after all"}); err != nil {
		t.Fatal(err)
	}

	got := scrape(t, h)
	want := map[string]float64{
		`handoff_lookups_total{result="found",type="crm.list"}`:                  1,
		`handoff_lookups_total{result="conflict",type="crm.list"}`:               1,
		`handoff_lookups_total{result="not_found",type="crm.get"}`:               1,
		`handoff_settled_total{by="lookup"}`:                                     2,
		`handoff_settled_total{by="person"}`:                                     1,
		`handoff_confirmed_effects_total{by="lookup",type="crm.list"}`:           1,
		`handoff_confirmed_effects_total{by="person",type="crm.list"}`:           1,
		`handoff_desk_entries_total{reason="timeout",type="crm.list"}`:           1,
		`handoff_resolutions_total{decision="confirm_executed",type="crm.list"}`: 1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && (strings.HasPrefix(k, "handoff_lookups_total") || strings.HasPrefix(k, "handoff_settled_total")) {
			t.Errorf("unexpected series %s = %v", k, v)
		}
	}
}
