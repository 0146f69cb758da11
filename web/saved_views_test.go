package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// TestDesk_SavedViewShared: Ada saves the queue's filter as a shared view
// from the page's own form; it opens the queue with exactly that filter.
// Bob sees it, opens it and gets the same rows, but can neither rename nor
// delete it; Vic, a viewer, saves a view of his own, which nobody else
// sees. An admin-free desk: only Ada removes hers.
func TestDesk_SavedViewShared(t *testing.T) {
	d := newDesk(t)
	for i := range 3 {
		d.intoDesk(fmt.Sprintf("evt_%d:a", i), false)
	}
	d.intoDesk("evt_9:a", true)

	filtered := "/desk/queue?state=failed_terminal&type=crm.task.create"
	p := d.get("ada", filtered).want(http.StatusOK)
	want := rowIDs(p)
	if len(want) != 3 {
		t.Fatalf("the filtered queue has %d rows", len(want))
	}
	p.one("views-empty")
	form := inputs(p.one("save-view-form"))
	form.Set("name", "Terminal CRM failures")
	form.Set("shared", "1")
	r := d.post("ada", "/desk/views", form).want(http.StatusSeeOther)
	if got := r.header.Get("Location"); got != filtered {
		t.Fatalf("the saved view opens %q, want %q", got, filtered)
	}

	b := d.get("bob", "/desk/queue").want(http.StatusOK)
	views := b.all("view")
	if len(views) != 1 || attr(views[0], "data-name") != "Terminal CRM failures" ||
		!strings.Contains(text(views[0]), "shared by ada@example.com") {
		t.Fatalf("Bob's views: %q", b.text("saved-views"))
	}
	b.none("view-delete") // not his
	link := attr(b.one("view-link"), "href")
	if link != filtered {
		t.Fatalf("the view links to %q, want %q", link, filtered)
	}
	if got := rowIDs(d.get("bob", link).want(http.StatusOK)); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Bob's rows %v, Ada's %v", got, want)
	}
	id := attr(views[0], "data-id")
	d.post("bob", "/desk/views/"+id+"/delete", url.Values{}).want(http.StatusForbidden).one("problem")
	d.post("bob", "/desk/views/"+id, url.Values{"name": {"mine now"}}).want(http.StatusForbidden)

	// Vic, a viewer, keeps a view of the audit trail to himself.
	v := d.get("vic", "/desk/audit?action=resolved").want(http.StatusOK)
	vf := inputs(v.one("save-view-form"))
	vf.Set("name", "Decisions")
	vf.Del("shared") // inputs() sends every checkbox; Vic leaves it unticked
	if loc := d.post("vic", "/desk/views", vf).want(http.StatusSeeOther).header.Get("Location"); loc != "/desk/audit?action=resolved" {
		t.Fatalf("Vic's view opens %q", loc)
	}
	if got := d.get("vic", "/desk/audit").want(http.StatusOK).all("view-link"); len(got) != 1 || attr(got[0], "href") != "/desk/audit?action=resolved" {
		t.Fatalf("Vic's audit views: %d", len(got))
	}
	if aa := d.get("ada", "/desk/audit").want(http.StatusOK); len(aa.all("view")) > 0 {
		t.Fatalf("Ada sees %q", aa.text("views-list"))
	}
	// Vic sees Ada's shared queue view, and only the queue a viewer sees:
	// no selection, no bulk form.
	vq := d.get("vic", link).want(http.StatusOK)
	vq.one("view")
	vq.none("select-all")
	vq.none("bulk")

	// Ada renames it, stops sharing it, and deletes it.
	a := d.get("ada", "/desk/queue").want(http.StatusOK)
	edit := inputs(a.one("view-edit-form"))
	edit.Set("name", "CRM terminal")
	edit.Del("shared")
	d.post("ada", "/desk/views/"+id, edit).want(http.StatusSeeOther)
	d.get("bob", "/desk/queue").want(http.StatusOK).none("view")
	if got := d.get("ada", "/desk/queue").want(http.StatusOK).text("view-owner"); got != "yours, only you see it" {
		t.Fatalf("Ada's view after unsharing: %q", got)
	}
	d.post("ada", "/desk/views/"+id+"/delete", url.Values{"return": {"/desk/queue"}}).want(http.StatusSeeOther)
	d.get("ada", "/desk/queue").want(http.StatusOK).none("view")
}

// rowIDs are the queue rows' operation IDs, in order.
func rowIDs(p answer) []string {
	var out []string
	for _, r := range p.all("queue-row") {
		out = append(out, attr(r, "data-id"))
	}
	return out
}

// TestDesk_SavedViewRefusals: bad input is refused with the reason, and
// nothing is written; a field the page does not filter on is not kept;
// markup in a name is shown as text.
func TestDesk_SavedViewRefusals(t *testing.T) {
	d := newDesk(t)
	ok := url.Values{"page": {"queue"}, "name": {"Timeouts"}, "q": {"timeout"}}
	d.post("ada", "/desk/views", ok).want(http.StatusSeeOther)
	long := strings.Repeat("é", domain.MaxViewName+1)
	for _, c := range []struct {
		name   string
		form   url.Values
		status int
		says   string
	}{
		{"no name", url.Values{"page": {"queue"}, "name": {"  "}}, http.StatusUnprocessableEntity, "name"},
		{"a name too long", url.Values{"page": {"queue"}, "name": {long}}, http.StatusUnprocessableEntity, "at most 80"},
		{"an unknown page", url.Values{"page": {"types"}, "name": {"x"}}, http.StatusUnprocessableEntity, "queue, operations or audit"},
		{"no page", url.Values{"name": {"x"}}, http.StatusUnprocessableEntity, "page"},
		{"a duplicate name", url.Values{"page": {"queue"}, "name": {"timeouts"}}, http.StatusUnprocessableEntity, "already a view named"},
		{"a state the queue does not list", url.Values{"page": {"queue"}, "name": {"x"}, "state": {"completed"}}, http.StatusUnprocessableEntity, "state"},
		{"an age that is no age", url.Values{"page": {"queue"}, "name": {"x"}, "age": {"soon"}}, http.StatusUnprocessableEntity, "age"},
		{"an order the queue has not", url.Values{"page": {"queue"}, "name": {"x"}, "sort": {"sideways"}}, http.StatusUnprocessableEntity, "sort"},
		{"an order Operations has not", url.Values{"page": {"operations"}, "name": {"x"}, "sort": {"changed"}}, http.StatusUnprocessableEntity, "sort"},
		{"an audit time that is no time", url.Values{"page": {"audit"}, "name": {"x"}, "from": {"yesterday"}}, http.StatusUnprocessableEntity, "from"},
		{"an unknown audit action", url.Values{"page": {"audit"}, "name": {"x"}, "action": {"exploded"}}, http.StatusUnprocessableEntity, "action"},
		{"a value too long", url.Values{"page": {"queue"}, "name": {"x"}, "q": {strings.Repeat("a", 501)}}, http.StatusUnprocessableEntity, "at most 500"},
	} {
		p := d.post("ada", "/desk/views", c.form)
		if p.status != c.status {
			t.Errorf("%s: status %d, want %d\n%.400s", c.name, p.status, c.status, p.body)
			continue
		}
		if got := p.text("problem"); !strings.Contains(got, c.says) {
			t.Errorf("%s: %q, want it to say %q", c.name, got, c.says)
		}
	}
	d.post("ada", "/desk/views/view_unknown", url.Values{"name": {"x"}}).want(http.StatusNotFound)
	d.post("ada", "/desk/views/view_unknown/delete", nil).want(http.StatusNotFound)

	// Only the page's own fields are kept, and a name is text.
	odd := url.Values{"page": {"operations"}, "name": {`<b onclick="x()">bold</b>`}, "state": {"completed"},
		"cursor": {"abc"}, "return": {"https://evil.example.com"}, "javascript:alert(1)": {"1"}}
	if loc := d.post("ada", "/desk/views", odd).want(http.StatusSeeOther).header.Get("Location"); loc != "/desk/operations?state=completed" {
		t.Fatalf("the view opens %q", loc)
	}
	p := d.get("ada", "/desk/operations").want(http.StatusOK)
	if strings.Contains(p.body, `<b onclick`) || p.text("view-link") != `<b onclick="x()">bold</b>` {
		t.Fatalf("the name is not shown as text: %q", p.text("view-link"))
	}
	vs, err := d.ledger.Views.SavedViews(context.Background(), testPeople["ada"], "queue")
	if err != nil || len(vs) != 1 || vs[0].Name != "Timeouts" || len(vs[0].Filter) != 1 {
		t.Fatalf("the refusals wrote something: %+v, %v", vs, err)
	}
}

// TestDesk_SelectAllMatching: with more desk items than a page, the queue
// offers every item the filter matches, counted over every page; the
// preview says how many match and decides each at its version; applying
// decides all of them, not only the page's.
func TestDesk_SelectAllMatching(t *testing.T) {
	d := newDesk(t)
	n := queuePageSize + 12
	for i := range n {
		d.intoDesk(fmt.Sprintf("evt_%03d:a", i), false)
	}
	d.intoDesk("evt_other:a", true) // not matched by the filter
	p := d.get("ada", "/desk/queue?state=failed_terminal").want(http.StatusOK)
	if got := len(p.all("queue-row")); got != queuePageSize {
		t.Fatalf("%d rows on the page", got)
	}
	if got := p.text("select-all-count"); got != fmt.Sprint(n) {
		t.Fatalf("select all %s, want %d", got, n)
	}
	p.none("select-all-cap")
	// The offer posts with the bulk form (form="bulk-selected").
	if all := p.one("bulk-all"); attr(all, "form") != "bulk-selected" || attr(all, "name") != "all" {
		t.Fatalf("the offer is not part of the bulk form: %v", all.Attr)
	}
	// Page two counts the same.
	next := attr(p.one("next-page"), "href")
	if got := d.get("ada", next).want(http.StatusOK).text("select-all-count"); got != fmt.Sprint(n) {
		t.Fatalf("page two: select all %s", got)
	}

	form := inputs(p.one("bulk-selected"))
	form.Set("all", "1")
	form.Set("decision", "cancel")
	form.Set("reason", "the campaign was withdrawn")
	pre := d.post("ada", "/desk/batch/preview", form).want(http.StatusOK)
	if got := pre.text("batch-matching"); !strings.Contains(got, fmt.Sprintf("matches %d items", n)) {
		t.Fatalf("preview: %q", got)
	}
	pre.none("batch-capped")
	if got := pre.text("batch-summary"); !strings.HasPrefix(got, fmt.Sprintf("%d items will be decided, 0 skipped", n)) {
		t.Fatalf("preview: %q", got)
	}
	if got := len(pre.all("batch-version")); got != n {
		t.Fatalf("%d items show their version, want %d", got, n)
	}
	res := d.applyBatch("ada", inputs(pre.one("batch-apply-form")))
	if got := res.text("batch-counts"); got != fmt.Sprintf("%d applied, 0 skipped, 0 failed.", n) {
		t.Fatalf("result: %q", got)
	}
	left, _, err := d.ledger.Desk.DeskQueue(context.Background(), testPeople["ada"], domain.ListQuery{States: domain.DeskStates, Limit: 200}, "")
	if err != nil || len(left) != 1 || left[0].Key != "evt_other:a" {
		t.Fatalf("left in the desk: %d, %v", len(left), err)
	}
}

// TestDesk_SelectAllCapped: a filter matching more than one batch may take
// says so on the queue and in the preview, which takes the oldest MaxBatch
// and names how many are left; content the person may not read is not in
// the preview.
func TestDesk_SelectAllCapped(t *testing.T) {
	cards := testCards()
	crm := cards["crm.task.create"]
	crm.ContentVisibleTo = domain.RoleAdmin
	cards[crm.Name] = crm
	d := newDeskWith(t, cards)
	seedFailed(t, d, domain.MaxBatch+5, `{"secret":"PIN-4471"}`)
	p := d.get("ada", "/desk/queue").want(http.StatusOK)
	if got := p.text("select-all-count"); got != fmt.Sprint(domain.MaxBatch+5) {
		t.Fatalf("select all %s", got)
	}
	if got := p.text("select-all-cap"); !strings.Contains(got, "at most 1,000") {
		t.Fatalf("cap: %q", got)
	}
	form := inputs(p.one("bulk-selected"))
	form.Set("all", "1")
	form.Set("decision", "note")
	form.Set("reason", "looked at")
	pre := d.post("ada", "/desk/batch/preview", form).want(http.StatusOK)
	if got := pre.text("batch-capped"); !strings.Contains(got, "oldest 1,000") || !strings.Contains(got, "other 5") {
		t.Fatalf("capped: %q", got)
	}
	if got := len(inputs(pre.one("batch-apply-form"))["item"]); got != domain.MaxBatch {
		t.Fatalf("the apply form carries %d items", got)
	}
	if strings.Contains(pre.body, "PIN-4471") {
		t.Fatal("the preview shows content the person may not read")
	}
}

// seedFailed loads n failed_terminal crm.task.create items with content,
// in one batch of rows.
func seedFailed(t *testing.T, d *desk, n int, content string) {
	t.Helper()
	card, _ := d.ledger.Cards.Get("crm.task.create")
	var changes []domain.Change
	for i := range n {
		env := domain.Env{Card: card, Now: d.ledger.Now().Add(-time.Duration(n-i) * time.Minute), Actor: testWorkflow, NewID: d.ledger.IDs.New}
		r := domain.Registration{Namespace: "campaigns", Key: fmt.Sprintf("evt_%05d:crm", i), Type: card.Name, EventID: fmt.Sprintf("evt_%05d", i)}
		ch, err := domain.NewOperation(r, []byte(content[:len(content)-1]+fmt.Sprintf(`,"n":%d}`, i)), false, env)
		if err != nil {
			t.Fatal(err)
		}
		ch.Op.State, ch.Op.Attempts, ch.Op.Version = domain.FailedTerminal, 1, 4
		ch.Op.LastError = &domain.ErrorInfo{Class: domain.ClassValidation, Message: "owner does not exist"}
		changes = append(changes, ch)
	}
	if err := d.store.CreateBatch(context.Background(), changes); err != nil {
		t.Fatal(err)
	}
}

// TestDesk_SharedViewShowsOnlyWhatOneMaySee: a shared view is a filter,
// not what it found: Ada's view of the Operations page searching a word of
// a content that viewers may not read lists the item for her, and nothing
// for Vic, who opens the same view.
func TestDesk_SharedViewShowsOnlyWhatOneMaySee(t *testing.T) {
	cards := testCards()
	crm := cards["crm.task.create"]
	crm.ContentVisibleTo = domain.RoleOperator
	cards[crm.Name] = crm
	d := newDeskWith(t, cards)
	op := d.register("evt_1:a", "crm.task.create") // content {"owner":"u_9","title":"Follow up","ref":"evt_1:a"}
	d.indexSearch()                                // the content's text is found once indexed
	form := url.Values{"page": {"operations"}, "name": {"Follow-ups"}, "shared": {"1"}, "q": {"follow up"}}
	loc := d.post("ada", "/desk/views", form).want(http.StatusSeeOther).header.Get("Location")
	if got := rowIDs(d.get("ada", loc).want(http.StatusOK)); len(got) != 1 || got[0] != op.ID {
		t.Fatalf("Ada's view lists %v", got)
	}
	p := d.get("vic", "/desk/operations").want(http.StatusOK)
	link := attr(p.one("view-link"), "href")
	if link != loc {
		t.Fatalf("Vic's link %q, Ada's %q", link, loc)
	}
	v := d.get("vic", link).want(http.StatusOK)
	if got := rowIDs(v); len(got) != 0 {
		t.Fatalf("Vic finds %v through the content he may not read", got)
	}
	v.one("queue-empty")
}
