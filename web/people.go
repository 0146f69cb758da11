package web

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// peopleOptions are the people to choose from, each named by (issuer,
// subject): the viewer first, then everyone else, and the current assignee
// when the list left them out.
func peopleOptions(ps []domain.Person, viewer domain.Actor, op domain.Operation) []pages.PersonOption {
	var out []pages.PersonOption
	seen := map[string]bool{}
	add := func(value, label string) {
		if value != "" && !seen[value] {
			seen[value] = true
			out = append(out, pages.PersonOption{Value: value, Label: label})
		}
	}
	add(personValue(viewer.Person()), domain.Person{Email: viewer.Email, Subject: viewer.Subject, Name: viewer.Name}.Label()+" (you)")
	for _, p := range ps {
		add(personValue(p), p.Label())
	}
	switch {
	case op.AssigneeSubject != "":
		add(personValue(domain.Person{Issuer: op.AssigneeIssuer, Subject: op.AssigneeSubject}), op.Assignee+" (assigned now)")
	case op.Assignee != "" && !slices.ContainsFunc(out, func(o pages.PersonOption) bool { return o.Label == op.Assignee }):
		add(op.Assignee, op.Assignee+" (assigned now)") // an assignment recorded by identity only
	}
	return out
}

// personValue names a person in a form: their issuer and subject, which
// personOf reads back. An email would not do: two people may share one.
func personValue(p domain.Person) string {
	if p.Subject == "" {
		return p.Identity() // a person without a subject: only an identity names them
	}
	return url.Values{"iss": {p.Issuer}, "sub": {p.Subject}}.Encode()
}

// personFrom reads what a form chose: a personValue, or an identity typed
// in, which the Ledger resolves.
func (s *server) personFrom(ctx context.Context, viewer domain.Actor, v string) (domain.Person, error) {
	if strings.HasPrefix(v, "iss=") {
		if q, err := url.ParseQuery(v); err == nil && q.Get("sub") != "" {
			return domain.Person{Issuer: q.Get("iss"), Subject: q.Get("sub")}, nil
		}
	}
	return s.ledger.Desk.Assignee(ctx, viewer, v)
}

// assignable are the people a list page's assignee fields suggest: those
// who signed in with a role that can decide, the viewer first, each by the
// identity the Ledger resolves back to them.
func (s *server) assignable(c *gin.Context) []pages.PersonOption {
	ps, err := s.ledger.Desk.People(c.Request.Context(), me(c), domain.PeopleQuery{Roles: domain.Deciders, Limit: domain.MaxPeople})
	if err != nil {
		s.log.Warn("listing the people to assign to", "err", err)
	}
	viewer := me(c).Person()
	out := []pages.PersonOption{{Value: viewer.Identity(), Label: viewer.Label() + " (you)"}}
	for _, p := range ps {
		if id := p.Identity(); id != "" && !slices.ContainsFunc(out, func(o pages.PersonOption) bool { return o.Value == id }) {
			out = append(out, pages.PersonOption{Value: id, Label: p.Label()})
		}
	}
	return out
}
