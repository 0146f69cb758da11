package domain

import (
	"context"
	"strings"
	"time"
)

// Person is someone who signed in to the desk, keyed on (issuer, subject):
// the people an item can be assigned to.
type Person struct {
	Issuer     string
	Subject    string
	Email      string
	Name       string
	Role       Role
	LastSeenAt time.Time
}

// Actor is the person as an actor, with the role of their last sign-in.
func (p Person) Actor() Actor {
	return Actor{Kind: ActorPerson, Issuer: p.Issuer, Subject: p.Subject, Email: p.Email, Name: p.Name, Role: p.Role}
}

// Identity is what an assignment to this person records: the identity the
// person's own "Mine" filter and Take use.
func (p Person) Identity() string { return p.Actor().Identity() }

// Label names the person for a list to choose from.
func (p Person) Label() string {
	if id := p.Identity(); p.Name != "" && p.Name != id {
		return p.Name + " <" + id + ">"
	}
	return p.Identity()
}

// PeopleQuery searches the people who signed in. Empty fields match all.
type PeopleQuery struct {
	Text  string // a part of the email, name or subject, any case
	Roles []Role // the roles to list; empty: every role
	Limit int
}

// PeopleStore reads the people who signed in. The store package implements
// it; the Ledger finds it on its Store.
type PeopleStore interface {
	// People lists the people matching q, by name then email.
	People(ctx context.Context, q PeopleQuery) ([]Person, error)
	// PeopleByIdentity lists the people whose Identity is id: their email
	// in any case, or, for someone without an email, their subject.
	PeopleByIdentity(ctx context.Context, id string) ([]Person, error)
}

// MaxPeople is how many people one search lists at most.
const MaxPeople = 200

// Deciders are the roles that can take a decision on a desk item: the
// people an item is assigned to.
var Deciders = []Role{RoleOperator, RoleApprover, RoleAdmin}

func (l *Ledger) peopleStore(actor Actor) (PeopleStore, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, err
	}
	ps, ok := l.Store.(PeopleStore)
	if !ok {
		return nil, Errorf(EInternal, "this store does not know who signed in")
	}
	return ps, nil
}

// People lists the people who signed in and match q.
func (l *Ledger) People(ctx context.Context, actor Actor, q PeopleQuery) ([]Person, error) {
	ps, err := l.peopleStore(actor)
	if err != nil {
		return nil, err
	}
	if errs := checkTexts([2]string{"q", q.Text}); len(errs) > 0 {
		return nil, Invalid(errs...)
	}
	if q.Limit <= 0 || q.Limit > MaxPeople {
		q.Limit = MaxPeople
	}
	return ps.People(ctx, q)
}

// Assignee resolves what a person chose or typed to assign an item to: ""
// is nobody; anything else must be someone who signed in with a role that
// can decide, and the answer is that person's Identity, spelt as their own
// "Mine" matches it.
func (l *Ledger) Assignee(ctx context.Context, actor Actor, chosen string) (string, error) {
	if err := requirePerson(actor, RoleOperator); err != nil {
		return "", err
	}
	chosen = strings.TrimSpace(chosen)
	if chosen == "" {
		return "", nil
	}
	ps, err := l.peopleStore(actor)
	if err != nil {
		return "", err
	}
	if errs := checkTexts([2]string{"assignee", chosen}); len(errs) > 0 {
		return "", Invalid(errs...)
	}
	found, err := ps.PeopleByIdentity(ctx, chosen)
	if err != nil {
		return "", err
	}
	if len(found) == 0 {
		return "", Invalid(FieldError{"assignee", chosen + " has never signed in to Handoff: choose someone from the list"})
	}
	for _, p := range found {
		for _, r := range Deciders {
			if p.Role == r {
				return p.Identity(), nil
			}
		}
	}
	return "", Invalid(FieldError{"assignee", found[0].Label() + " is a " + found[0].Role.String() + " and cannot decide a desk item"})
}
