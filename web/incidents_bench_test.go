package web

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// BenchmarkDeskIncidents times the incidents list and the page of the
// largest incident on 100,000 operations, 10,000 of them in the desk, every
// desk item settled into it through the Ledger so it joined its incident as
// in production (seedDeskEntering): benchIncidents incidents of very
// different sizes — one of thousands of items, many of a handful — some
// triaged, some resolved by deciding their items. It calls the handlers
// in-process so the numbers are server time alone. The target is a p95
// under 50 ms on PostgreSQL:
//
//	HANDOFF_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable \
//	  go test -run XXX -bench DeskIncidents -benchtime 100x ./web/
//
// Each case reports the median and the 95th percentile of its calls. On
// SQLite, or with -short, it runs on 10,000 operations.
func BenchmarkDeskIncidents(b *testing.B) {
	d := newDeskWith(b, benchIncidentCards())
	d.signedIn("ada", "bob")
	total := 10_000
	if storetest.Postgres() && !testing.Short() {
		total = 100_000
	}
	plan := planIncidents(total / 10)
	all := seedDeskEntering(b, d, total, total/10, func(n int) deskEntry { return incidentKey(plan.of[n]) })
	ids := triageIncidents(b, d, all.desk, plan)

	largest := "/desk/incidents/" + ids[0]
	cases := []struct {
		name, url string
		testid    string // the rows counted
		rows      int
	}{
		{"list", "/desk/incidents", "incident-row", benchIncidents},
		{"incident_largest", largest, "incident-item", min(plan.sizes[0], domain.MaxIncidentItems)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			d.timeCalls(b, func(int) *http.Request {
				return request("GET", c.url, "")
			}, func(i int, w *httptest.ResponseRecorder) {
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d", c.url, w.Code)
				}
				if i == 0 {
					if n := len(d.parse(w.Body.String()).all(c.testid)); n != c.rows {
						b.Fatalf("%s: %d %s, want %d", c.url, n, c.testid, c.rows)
					}
				}
			})
		})
	}
}

// benchIncidents is how many incidents the desk's items make.
const benchIncidents = 36

// benchIncidentCards are the test cards and two more types, so that the
// incidents are of four providers.
func benchIncidentCards() domain.Cards {
	cards := testCards()
	for name, provider := range map[string]string{"mail.send": "postmark", "invoice.create": "ledgerly"} {
		c := cards["crm.task.create"]
		c.Name, c.Provider, c.LookupURL = name, provider, ""
		cards[name] = c
	}
	return cards
}

// benchErrors are the errors the desk's items settled with: doubts after
// the provider call began, then failures before it.
var benchErrors = []deskEntry{
	{Unknown: true, Error: domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout after 30s"}},
	{Unknown: true, Error: domain.ErrorInfo{Class: domain.ClassTimeout, Code: "ETIMEDOUT", Message: "connect ETIMEDOUT"}},
	{Unknown: true, Error: domain.ErrorInfo{Class: domain.ClassTransient, Code: "ECONNRESET", Message: "socket hang up"}},
	{Unknown: true, Error: domain.ErrorInfo{Class: domain.ClassTransient, Code: "502", Message: "bad gateway"}},
	{Unknown: true, Error: domain.ErrorInfo{Class: domain.ClassTransient, Code: "503", Message: "service unavailable"}},
	{Unknown: true, Error: domain.ErrorInfo{Class: domain.ClassUnknown, Message: "the worker lost the response"}},
	{Error: domain.ErrorInfo{Class: domain.ClassValidation, Code: "422", Message: "owner does not exist"}},
	{Error: domain.ErrorInfo{Class: domain.ClassValidation, Code: "400", Message: "title is too long"}},
	{Error: domain.ErrorInfo{Class: domain.ClassAuth, Code: "401", Message: "API key revoked"}},
	{Error: domain.ErrorInfo{Class: domain.ClassPermission, Code: "403", Message: "the workspace is read-only"}},
	{Error: domain.ErrorInfo{Class: domain.ClassNotFound, Code: "404", Message: "customer not found"}},
	{Error: domain.ErrorInfo{Class: domain.ClassConflict, Code: "409", Message: "exists with other fields"}},
	{Error: domain.ErrorInfo{Class: domain.ClassConfig, Message: "no API key configured"}},
}

var benchTypes = []string{"crm.task.create", "coupon.issue", "mail.send", "invoice.create"}

// incidentKey is the type and error of incident k: with 4 types and 13
// errors, the first 52 are all different.
func incidentKey(k int) deskEntry {
	e := benchErrors[k%len(benchErrors)]
	e.Type = benchTypes[k%len(benchTypes)]
	return e
}

// incidentPlan says which incident each desk item joins: sizes[k] items
// join incident k, of[n] is desk item n's.
type incidentPlan struct {
	sizes []int
	of    []int
}

// planIncidents spreads inDesk items over benchIncidents incidents, the
// k-th of a size falling as 1/(k+1)² — the first over half of them, the
// last of one or a few — in a shuffled order, as outages overlap.
func planIncidents(inDesk int) incidentPlan {
	var h float64
	for k := range benchIncidents {
		h += 1 / float64((k+1)*(k+1))
	}
	p := incidentPlan{sizes: make([]int, benchIncidents)}
	rest := inDesk
	for k := 1; k < benchIncidents; k++ {
		p.sizes[k] = max(1, int(float64(inDesk)/h/float64((k+1)*(k+1))))
		rest -= p.sizes[k]
	}
	p.sizes[0] = rest
	for k, n := range p.sizes {
		for range n {
			p.of = append(p.of, k)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(p.of), func(i, j int) { p.of[i], p.of[j] = p.of[j], p.of[i] })
	return p
}

// triageIncidents does what people would have done with the incidents, and
// returns their IDs in plan order: the largest acknowledged, owned by Bob
// and noted, the second acknowledged, one resolved and one ignored by a
// person with items still open, and every item of four small ones decided,
// which resolves them.
func triageIncidents(b *testing.B, d *desk, desk []domain.Operation, plan incidentPlan) []string {
	b.Helper()
	ctx := context.Background()
	ada := testPeople["ada"]
	list, err := d.ledger.Incidents.DeskIncidents(ctx, ada)
	if err != nil {
		b.Fatal(err)
	}
	byKey := map[domain.IncidentKey]domain.Incident{}
	for _, in := range list {
		byKey[in.IncidentKey] = in
	}
	ids := make([]string, benchIncidents)
	for k := range benchIncidents {
		e := incidentKey(k)
		in, ok := byKey[domain.IncidentKey{Type: e.Type, Error: domain.ErrorKind{Class: e.Error.Class.String(), Code: e.Error.Code}}]
		if !ok || in.TotalItems != plan.sizes[k] {
			b.Fatalf("incident %d (%s %s): %d items, want %d", k, e.Type, e.Error.Class, in.TotalItems, plan.sizes[k])
		}
		ids[k] = in.ID
	}
	triage := func(k int, ts ...domain.Triage) {
		for _, t := range ts {
			if _, err := d.ledger.Incidents.TriageIncident(ctx, ada, ids[k], t); err != nil {
				b.Fatal(err)
			}
		}
	}
	triage(0, domain.Triage{Kind: domain.TriageAcknowledge, Text: "on it"},
		domain.Triage{Kind: domain.TriageOwner, Owner: testPeople["bob"].Person()},
		domain.Triage{Kind: domain.TriageNote, Text: "the CRM's status page says degraded"},
		domain.Triage{Kind: domain.TriageNote, Text: "asked their support which tasks they kept"})
	triage(1, domain.Triage{Kind: domain.TriageAcknowledge})
	triage(6, domain.Triage{Kind: domain.TriageResolve, Text: "fixed upstream; the items are decided one by one"})
	triage(12, domain.Triage{Kind: domain.TriageIgnore, Text: "a test workspace"})
	decided := 0
	for n, op := range desk {
		k := plan.of[n]
		if k < 20 || k%4 != 0 {
			continue
		}
		r := domain.Resolve{Action: domain.ResolveCancel, Reason: "the customer left", ExpectedVersion: op.Version}
		if op.State == domain.UnknownOutcome {
			r.Action, r.Then = domain.ResolveConfirmNotExecuted, domain.ResolveCancel
		}
		if _, err := d.ledger.Desk.Resolve(ctx, ada, op.ID, r); err != nil {
			b.Fatal(err)
		}
		decided++
	}
	b.Logf("incidents of %v items; %d items decided", plan.sizes, decided)
	return ids
}
