package domain_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestSavedViews_ownersAndSharing: through the Ledger on the real store, a
// person lists their own views and the shared ones, never another's
// private one; a name is unique per person and page in any case, Unicode
// included; another person can neither rename nor delete a view, an admin
// can change a shared one; the limit per person holds and nothing is
// written by a refusal.
func TestSavedViews_ownersAndSharing(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, domain.Cards{})
	person := func(sub string, r domain.Role) domain.Actor {
		return domain.Actor{Kind: domain.ActorPerson, Issuer: "https://idp.example.com", Subject: sub, Email: sub + "@example.com", Role: r}
	}
	ann, bob, vic, root := person("ann", domain.RoleOperator), person("bob", domain.RoleOperator), person("vic", domain.RoleViewer),
		person("root", domain.RoleAdmin)
	// Ann at another identity provider is someone else.
	otherAnn := ann
	otherAnn.Issuer = "https://other.example.com"

	save := func(who domain.Actor, page, name string, shared bool, f map[string]string) (domain.SavedView, error) {
		return l.Views.SaveView(ctx, who, domain.SavedView{Page: page, Name: name, Shared: shared, Filter: f})
	}
	mineView, err := save(ann, "queue", "Ärger timeouts", false, map[string]string{"q": "timeout", "state": "unknown_outcome"})
	if err != nil {
		t.Fatal(err)
	}
	team, err := save(ann, "queue", "CRM failures", true, map[string]string{"type": "crm.task.create"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := save(vic, "queue", "vic's own", false, map[string]string{"mine": "1"}); err != nil {
		t.Fatalf("a viewer saves their own view: %v", err)
	}
	if _, err := save(bob, "audit", "Bob's audit", true, map[string]string{"actor": "ann"}); err != nil {
		t.Fatal(err)
	}

	names := func(who domain.Actor, page string) string {
		t.Helper()
		vs, err := l.Views.SavedViews(ctx, who, page)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, v := range vs {
			out += fmt.Sprintf("%s/%v;", v.Name, v.OwnedBy(who))
		}
		return out
	}
	for _, c := range []struct {
		who        domain.Actor
		page, want string
	}{
		{ann, "queue", "CRM failures/true;Ärger timeouts/true;"},
		{bob, "queue", "CRM failures/false;"},
		{vic, "queue", "vic's own/true;CRM failures/false;"},
		{otherAnn, "queue", "CRM failures/false;"},
		{ann, "audit", "Bob's audit/false;"},
		{ann, "operations", ""},
	} {
		if got := names(c.who, c.page); got != c.want {
			t.Errorf("%s at %s sees %q, want %q", c.who.Issuer+"|"+c.who.Subject, c.page, got, c.want)
		}
	}
	got, err := st.SavedView(ctx, mineView.ID)
	if err != nil || got.Filter["q"] != "timeout" || got.Filter["state"] != "unknown_outcome" || len(got.Filter) != 2 ||
		got.Owner.Subject != "ann" || got.Owner.Email != "ann@example.com" {
		t.Fatalf("read back: %+v, %v", got, err)
	}

	// Bad input and duplicate names: refused, nothing written.
	long := ""
	for range domain.MaxViewName + 1 {
		long += "x"
	}
	for _, c := range []struct {
		name, page, vname string
		filter            map[string]string
		code              domain.Code
	}{
		{"empty name", "queue", "   ", nil, domain.EInvalid},
		{"too long", "queue", long, nil, domain.EInvalid},
		{"a bidi control", "queue", "ok\u202eko", nil, domain.EInvalid},
		{"unknown page", "types", "x", nil, domain.EInvalid},
		{"unknown field", "queue", "x", map[string]string{"cursor": "abc"}, domain.EInvalid},
		{"audit field on the queue", "queue", "x", map[string]string{"actor": "ann"}, domain.EInvalid},
		{"same name in another case", "queue", "ärger TIMEOUTS", nil, domain.EInvalid},
	} {
		if _, err := save(ann, c.page, c.vname, false, c.filter); domain.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	if _, err := save(bob, "queue", "ärger timeouts", false, nil); err != nil {
		t.Errorf("another person may use the same name: %v", err)
	}
	if _, err := save(ann, "operations", "Ärger timeouts", false, nil); err != nil {
		t.Errorf("the same name on another page: %v", err)
	}
	if _, err := l.Views.SaveView(ctx, domain.Actor{Kind: domain.ActorWorkflow, Namespace: "x"}, domain.SavedView{Page: "queue", Name: "w"}); domain.ErrorCode(err) != domain.EForbidden {
		t.Errorf("a workflow saves a view: %v", err)
	}

	// Another person may not rename or delete; a private view is not even
	// found; an admin changes a shared one, not a private one.
	for _, c := range []struct {
		who  domain.Actor
		id   string
		code domain.Code
	}{{bob, team.ID, domain.EForbidden}, {bob, mineView.ID, domain.ENotFound}, {otherAnn, team.ID, domain.EForbidden},
		{root, mineView.ID, domain.ENotFound}} {
		if _, err := l.Views.DeleteView(ctx, c.who, c.id); domain.ErrorCode(err) != c.code {
			t.Errorf("%s deletes %s: %v, want %s", c.who.Subject, c.id, err, c.code)
		}
		if _, err := l.Views.UpdateView(ctx, c.who, c.id, "taken over", true); domain.ErrorCode(err) != c.code {
			t.Errorf("%s renames %s: %v, want %s", c.who.Subject, c.id, err, c.code)
		}
	}
	if got := names(ann, "queue"); got != "CRM failures/true;Ärger timeouts/true;" {
		t.Fatalf("after the refusals Ann sees %q", got)
	}
	if _, err := l.Views.UpdateView(ctx, ann, team.ID, "ärger timeouts", true); domain.ErrorCode(err) != domain.EInvalid {
		t.Errorf("renaming to a name taken: %v", err)
	}
	if v, err := l.Views.UpdateView(ctx, root, team.ID, "CRM failures (all)", true); err != nil || v.Name != "CRM failures (all)" {
		t.Fatalf("an admin renames a shared view: %+v, %v", v, err)
	}
	if _, err := l.Views.UpdateView(ctx, ann, team.ID, "CRM failures", false); err != nil {
		t.Fatal(err)
	}
	if got := names(bob, "queue"); got != "ärger timeouts/true;" {
		t.Errorf("unshared, Bob sees %q", got)
	}
	if _, err := l.Views.DeleteView(ctx, ann, mineView.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Views.DeleteView(ctx, ann, mineView.ID); domain.ErrorCode(err) != domain.ENotFound {
		t.Errorf("deleting twice: %v", err)
	}

	// The limit: one person keeps at most MaxViewsPerPerson, over every page.
	have := len(mustViews(t, l, vic, "queue")) // Ann's view is unshared now: only Vic's own
	for i := have; i < domain.MaxViewsPerPerson; i++ {
		if _, err := save(vic, "audit", fmt.Sprintf("view %d", i), false, nil); err != nil {
			t.Fatalf("view %d: %v", i, err)
		}
	}
	if _, err := save(vic, "queue", "one too many", false, nil); domain.ErrorCode(err) != domain.EInvalid {
		t.Fatalf("view %d: %v, want refused", domain.MaxViewsPerPerson+1, err)
	}
	if n := len(mustViews(t, l, vic, "audit")) + len(mustViews(t, l, vic, "queue")); n != domain.MaxViewsPerPerson+1 { // Bob's shared audit view
		t.Errorf("Vic lists %d views, want %d", n, domain.MaxViewsPerPerson+1)
	}
}

func mustViews(t *testing.T, l *domain.Ledger, who domain.Actor, page string) []domain.SavedView {
	t.Helper()
	vs, err := l.Views.SavedViews(ctx0, who, page)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

var ctx0 = context.Background()
