package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

func signIn(t *testing.T, st *store.Store, p domain.Actor, at time.Time) {
	t.Helper()
	ctx := context.Background()
	s := domain.Session{Hash: fmt.Sprintf("%s|%s|%d", p.Issuer, p.Subject, at.UnixNano()), Person: p, CreatedAt: at, LastSeenAt: at}
	if err := st.CreateSession(ctx, s, domain.SystemEvent(ctx, &domain.IDSource{}, at, p, "signed_in", "", nil)); err != nil {
		t.Fatal(err)
	}
}

// TestPeople_search: the people who signed in are found by a part of their
// name, email or subject in any case, filtered by role, keyed on (issuer,
// subject); an assignee resolves to them by email in any case.
func TestPeople_search(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	person := func(iss, sub, email, name string, r domain.Role) domain.Actor {
		return domain.Actor{Kind: domain.ActorPerson, Issuer: iss, Subject: sub, Email: email, Name: name, Role: r}
	}
	ada := person("https://idp", "u1", "Ada@Example.com", "Ada Lovelace", domain.RoleOperator)
	signIn(t, st, ada, now)
	signIn(t, st, person("https://idp", "u2", "bob@example.com", "Bob 100%_sure", domain.RoleApprover), now)
	signIn(t, st, person("https://idp", "u3", "vic@example.com", "Vic Viewer", domain.RoleViewer), now)
	signIn(t, st, person("https://other", "u1", "", "Robot", domain.RoleOperator), now) // same subject, another issuer
	// Ada signs in again with a new name: still one person.
	ada.Name = "Ada King"
	signIn(t, st, ada, now.Add(time.Hour))

	names := func(q domain.PeopleQuery) []string {
		t.Helper()
		if q.Limit == 0 {
			q.Limit = 10
		}
		ps, err := st.People(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	for _, c := range []struct {
		q    domain.PeopleQuery
		want string
	}{
		{domain.PeopleQuery{}, "[Ada King Bob 100%_sure Robot Vic Viewer]"},
		{domain.PeopleQuery{Text: "EXAMPLE.COM"}, "[Ada King Bob 100%_sure Vic Viewer]"},
		{domain.PeopleQuery{Text: "lovelace"}, "[]"},
		{domain.PeopleQuery{Text: "king"}, "[Ada King]"},
		{domain.PeopleQuery{Text: "%_"}, "[Bob 100%_sure]"}, // wildcards are literal
		{domain.PeopleQuery{Text: "u1"}, "[Ada King Robot]"},
		{domain.PeopleQuery{Roles: domain.Deciders}, "[Ada King Bob 100%_sure Robot]"},
		{domain.PeopleQuery{Limit: 2}, "[Ada King Bob 100%_sure]"},
	} {
		if got := fmt.Sprint(names(c.q)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.q, got, c.want)
		}
	}
	for id, want := range map[string]string{"ada@example.com": "https://idp u1", "ADA@EXAMPLE.COM": "https://idp u1",
		"u1": "https://other u1", "u2": "", "nobody@example.com": ""} {
		ps, err := st.PeopleByIdentity(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, p := range ps {
			got += p.Issuer + " " + p.Subject
		}
		if got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
}
