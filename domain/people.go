package domain

import (
	"context"
	"fmt"
	"slices"
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
// it.
type PeopleStore interface {
	// People lists the people matching q, by name then email.
	People(ctx context.Context, q PeopleQuery) ([]Person, error)
	// Person reads one person by (issuer, subject); ENotFound when they
	// never signed in.
	Person(ctx context.Context, issuer, subject string) (Person, error)
	// PeopleByIdentity lists the people whose Identity is id: their email
	// in any case, or, for someone without an email, their subject.
	PeopleByIdentity(ctx context.Context, id string) ([]Person, error)
}

// MaxPeople is how many people one search lists at most.
const MaxPeople = 200

// Deciders are the roles that can take a decision on a desk item: the
// people an item is assigned to.
var Deciders = []Role{RoleOperator, RoleApprover, RoleAdmin}

func (l *Desk) peopleStore(actor Actor) (PeopleStore, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, err
	}
	return l.store, nil
}

// People lists the people who signed in and match q.
func (l *Desk) People(ctx context.Context, actor Actor, q PeopleQuery) ([]Person, error) {
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

// Assignee resolves what a person typed to assign an item to — an
// identity: an email in any case, or the subject of someone without one —
// to the one person it names: someone who signed in with a role that can
// decide. "" is nobody (the zero Person). An identity that names deciders
// at two identity providers is refused: which one is meant is for the
// person to say, not for Handoff to guess.
func (l *Desk) Assignee(ctx context.Context, actor Actor, chosen string) (Person, error) {
	if err := requirePerson(actor, RoleOperator); err != nil {
		return Person{}, err
	}
	chosen = strings.TrimSpace(chosen)
	if chosen == "" {
		return Person{}, nil
	}
	if strings.EqualFold(chosen, actor.Identity()) {
		return actor.Person(), nil // themselves: whoever else may share their email
	}
	ps, err := l.peopleStore(actor)
	if err != nil {
		return Person{}, err
	}
	if errs := checkTexts([2]string{"assignee", chosen}); len(errs) > 0 {
		return Person{}, Invalid(errs...)
	}
	found, err := ps.PeopleByIdentity(ctx, chosen)
	if err != nil {
		return Person{}, err
	}
	if len(found) == 0 {
		return Person{}, Invalid(FieldError{"assignee", chosen + " has never signed in to Handoff: choose someone from the list"})
	}
	var deciders []Person
	for _, p := range found {
		if p.Decides() {
			deciders = append(deciders, p)
		}
	}
	switch len(deciders) {
	case 0:
		return Person{}, Invalid(FieldError{"assignee", found[0].Label() + " is a " + found[0].Role.String() + " and cannot decide a desk item"})
	case 1:
		return deciders[0], nil
	}
	return Person{}, Invalid(FieldError{"assignee", fmt.Sprintf("%s names %d people who signed in with different identity providers (%s, %s): choose the person from the desk's list",
		chosen, len(deciders), deciders[0].Issuer, deciders[1].Issuer)})
}

// Decides reports whether the person's role can decide a desk item.
func (p Person) Decides() bool { return slices.Contains(Deciders, p.Role) }

// personReader reads one person who signed in (PeopleStore.Person).
type personReader interface {
	Person(ctx context.Context, issuer, subject string) (Person, error)
}

// assignee checks the person an assignment names, by (issuer, subject),
// and returns them as the people table knows them now. Nobody (the zero
// Person) needs no check, and neither does the person assigning to
// themselves (a Take): they are signed in with a role that decides.
func assignee(ctx context.Context, people personReader, actor Actor, to Person) (Person, error) {
	if to.Issuer == "" && to.Subject == "" && to.Identity() == "" {
		return Person{}, nil
	}
	// Themselves, as their session names them now; someone without a
	// subject (no identity provider says who they are) by identity.
	if to.Issuer == actor.Issuer && to.Subject == actor.Subject && (to.Subject != "" || to.Identity() == actor.Identity()) {
		return actor.Person(), nil
	}
	if to.Subject == "" {
		return Person{}, Invalid(FieldError{"assignee", "name the person by their identity provider and subject: choose someone from the list"})
	}
	if errs := checkTexts([2]string{"assignee", to.Issuer}, [2]string{"assignee", to.Subject}); len(errs) > 0 {
		return Person{}, Invalid(errs...)
	}
	if err := requirePerson(actor, RoleViewer); err != nil {
		return Person{}, err
	}
	p, err := people.Person(ctx, to.Issuer, to.Subject)
	if ErrorCode(err) == ENotFound {
		return Person{}, Invalid(FieldError{"assignee", to.Subject + " at " + to.Issuer + " has never signed in to Handoff: choose someone from the list"})
	} else if err != nil {
		return Person{}, err
	}
	if !p.Decides() {
		return Person{}, Invalid(FieldError{"assignee", p.Label() + " is a " + p.Role.String() + " and cannot decide a desk item"})
	}
	return p, nil
}
