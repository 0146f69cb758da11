package domain

import (
	"context"
	"time"
)

// The desk's reads: what the people at the desk look at beyond one operation
// — a summary of the desk, everything about one item in one call, the
// approvals waiting. The audit trail across operations is audit.Trail.List.

// Desk holds the use cases of the people at the desk: what they look at —
// the queue, one item, the approvals waiting, the overview, the people to
// assign — and the decisions they take on one operation. Incidents, bulk
// decisions, saved views, notifications and drills have types of their
// own.
type Desk struct {
	*core
	store DeskStorage
	// Looker makes the desk's "Look up now" lookups; nil: not offered.
	Looker LookupRunner
}

// DeskStorage is the store methods the Desk calls; their contracts are
// Store's and the capabilities'. The store package implements it.
type DeskStorage interface {
	coreStorage
	DeskStore
	PeopleStore
	OverviewStore
	LoadByKey(ctx context.Context, namespace, key string) (Operation, time.Time, error)
	LoadMany(ctx context.Context, ids []string) ([]Operation, time.Time, error)
	List(ctx context.Context, q ListQuery) ([]Operation, string, error)
	Attempts(ctx context.Context, operationID string) ([]Attempt, error)
	ContentVersions(ctx context.Context, operationID string) ([]ContentVersion, error)
}

// NewDesk builds the desk's use cases on s with the real clock.
func NewDesk(s DeskStorage, cards Cards) *Desk { return newDesk(newCore(s, cards), s) }

func newDesk(c *core, s DeskStorage) *Desk { return &Desk{core: c, store: s} }

// Get returns the operation the person may see.
func (l *Desk) Get(ctx context.Context, actor Actor, id string) (Operation, error) {
	return l.get(ctx, actor, id)
}

// DeskStore is what the desk reads from persistence beyond Store. The store
// package implements it.
type DeskStore interface {
	// DeskList is Store.List planned for each search's own values: the
	// desk searches as a person types, and a plan made once for every text
	// may read every operation.
	DeskList(ctx context.Context, q ListQuery) ([]Operation, string, error)
	// DeskCount counts every operation DeskList's pages would list for q,
	// its cursor and limit aside, up to most (more than most counts
	// most+1; most <= 0 counts all): one count query.
	DeskCount(ctx context.Context, q ListQuery, most int) (int, error)
	// DeskCounts counts the desk's items by state, for the navigation of
	// every page: one indexed count.
	// Those of the awaitingLookupOf types that await Handoff's own
	// lookup are on no list yet, so not counted (ListQuery.AwaitingLookupOf).
	DeskCounts(ctx context.Context, awaitingLookupOf []string) (map[State]int, error)
}

// DeskStates are the states only a person can resolve, in queue order.
var DeskStates = []State{UnknownOutcome, FailedTerminal}

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
// waited a few hours, a day, a week.
var DeskAgeBands = []AgeBand{
	{"under 1 h", time.Hour}, {"1–6 h", 6 * time.Hour}, {"6–24 h", 24 * time.Hour},
	{"1–7 days", 7 * 24 * time.Hour}, {"over 7 days", 0},
}

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
func (l *Desk) deskStore(actor Actor) (DeskStore, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, err
	}
	return l.store, nil
}

// DeskCounts counts the desk's items by state.
func (l *Desk) DeskCounts(ctx context.Context, actor Actor) (map[State]int, error) {
	ds, err := l.deskStore(actor)
	if err != nil {
		return nil, err
	}
	return ds.DeskCounts(ctx, l.Cards.LookupTypes())
}

// DeskQueue pages through the desk's queue: List for people, with the
// provider filter turned into the provider's types.
func (l *Desk) DeskQueue(ctx context.Context, actor Actor, q ListQuery, provider string) ([]Operation, string, error) {
	ds, q, ok, err := l.deskQuery(actor, q, provider)
	if err != nil || !ok {
		return nil, "", err
	}
	return ds.DeskList(ctx, q)
}

// DeskQueueCount counts every item DeskQueue's pages list for q and
// provider: the N of "select all N matching".
func (l *Desk) DeskQueueCount(ctx context.Context, actor Actor, q ListQuery, provider string, most int) (int, error) {
	ds, q, ok, err := l.deskQuery(actor, q, provider)
	if err != nil || !ok {
		return 0, err
	}
	q.Cursor, q.Until = "", ""
	return ds.DeskCount(ctx, q, most)
}

// deskQuery is the queue's query as the store runs it for actor: checked,
// the provider turned into its types, what is not on the desk yet left
// out, and content the actor may not read kept from the search. ok is
// false when nothing can match.
func (l *Desk) deskQuery(actor Actor, q ListQuery, provider string) (DeskStore, ListQuery, bool, error) {
	ds, err := l.deskStore(actor)
	if err != nil {
		return nil, q, false, err
	}
	if err := q.check(provider); err != nil {
		return nil, q, false, err
	}
	if !l.Cards.narrowToProvider(&q, provider) {
		return nil, q, false, nil
	}
	q.AwaitingLookupOf = l.Cards.LookupTypes()
	l.Cards.hideContentFromSearch(actor, &q)
	return ds, q, true, nil
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
func (l *Desk) DeskItem(ctx context.Context, actor Actor, id string) (DeskItem, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return DeskItem{}, err
	}
	if err := checkID(id, "operation"); err != nil {
		return DeskItem{}, err
	}
	op, now, err := l.store.Load(ctx, "", id)
	if err != nil {
		return DeskItem{}, err
	}
	it := DeskItem{Op: op, Now: now}
	if it.Card, err = l.Cards.Get(op.Type); err != nil {
		it.Card = Card{Name: op.Type} // a type no longer configured: show what is known
	}
	if it.Attempts, err = l.store.Attempts(ctx, id); err != nil {
		return DeskItem{}, err
	}
	if it.Timeline, err = l.store.Timeline(ctx, id); err != nil {
		return DeskItem{}, err
	}
	if it.Versions, err = l.store.ContentVersions(ctx, id); err != nil {
		return DeskItem{}, err
	}
	if l.hideContent(actor, &it.Op) {
		hideVersions(it.Versions)
	}
	if op.EventID != "" {
		rel, _, err := l.store.List(ctx, ListQuery{Namespace: op.Namespace, EventID: op.EventID, Limit: 50})
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
func (l *Desk) PendingApprovals(ctx context.Context, actor Actor, limit int, cursor string) ([]PendingApproval, string, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, "", err
	}
	ops, next, err := l.store.List(ctx, ListQuery{States: []State{AwaitingApproval}, Limit: limit, Cursor: cursor, RecentFirst: true})
	if err != nil {
		return nil, "", err
	}
	out := make([]PendingApproval, 0, len(ops))
	for _, op := range ops {
		vs, err := l.store.ContentVersions(ctx, op.ID)
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
