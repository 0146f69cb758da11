package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// registerCaused registers key, caused by the operation with the key cause.
func (d *desk) registerCaused(key, cause string) domain.Operation {
	d.t.Helper()
	res, err := d.ledger.Workflow.Register(context.Background(), testWorkflow, domain.Registration{Key: key, Type: "crm.task.create",
		EventID: strings.Split(key, ":")[0], CausedBy: cause, Content: json.RawMessage(`{"owner":"u_9","ref":"` + key + `"}`)})
	if err != nil {
		d.t.Fatal(err)
	}
	return res.Operation
}

// TestDesk_EvidenceChains: caused_by and supersedes are links to those
// operations, with the chain behind them, bounded, ending in "…" when it
// goes on; a cause Handoff does not have is named, not linked.
func TestDesk_EvidenceChains(t *testing.T) {
	d := newDesk(t)
	root := d.registerCaused("evt_0:root", "")
	prev := root
	var ops []domain.Operation
	for i := 1; i <= chainHops+2; i++ {
		prev = d.registerCaused(fmt.Sprintf("evt_%d:step", i), prev.Key)
		ops = append(ops, prev)
	}
	orphan := d.registerCaused("evt_x:orphan", "evt_gone:elsewhere")

	links := func(p answer, testid string) []string {
		var out []string
		for _, n := range p.all(testid + "-link") {
			out = append(out, text(n))
		}
		return out
	}
	for _, c := range []struct {
		name     string
		op       domain.Operation
		want     []string // each link's text starts with it
		hrefs    []string
		more     bool
		notFound bool
	}{
		{"two hops", ops[1], []string{ops[0].Key, root.Key}, []string{ops[0].ID, root.ID}, false, false},
		{"longer than the page follows", ops[len(ops)-1], nil, nil, true, false},
		{"a cause Handoff does not have", orphan, []string{"evt_gone:elsewhere (not found)"}, []string{""}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := d.get("vic", "/desk/operations/"+c.op.ID).want(http.StatusOK)
			got := links(p, "caused-by")
			if c.more {
				if len(got) != chainHops || len(p.all("caused-by-more")) != 1 {
					t.Fatalf("%d links and %d \"…\", want %d and 1: %v", len(got), len(p.all("caused-by-more")), chainHops, got)
				}
				return
			}
			p.none("caused-by-more")
			if len(got) != len(c.want) {
				t.Fatalf("caused by %v, want %v", got, c.want)
			}
			for i, n := range p.all("caused-by-link") {
				if !strings.HasPrefix(got[i], c.want[i]) {
					t.Fatalf("link %d: %q, want %q", i, got[i], c.want[i])
				}
				var href string
				for a := n.FirstChild; a != nil; a = a.NextSibling {
					if a.Data == "a" {
						href = attr(a, "href")
					}
				}
				if want := c.hrefs[i]; (want == "") != (href == "") || want != "" && href != "/desk/operations/"+want {
					t.Fatalf("link %d goes to %q, want the page of %q", i, href, want)
				}
			}
		})
	}
}

// TestDesk_EvidenceSupersedes: an operation that replaced a cancelled one
// links to it, and on to the one that one replaced.
func TestDesk_EvidenceSupersedes(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	first := d.intoDesk("evt_1:crm_task", false)
	cancel := func(op domain.Operation) {
		if _, err := d.ledger.Desk.Resolve(ctx, testPeople["ada"], op.ID, domain.Resolve{Action: domain.ResolveCancel,
			Reason: "wrong owner", ExpectedVersion: op.Version}); err != nil {
			t.Fatal(err)
		}
	}
	cancel(first)
	replace := func(key, old string) domain.Operation {
		res, err := d.ledger.Workflow.Register(ctx, testWorkflow, domain.Registration{Key: key, Type: "crm.task.create", EventID: "evt_1",
			Supersedes: old, Content: json.RawMessage(`{"owner":"u_10"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Operation
	}
	second := replace("evt_1:crm_task_2", first.ID)
	op, err := d.ledger.Desk.Get(ctx, testWorkflow, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := d.ledger.Workflow.Claim(ctx, testWorkflow, op.ID, domain.Claim{Worker: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	if op, err = d.ledger.Workflow.Settle(ctx, testWorkflow, op.ID, domain.Settle{LeaseToken: cl.Lease.Token, Outcome: domain.OutcomeFailedTerminal,
		Error: &domain.ErrorInfo{Class: domain.ClassValidation, Message: "still wrong"}}); err != nil {
		t.Fatal(err)
	}
	cancel(op)
	third := replace("evt_1:crm_task_3", second.ID)

	p := d.get("vic", "/desk/operations/"+third.ID).want(http.StatusOK)
	var got []string
	for _, n := range p.all("supersedes-link") {
		got = append(got, text(n))
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], second.Key) || !strings.HasPrefix(got[1], first.Key) {
		t.Fatalf("supersedes %v, want %s then %s", got, second.Key, first.Key)
	}
	if !strings.Contains(p.body, `href="/desk/operations/`+first.ID+`"`) {
		t.Fatalf("the chain does not link to %s", first.ID)
	}
}

// TestDesk_EvidenceKeyWindow: for a provider that deduplicates by key, the
// evidence says until when it keeps the provider key and how long that is
// from now, or since when it no longer does; nothing for one that does not.
func TestDesk_EvidenceKeyWindow(t *testing.T) {
	cards := testCards()
	mail := cards["crm.task.create"]
	mail.Name, mail.Provider, mail.ProviderIdempotency, mail.ProviderKeyRetention = "mail.send", "mailer", domain.IdempotencyKey, 24*time.Hour
	sms := mail
	sms.Name, sms.ProviderKeyRetention = "sms.send", time.Microsecond
	cards[mail.Name], cards[sms.Name] = mail, sms
	d := newDeskWith(t, cards)
	sent := func(key, typ string) domain.Operation {
		ctx := context.Background()
		res, err := d.ledger.Workflow.Register(ctx, testWorkflow, domain.Registration{Key: key, Type: typ, EventID: "evt_1",
			Content: json.RawMessage(`{"to":"a@example.com","ref":"` + key + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := d.ledger.Workflow.Claim(ctx, testWorkflow, res.Operation.ID, domain.Claim{Worker: "w1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.ledger.Workflow.Begin(ctx, testWorkflow, cl.Operation.ID, domain.Begin{LeaseToken: cl.Lease.Token}); err != nil {
			t.Fatal(err)
		}
		op, err := d.ledger.Workflow.Settle(ctx, testWorkflow, cl.Operation.ID, domain.Settle{LeaseToken: cl.Lease.Token,
			Outcome: domain.OutcomeUnknown, Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}})
		if err != nil {
			t.Fatal(err)
		}
		return op
	}

	kept := sent("evt_1:mail", mail.Name)
	p := d.get("vic", "/desk/operations/"+kept.ID).want(http.StatusOK)
	until := kept.ProviderKeyFirstSentAt.Add(24 * time.Hour).UTC().Format("2006-01-02 15:04")
	if got := p.text("evidence-key-window"); !strings.Contains(got, "retained until "+until) || !strings.Contains(got, "(in 23 h") {
		t.Fatalf("key window: %q, want until %s, in 23 h …", got, until)
	}

	gone := sent("evt_1:sms", sms.Name)
	p = d.get("vic", "/desk/operations/"+gone.ID).want(http.StatusOK)
	at := gone.ProviderKeyFirstSentAt.UTC().Format("2006-01-02 15:04")
	if got := p.text("evidence-key-window"); !strings.Contains(got, "Left the provider's retention window at "+at) || !strings.Contains(got, "ago") {
		t.Fatalf("key window of a key past retention: %q", got)
	}

	// The time follows the person's choice: relative reads "in 23 h …".
	p = d.get("vic", "/desk/operations/"+kept.ID, "Cookie", timeCookie+"=relative").want(http.StatusOK)
	if got := p.text("evidence-key-window"); !strings.Contains(got, "retained until in 23 h") {
		t.Fatalf("relative key window: %q", got)
	}

	none := d.intoDesk("evt_2:crm_task", true) // crm deduplicates nothing
	d.get("vic", "/desk/operations/"+none.ID).want(http.StatusOK).none("evidence-key-window")
}

// TestDesk_TimelineDetailAndResolutionTime: an event's detail is shown as
// fields, not as JSON, and the resolution says when it was decided.
func TestDesk_TimelineDetailAndResolutionTime(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	d.post("ada", "/desk/operations/"+op.ID+"/resolve", url.Values{"action": {"confirm_executed"}, "result_ref": {"crm_123"},
		"reason": {"found it"}, "expected_version": {fmt.Sprint(op.Version)}}).want(http.StatusSeeOther)
	p := d.get("vic", "/desk/operations/"+op.ID).want(http.StatusOK)

	var resolved string
	for _, n := range p.all("timeline-event") {
		if attr(n, "data-action") == "resolved" {
			resolved = text(n)
			if strings.Contains(resolved, `{"`) {
				t.Fatalf("the resolution's detail is raw JSON: %q", resolved)
			}
		}
	}
	if !strings.Contains(resolved, "action confirm_executed") {
		t.Fatalf("the resolution's detail as fields: %q", resolved)
	}
	if len(p.all("timeline-detail")) == 0 {
		t.Fatal("no event shows its detail as fields")
	}
	now, err := d.ledger.Desk.Get(context.Background(), testPeople["vic"], op.ID)
	if err != nil || now.Resolution == nil {
		t.Fatalf("no resolution: %v", err)
	}
	if got := p.text("op-resolved-at"); got != now.Resolution.At.UTC().Format("2006-01-02 15:04:05 UTC") {
		t.Fatalf("resolved at %q, want %s", got, now.Resolution.At)
	}
}

// TestLedger_GetByKey: caused_by is followed by key within the operation's
// namespace; a workflow of another namespace is told nothing of it, and a
// key that cannot be one is simply not found.
func TestLedger_GetByKey(t *testing.T) {
	d := newDesk(t)
	op := d.registerCaused("evt_1:root", "")
	ctx := context.Background()
	other := testWorkflow
	other.Namespace = "elsewhere"
	for _, c := range []struct {
		name  string
		actor domain.Actor
		ns    string
		key   string
		found bool
	}{
		{"a person", testPeople["vic"], op.Namespace, op.Key, true},
		{"its own workflow", testWorkflow, op.Namespace, op.Key, true},
		{"another namespace's workflow", other, op.Namespace, op.Key, false},
		{"the wrong namespace", testPeople["vic"], "elsewhere", op.Key, false},
		{"no key", testPeople["vic"], op.Namespace, "bad key\x00", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := d.ledger.Desk.GetByKey(ctx, c.actor, c.ns, c.key)
			if c.found != (err == nil) || c.found && got.ID != op.ID {
				t.Fatalf("found %q, err %v; want found=%v", got.ID, err, c.found)
			}
			if !c.found && domain.ErrorCode(err) != domain.ENotFound {
				t.Fatalf("err %v, want not found", err)
			}
		})
	}
}
