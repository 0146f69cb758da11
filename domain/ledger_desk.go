package domain

import (
	"context"
	"time"
)

// The desk's reads: what the people at the desk look at beyond one operation
// — a summary of the desk, everything about one item in one call, the
// approvals waiting. The audit trail across operations is audit.Trail.List.

// DeskStore is what the desk reads from persistence beyond Store. The store
// package implements it; the Ledger finds it on its Store.
type DeskStore interface {
	// DeskSummary counts operations by state and the desk's items by age
	// band (each band's upper bound, oldest band unbounded), and lists what
	// entered the desk since now-window: the total, the count per hour
	// (oldest hour first) and the latest few entries.
	DeskSummary(ctx context.Context, bands []time.Duration, window time.Duration, latest int) (DeskSummary, error)
	// DeskList is Store.List planned for each search's own values: the
	// desk searches as a person types, and a plan made once for every text
	// may read every operation.
	DeskList(ctx context.Context, q ListQuery) ([]Operation, string, error)
	// DeskTotal counts what DeskList's pages would list, all of them (its
	// cursor and limit aside), up to most; more than most counts most+1.
	DeskTotal(ctx context.Context, q ListQuery, most int) (int, error)
	// DeskCounts counts the desk's items by state, for the navigation of
	// every page: one indexed count.
	DeskCounts(ctx context.Context) (map[State]int, error)
}

// DeskStates are the states only a person can resolve, in queue order.
var DeskStates = []State{UnknownOutcome, FailedTerminal}

// DeskSummary is the desk at a glance.
type DeskSummary struct {
	Now      time.Time // the database's clock
	ByState  map[State]int
	AgeBands []int // desk items per band of DeskAgeBands
	Entered  int   // entries into the desk within the window
	PerHour  []int // entries per hour of the window, oldest hour first
	Latest   []DeskEntry
	Oldest   *Operation // the oldest unresolved desk item
}

// DeskEntry is one operation's entry into the desk.
type DeskEntry struct {
	OperationID string
	Key         string
	Type        string
	State       State
	At          time.Time
}

// AgeBand names a range of desk item ages; Under is its upper bound, 0 for
// the last, unbounded band.
type AgeBand struct {
	Label string
	Under time.Duration
}

// DeskAgeBands are the age bands of the overview: what is fresh, what has
// waited a shift, a day, a week.
var DeskAgeBands = []AgeBand{
	{"under 1 h", time.Hour}, {"1–8 h", 8 * time.Hour}, {"8–24 h", 24 * time.Hour},
	{"1–7 days", 7 * 24 * time.Hour}, {"over 7 days", 0},
}

// DeskWindow is how far back the overview looks for entries into the desk.
const DeskWindow = 24 * time.Hour

// AuditQuery filters the audit trail as a person asks: the desk's audit page
// and GET /v1/audit. Empty fields match all.
type AuditQuery struct {
	OperationID string
	Actor       string // the actor's email, subject or name
	Action      string
	PeopleOnly  bool      // only what people did: no workflow's, nor the system's
	From, To    time.Time // zero: unbounded; To is exclusive
	Limit       int
	Cursor      string
}

// deskStore returns the store's desk reads, refusing anyone who is not a
// signed-in person.
func (l *Ledger) deskStore(actor Actor) (DeskStore, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, err
	}
	return l.Store, nil
}

// DeskSummary is the overview: counts, ages, entries, the oldest item.
func (l *Ledger) DeskSummary(ctx context.Context, actor Actor) (DeskSummary, error) {
	ds, err := l.deskStore(actor)
	if err != nil {
		return DeskSummary{}, err
	}
	bands := make([]time.Duration, len(DeskAgeBands))
	for i, b := range DeskAgeBands {
		bands[i] = b.Under
	}
	sum, err := ds.DeskSummary(ctx, bands, DeskWindow, 10)
	if err != nil {
		return DeskSummary{}, err
	}
	oldest, _, err := l.Store.List(ctx, ListQuery{States: DeskStates, Limit: 1})
	if err != nil {
		return DeskSummary{}, err
	}
	if len(oldest) == 1 {
		sum.Oldest = &oldest[0]
	}
	return sum, nil
}

// DeskCounts counts the desk's items by state.
func (l *Ledger) DeskCounts(ctx context.Context, actor Actor) (map[State]int, error) {
	ds, err := l.deskStore(actor)
	if err != nil {
		return nil, err
	}
	return ds.DeskCounts(ctx)
}

// DeskQueue pages through the desk's queue: List for people, with the
// provider filter turned into the provider's types.
func (l *Ledger) DeskQueue(ctx context.Context, actor Actor, q ListQuery, provider string) ([]Operation, string, error) {
	ds, err := l.deskStore(actor)
	if err != nil {
		return nil, "", err
	}
	if err := q.check(provider); err != nil {
		return nil, "", err
	}
	if !l.Cards.narrowToProvider(&q, provider) {
		return nil, "", nil
	}
	q.AwaitingLookupOf = l.Cards.LookupTypes()
	l.Cards.hideContentFromSearch(actor, &q)
	return ds.DeskList(ctx, q)
}

// DeskQueueTotal counts every item DeskQueue's pages list for q, up to
// most (more than most counts most+1): the list's total, said above it.
func (l *Ledger) DeskQueueTotal(ctx context.Context, actor Actor, q ListQuery, provider string, most int) (int, error) {
	ds, err := l.deskStore(actor)
	if err != nil {
		return 0, err
	}
	if err := q.check(provider); err != nil {
		return 0, err
	}
	if !l.Cards.narrowToProvider(&q, provider) {
		return 0, nil
	}
	q.AwaitingLookupOf = l.Cards.LookupTypes()
	l.Cards.hideContentFromSearch(actor, &q)
	q.Cursor = ""
	return ds.DeskTotal(ctx, q, most)
}

// DeskItem is everything the desk shows about one operation.
type DeskItem struct {
	Op       Operation
	Card     Card
	Now      time.Time // the database's clock when the operation was read
	Attempts []Attempt
	Timeline []AuditEvent
	Versions []ContentVersion
	Related  []Operation // the other operations of the same event
}

// DeskItem reads one operation with its attempts, timeline, content versions,
// card and the other actions of its event.
func (l *Ledger) DeskItem(ctx context.Context, actor Actor, id string) (DeskItem, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return DeskItem{}, err
	}
	if err := checkID(id, "operation"); err != nil {
		return DeskItem{}, err
	}
	op, now, err := l.Store.Load(ctx, "", id)
	if err != nil {
		return DeskItem{}, err
	}
	it := DeskItem{Op: op, Now: now}
	if it.Card, err = l.Cards.Get(op.Type); err != nil {
		it.Card = Card{Name: op.Type} // a type no longer configured: show what is known
	}
	if it.Attempts, err = l.Store.Attempts(ctx, id); err != nil {
		return DeskItem{}, err
	}
	if it.Timeline, err = l.Store.Timeline(ctx, id); err != nil {
		return DeskItem{}, err
	}
	if it.Versions, err = l.Store.ContentVersions(ctx, id); err != nil {
		return DeskItem{}, err
	}
	if l.hideContent(actor, &it.Op) {
		hideVersions(it.Versions)
	}
	if op.EventID != "" {
		rel, _, err := l.Store.List(ctx, ListQuery{Namespace: op.Namespace, EventID: op.EventID, Limit: 50})
		if err != nil {
			return DeskItem{}, err
		}
		for _, r := range rel {
			if r.ID != op.ID {
				it.Related = append(it.Related, r)
			}
		}
	}
	return it, nil
}

// PendingApproval is an operation awaiting approval with the snapshot to
// decide on and the one it replaces.
type PendingApproval struct {
	Op       Operation
	Current  ContentVersion
	Previous *ContentVersion
}

// PendingApprovals pages through the operations awaiting approval, the
// latest changed first — a revision of an old operation is the newest thing
// to approve, not the last — each with its current and previous content.
func (l *Ledger) PendingApprovals(ctx context.Context, actor Actor, limit int, cursor string) ([]PendingApproval, string, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, "", err
	}
	ops, next, err := l.Store.List(ctx, ListQuery{States: []State{AwaitingApproval}, Limit: limit, Cursor: cursor, RecentFirst: true})
	if err != nil {
		return nil, "", err
	}
	out := make([]PendingApproval, 0, len(ops))
	for _, op := range ops {
		vs, err := l.Store.ContentVersions(ctx, op.ID)
		if err != nil {
			return nil, "", err
		}
		p := PendingApproval{Op: op, Current: ContentVersion{OperationID: op.ID, Version: op.ContentVersion,
			Content: op.Content, SHA256: op.ContentSHA256, CreatedBy: op.ContentAuthor}}
		if l.hideContent(actor, &p.Op) {
			hideVersions(vs)
			p.Current.Content, p.Current.Hidden, p.Current.Bytes = nil, true, p.Op.ContentBytes
		}
		for i, v := range vs {
			if v.Version == op.ContentVersion {
				p.Current = v
				if i > 0 {
					p.Previous = &vs[i-1]
				}
			}
		}
		out = append(out, p)
	}
	return out, next, nil
}
