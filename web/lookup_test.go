package web

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/lookup"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/sandbox"
)

const deskLookupSecret = "sk_live_DeskLookupSecret_4242"

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestDeskLookup: the reconciler's lookup found a record with other content
// and handed the item over — the page shows that evidence first. "Look up
// now", once the provider has the record, shows the answer beside the
// decision and fills the confirm form in; it is recorded as a lookup, the
// item stays undecided, and the person's confirm, on the page loaded
// before the lookup, is not refused as stale. The secret the adapter sends
// appears in no log line, timeline, desk page or export.
func TestDeskLookup(t *testing.T) {
	ctx := context.Background()
	sbx, _ := sandbox.New(sandbox.Config{Lookup: sandbox.LookupUnsure})
	var sawAuth string
	var authMu sync.Mutex
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authMu.Lock()
		sawAuth = r.Header.Get("Authorization")
		authMu.Unlock()
		sbx.Handler().ServeHTTP(w, r)
	}))
	defer crm.Close()
	cards := testCards()
	crmCard := cards["crm.task.create"]
	crmCard.Lookup = domain.LookupAPI
	crmCard.LookupAdapter = &domain.LookupAdapter{Method: "GET", URL: crm.URL + "/v1/records?external_id={provider_key}", AuthEnv: "CRM_TOKEN",
		Found: domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", WhenNonempty: "/data",
			Compare: []domain.LookupCompare{{Answer: "/data/0/params/title", Content: "/title"}}}}
	cards[crmCard.Name] = crmCard
	d := newDeskWith(t, cards)
	getenv := func(k string) string {
		if k == "CRM_TOKEN" {
			return deskLookupSecret
		}
		return ""
	}
	d.ledger.Desk.Looker = lookup.New(true, getenv)
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d.signedIn("ada")

	execute := func(key, title string) {
		body, _ := json.Marshal(map[string]any{"key": key, "params": map[string]string{"owner": "u_9", "title": title}})
		resp, err := http.Post(crm.URL+"/execute", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// The provider executed evt_1 with other content before the timeout.
	execute(d.register("evt_1:crm", "crm.task.create").ProviderKey, "Someone else's task")
	conflict := d.intoDesk("evt_1:crm", true) // the same operation, registered again
	missed := d.intoDesk("evt_2:crm", true)
	// evt_3 was executed as sent: the lookup settles it, nobody is asked.
	execute(d.register("evt_3:crm", "crm.task.create").ProviderKey, "Follow up")
	found := d.intoDesk("evt_3:crm", true)
	d.get("ada", "/desk/operations/"+missed.ID).want(200).one("lookup-pending") // not handed off before the lookup concludes
	if q := d.get("ada", "/desk/queue").want(200).body; strings.Contains(q, missed.Key) {
		t.Fatal("an item awaiting Handoff's lookup is on the desk's queue")
	}
	// Nor is it counted as on it: not by the queue's total, the
	// navigation or the overview, which counts it apart.
	queue, overview := d.get("ada", "/desk/queue").want(200), d.get("ada", "/desk").want(200)
	if got := []string{attr(queue.one("list-total"), "data-total"), queue.text("nav-unknown"), attr(overview.one("count-desk"), "data-figure"),
		overview.text("overview-awaiting-lookup")}; got[0] != "0" || got[1] != "0 unknown" || got[2] != "0" || !strings.HasPrefix(got[3], "3 more") {
		t.Fatalf("awaiting the lookup, counted as: %q", got)
	}
	lk := &reconcile.Lookuper{Ledger: d.ledger.Upkeep, Store: d.store, Looker: d.ledger.Desk.Looker, Types: cards.LookupTypes(), Log: log}
	if n, err := lk.Pass(ctx); err != nil || n != 3 {
		t.Fatalf("pass: %d %v", n, err)
	}
	if q := d.get("ada", "/desk/queue").want(200).body; !strings.Contains(q, conflict.Key) || strings.Contains(q, found.Key) {
		t.Fatal("after the lookups the conflict is on the queue and the found one is not")
	}
	page := d.get("ada", "/desk/operations/"+conflict.ID).want(200)
	if ev := page.text("lookup-evidence"); !strings.Contains(ev, "looked up 1×") || !strings.Contains(ev, "conflict") {
		t.Fatalf("the evidence shown first: %q", ev)
	}
	page.none("lookup-found-ref")
	page.none("lookup-pending")

	// The provider has it now; a person looks it up.
	before := d.get("ada", "/desk/operations/"+missed.ID).want(200)
	if got := attr(before.one("result-ref-input"), "value"); got != "" {
		t.Fatalf("the confirm form is filled in before anything was found: %q", got)
	}
	confirm := inputs(before.one("form-confirm-executed"))
	execute(missed.ProviderKey, "Follow up")
	d.post("ada", "/desk/operations/"+missed.ID+"/lookup", inputs(before.one("form-lookup"))).want(http.StatusSeeOther)
	after := d.get("ada", "/desk/operations/"+missed.ID).want(200)
	ref := sbx.History(missed.ProviderKey)[0].Ref
	if got := attr(after.one("result-ref-input"), "value"); got != ref {
		t.Fatalf("the confirm form holds %q, want the found reference %s", got, ref)
	}
	if !strings.Contains(after.text("lookup-evidence"), "found "+ref) || !strings.Contains(after.text("lookup-evidence"), "ada@example.com") {
		t.Fatalf("the answer beside the decision: %q", after.text("lookup-evidence"))
	}
	op, _ := d.ledger.Desk.Get(ctx, testPeople["ada"], missed.ID)
	if op.State != domain.UnknownOutcome {
		t.Fatalf("a lookup decided: %s", op.State)
	}
	events, _ := d.ledger.Workflow.Timeline(ctx, testPeople["ada"], missed.ID)
	if last := events[len(events)-1]; last.Action != domain.ActionLookupRun || last.Actor.Email != "ada@example.com" {
		t.Fatalf("last event %s by %s", last.Action, last.Actor.Identity())
	}
	// The confirm from the page loaded before the lookup still goes through.
	confirm.Set("result_ref", ref)
	confirm.Set("reason", "the CRM has it")
	d.post("ada", "/desk/operations/"+missed.ID+"/resolve", confirm).want(http.StatusSeeOther)
	if op, _ := d.ledger.Desk.Get(ctx, testPeople["ada"], missed.ID); op.State != domain.Completed || op.Result.Ref != ref {
		t.Fatalf("after the confirm: %s %+v", op.State, op.Result)
	}

	// The overview: one settled by the lookup, one by a person; of the
	// three timeouts, two came to wait on a person.
	overview = d.get("ada", "/desk").want(200)
	if entered := chartSum(overview, "chart-daily", 1); entered != 2 {
		t.Fatalf("the overview counts %d desk entries, want 2: the one the lookup settled never waited on a person", entered)
	}
	if got := overview.text("settled-by-lookup"); !strings.Contains(got, "1 settled by Handoff's own lookup") ||
		!strings.Contains(got, "50 % of 2 settled") || !strings.Contains(got, "of desk time spared") {
		t.Fatalf("overview: %q", got)
	}
	if op, _ := d.ledger.Desk.Get(ctx, testPeople["ada"], found.ID); op.State != domain.Completed {
		t.Fatalf("evt_3: %s", op.State)
	}

	authMu.Lock()
	if sawAuth != "Bearer "+deskLookupSecret {
		t.Fatalf("the provider saw Authorization %q", sawAuth)
	}
	authMu.Unlock()
	// The secret is nowhere a person or a file could read it.
	var seen []string
	for _, id := range []string{conflict.ID, missed.ID, found.ID} {
		evs, _ := d.ledger.Workflow.Timeline(ctx, testPeople["ada"], id)
		b, _ := json.Marshal(evs)
		seen = append(seen, string(b), d.get("ada", "/desk/operations/"+id).body)
	}
	seen = append(seen, logs.String(), d.get("aud", "/desk/audit/export?format=jsonl").want(200).body,
		d.get("aud", "/desk/audit/export?format=csv").want(200).body, d.get("ada", "/desk/queue").body)
	for i, s := range seen {
		if strings.Contains(s, deskLookupSecret) || strings.Contains(s, "DeskLookupSecret") {
			t.Fatalf("the secret appears in output %d", i)
		}
	}
	if !strings.Contains(seen[len(seen)-3], "lookup_run") {
		t.Fatal("the export does not hold the lookup: the grep proves nothing")
	}
	if !strings.Contains(logs.String(), "looked up") {
		t.Fatal("the loop logged no try: the grep of the logs proves nothing")
	}
}
