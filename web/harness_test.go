package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/net/html"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// The desk's handler tests run the real pages on a real database (SQLite,
// or PostgreSQL with HANDOFF_TEST_POSTGRES). Sign-in is faked one layer up:
// the test engine sets the person the X-Test-Person header names, where the
// session middleware would set the signed-in one.

var testPeople = map[string]domain.Actor{
	"ada": {Kind: domain.ActorPerson, Name: "Ada Lovelace", Email: "ada@example.com", Subject: "ada", Role: domain.RoleApprover},
	"bob": {Kind: domain.ActorPerson, Name: "Bob Builder", Email: "bob@example.com", Subject: "bob", Role: domain.RoleApprover},
	"vic": {Kind: domain.ActorPerson, Name: "Vic Viewer", Email: "vic@example.com", Subject: "vic", Role: domain.RoleViewer},
	"aud": {Kind: domain.ActorPerson, Name: "Audra Auditor", Email: "audra@example.com", Subject: "aud", Role: domain.RoleAuditor},
	// Ada again, after her provider changed her email.
	"ada2": {Kind: domain.ActorPerson, Name: "Ada Lovelace", Email: "ada.l@example.com", Subject: "ada", Role: domain.RoleApprover},
	// Someone else with Ada's first email, at another identity provider.
	"ada3": {Kind: domain.ActorPerson, Name: "Ada Other", Email: "ada@example.com", Issuer: "https://other.example.com", Subject: "ada",
		Role: domain.RoleApprover},
}

// testCookieKey signs the test desk's flash cookies.
var testCookieKey = []byte("0123456789abcdef0123456789abcdef")

var testWorkflow = domain.Actor{Kind: domain.ActorWorkflow, Name: "shop", Namespace: "campaigns"}

func testCards() domain.Cards {
	crm := domain.Card{Name: "crm.task.create", Description: "Create the follow-up task", Provider: "acme-crm",
		ProviderIdempotency: domain.IdempotencyNone, Lookup: domain.LookupManual,
		LookupURL: "https://crm.example.com/tasks?external_id={provider_key}",
		Retry:     domain.RetryPolicy{MaxAttempts: 3, MaxElapsed: time.Hour, Backoff: time.Second, BackoffMax: time.Minute},
		Retryable: []domain.ErrorClass{domain.ClassTransient}, Terminal: []domain.ErrorClass{domain.ClassValidation},
		Lease: 30 * time.Second, Owner: "crm-oncall", Unverified: []string{"Does the CRM dedupe external_id across workspaces?"}}
	coupon := crm
	coupon.Name, coupon.Provider, coupon.RequiresApproval, coupon.LookupURL, coupon.Unverified = "coupon.issue", "shop-billing", true, "", nil
	return domain.Cards{crm.Name: crm, coupon.Name: coupon}
}

type desk struct {
	t      testing.TB
	store  *store.Store
	ledger *domain.Ledger
	engine *gin.Engine
}

// indexSearch runs the search indexer to the end of its queue, as a
// replica's loop does a moment after a write: on PostgreSQL the Operations
// page's search finds a part of the key, the content and the error once it
// has run (store.IndexSearch), the IDs and identifiers before.
func (d *desk) indexSearch() {
	d.t.Helper()
	for {
		n, err := d.store.IndexSearch(context.Background(), 500)
		if err != nil {
			d.t.Fatalf("indexing the search text: %v", err)
		}
		if n < 500 {
			return
		}
	}
}

func newDesk(t testing.TB) *desk {
	t.Helper()
	return newDeskWith(t, testCards())
}

// newDeskWith is newDesk with other cards.
func newDeskWith(t testing.TB, cards domain.Cards) *desk {
	t.Helper()
	gin.SetMode(gin.TestMode)
	return deskOn(t, storetest.New(t), cards)
}

// replica is another desk process on the same database, as a second
// replica behind a balancer would be.
func (d *desk) replica(cards domain.Cards) *desk {
	d.t.Helper()
	return deskOn(d.t, d.store, cards)
}

func deskOn(t testing.TB, st *store.Store, cards domain.Cards) *desk {
	l := domain.NewLedger(st, cards)
	// signIn with no OIDC: the development sign-in's banner shows, as it
	// would on a laptop.
	s := &server{ledger: l, log: slog.New(slog.NewTextHandler(io.Discard, nil)), signIn: &signIn{cookieKey: testCookieKey}}
	e := gin.New()
	e.Use(securityHeaders, compress, func(c *gin.Context) {
		if p, ok := testPeople[c.GetHeader("X-Test-Person")]; ok {
			c.Set(keyPerson, p)
		}
	})
	s.deskRoutes(e)
	return &desk{t: t, store: st, ledger: l, engine: e}
}

// signedIn records the test people as having signed in, as a real sign-in
// would (with its audit event): the desk assigns only to people it knows.
func (d *desk) signedIn(who ...string) {
	d.t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for _, w := range who {
		p := testPeople[w]
		s := domain.Session{Hash: "seed-" + w, Person: p, CreatedAt: at, LastSeenAt: at}
		if err := d.store.CreateSession(ctx, s, domain.SystemEvent(ctx, &domain.IDSource{}, at, p, "signed_in", "", nil)); err != nil {
			d.t.Fatal(err)
		}
	}
}

// answer is a response with its parsed document.
type answer struct {
	t      testing.TB
	d      *desk
	who    string
	status int
	header http.Header
	body   string
	doc    *html.Node
}

func (d *desk) do(who, method, target string, form url.Values, headers ...string) answer {
	d.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, target, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-Test-Person", who)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	d.engine.ServeHTTP(w, req)
	a := d.parse(w.Body.String())
	a.status, a.header, a.d, a.who = w.Code, w.Header(), d, who
	return a
}

// refused fails unless the decision was refused with the status: the
// answer redirects (303) and leaves a flash saying so. It follows the
// redirect with the flash and returns the page that shows it.
func (p answer) refused(status int) answer {
	p.t.Helper()
	p.want(http.StatusSeeOther)
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == "handoff_flash" && c.MaxAge > 0 {
			cookie = c
		}
	}
	if cookie == nil {
		p.t.Fatalf("the refusal left no flash: %v", p.header)
	}
	payload, _, _ := strings.Cut(cookie.Value, ".") // the JSON, then its signature
	raw, _ := base64.RawURLEncoding.DecodeString(payload)
	var f flash
	if err := json.Unmarshal(raw, &f); err != nil || f.Status != status {
		p.t.Fatalf("flash %s (%v): status %d, want %d", raw, err, f.Status, status)
	}
	next := p.d.get(p.who, p.header.Get("Location"), "Cookie", cookie.Name+"="+cookie.Value).want(http.StatusOK)
	if !strings.Contains(strings.Join(next.header.Values("Set-Cookie"), ";"), "handoff_flash=;") {
		p.t.Fatalf("the page that showed the flash did not forget it: %v", next.header)
	}
	return next
}

// parse reads an HTML page or fragment.
func (d *desk) parse(body string) answer {
	d.t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		d.t.Fatalf("unparseable HTML: %v\n%s", err, body)
	}
	return answer{t: d.t, body: body, doc: doc}
}

func (d *desk) get(who, target string, headers ...string) answer {
	return d.do(who, "GET", target, nil, headers...)
}

func (d *desk) post(who, target string, form url.Values) answer {
	return d.do(who, "POST", target, form)
}

// status fails the test unless the response has the status.
func (p answer) want(status int) answer {
	p.t.Helper()
	if p.status != status {
		p.t.Fatalf("status %d, want %d\n%s", p.status, status, p.body)
	}
	return p
}

// all returns the elements with the data-testid.
func (p answer) all(testid string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && attr(n, "data-testid") == testid {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.doc)
	return out
}

// one returns the only element with the data-testid.
func (p answer) one(testid string) *html.Node {
	p.t.Helper()
	ns := p.all(testid)
	if len(ns) != 1 {
		p.t.Fatalf("%d elements with data-testid %q, want 1\n%s", len(ns), testid, p.body)
	}
	return ns[0]
}

// text is the element's text, whitespace collapsed.
func (p answer) text(testid string) string {
	p.t.Helper()
	return text(p.one(testid))
}

// none fails the test if any element has the data-testid.
func (p answer) none(testid string) {
	p.t.Helper()
	if n := len(p.all(testid)); n != 0 {
		p.t.Fatalf("%d elements with data-testid %q, want none", n, testid)
	}
}

// fragment fails unless the response is a fragment, not a whole page.
func (p answer) fragment() answer {
	p.t.Helper()
	if strings.Contains(p.body, "<html") || strings.Contains(p.body, "<nav aria-label=\"Desk\"") {
		p.t.Fatalf("htmx got a whole page:\n%s", p.body)
	}
	return p
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data + " ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// register creates an operation through the Ledger, as a workflow would.
func (d *desk) register(key, typ string) domain.Operation {
	d.t.Helper()
	res, err := d.ledger.Workflow.Register(context.Background(), testWorkflow, domain.Registration{Key: key, Type: typ,
		EventID: strings.Split(key, ":")[0], Content: json.RawMessage(`{"owner":"u_9","title":"Follow up","ref":"` + key + `"}`)})
	if err != nil {
		d.t.Fatal(err)
	}
	return res.Operation
}

// intoDesk drives a new operation into unknown_outcome (a timeout after
// begin) or failed_terminal (a validation error before it).
func (d *desk) intoDesk(key string, unknown bool) domain.Operation {
	d.t.Helper()
	ctx := context.Background()
	op := d.register(key, "crm.task.create")
	cl, err := d.ledger.Workflow.Claim(ctx, testWorkflow, op.ID, domain.Claim{Worker: "w1"})
	if err != nil {
		d.t.Fatal(err)
	}
	tok := cl.Lease.Token
	settle := domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeFailedTerminal,
		Error: &domain.ErrorInfo{Class: domain.ClassValidation, Message: "owner u_9 does not exist"}}
	if unknown {
		if _, err := d.ledger.Workflow.Begin(ctx, testWorkflow, op.ID, domain.Begin{LeaseToken: tok}); err != nil {
			d.t.Fatal(err)
		}
		settle.Outcome, settle.Error = domain.OutcomeUnknown, &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}
	}
	op, err = d.ledger.Workflow.Settle(ctx, testWorkflow, op.ID, settle)
	if err != nil {
		d.t.Fatal(err)
	}
	return op
}

// inputs are the values of a form's inputs, as the browser would send them
// before the person types anything.
func inputs(form *html.Node) url.Values {
	out := url.Values{}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "input" && attr(n, "name") != "" {
			out.Add(attr(n, "name"), attr(n, "value"))
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(form)
	return out
}
