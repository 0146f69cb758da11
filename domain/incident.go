package domain

import (
	"context"
	"slices"
	"strings"
	"time"
)

// An incident is the desk's items that failed the same way: one provider,
// one type, one error class and code. A mailer outage that left eight
// ECONNRESET timeouts is one incident, decided once.

// ErrorKind is an error's class and code, the incident's signature.
type ErrorKind struct{ Class, Code string }

// String is "class:code", or the class alone without a code.
func (k ErrorKind) String() string {
	if k.Code == "" {
		return k.Class
	}
	return k.Class + ":" + k.Code
}

// ParseErrorKind reads "class:code" or "class".
func ParseErrorKind(s string) ErrorKind {
	class, code, _ := strings.Cut(s, ":")
	return ErrorKind{Class: class, Code: code}
}

// DeskItemSignature is one desk item as incidents group it.
type DeskItemSignature struct {
	Type      string
	Namespace string
	State     State
	Error     ErrorKind
	Message   string // the last error's message
	Since     time.Time
	Updated   time.Time
}

// Incident is one group of desk items.
type Incident struct {
	Provider   string
	Type       string
	Error      ErrorKind
	Message    string // the latest item's error message
	Count      int
	States     []State
	FirstSeen  time.Time
	LastSeen   time.Time
	Namespaces []string
}

// IncidentStore lists the desk's items by signature; the store package
// implements it.
type IncidentStore interface {
	DeskSignatures(ctx context.Context) ([]DeskItemSignature, error)
}

// DeskIncidents groups the desk's items by provider, type and error, the
// largest group first.
func (l *Ledger) DeskIncidents(ctx context.Context, actor Actor) ([]Incident, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, err
	}
	sigs, err := l.Store.DeskSignatures(ctx)
	if err != nil {
		return nil, err
	}
	byKey := map[[3]string]*Incident{}
	var order [][3]string
	for _, s := range sigs {
		k := [3]string{s.Type, s.Error.Class, s.Error.Code}
		in := byKey[k]
		if in == nil {
			in = &Incident{Type: s.Type, Error: s.Error, FirstSeen: s.Since, LastSeen: s.Updated}
			if card, err := l.Cards.Get(s.Type); err == nil {
				in.Provider = card.Provider
			}
			byKey[k] = in
			order = append(order, k)
		}
		in.Count++
		if s.Since.Before(in.FirstSeen) {
			in.FirstSeen = s.Since
		}
		if !s.Updated.Before(in.LastSeen) {
			in.LastSeen, in.Message = s.Updated, s.Message
		}
		if !slices.Contains(in.Namespaces, s.Namespace) {
			in.Namespaces = append(in.Namespaces, s.Namespace)
		}
		if !slices.Contains(in.States, s.State) {
			in.States = append(in.States, s.State)
		}
	}
	out := make([]Incident, 0, len(order))
	for _, k := range order {
		slices.Sort(byKey[k].Namespaces)
		out = append(out, *byKey[k])
	}
	slices.SortStableFunc(out, func(a, b Incident) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return a.FirstSeen.Compare(b.FirstSeen)
	})
	return out, nil
}
