package domain

import (
	"context"
	"time"
)

// LedgerStore is every capability of persistence the Ledger uses, named
// here so that a store lacking one fails to compile rather than answering
// EInternal at run time. The store package implements it on PostgreSQL and
// SQLite.
type LedgerStore interface {
	Store
	LeaseCache
	AuditStore
	BatchKeeper
	ContentStore
	IncidentStore
	DeskStore
	OutboxStore
	OverviewStore
	PeopleStore
	SavedViewStore
}

// LeaseCache is a Store capability: the operation as this
// replica last wrote it while leased, so the lease holder's begin or settle
// need not read it again. The write still checks, in the database, that
// nothing changed (the version) and that the lease is live by the
// database's clock (Change.LiveLease).
type LeaseCache interface {
	// Leased returns the operation as this replica last wrote it if its
	// current lease has token, and an estimate of the database's clock.
	Leased(id string, token int64) (op Operation, now time.Time, ok bool)
}

// Store is what the Ledger needs from persistence. The store package
// implements it on PostgreSQL and SQLite; every write is one transaction.
type Store interface {
	// Create writes a new operation (ch.FromVersion is 0) with its events,
	// attempt and first content snapshot. When the namespace already has the
	// key nothing is written, and the existing operation is returned with
	// created false.
	Create(ctx context.Context, ch Change) (op Operation, created bool, err error)
	// Apply writes ch if the operation is still at ch.FromVersion, and
	// returns EConflict when another writer moved it first.
	Apply(ctx context.Context, ch Change) error
	// Load returns the operation and the database's clock. An empty
	// namespace matches every namespace.
	Load(ctx context.Context, namespace, id string) (Operation, time.Time, error)
	// LoadMany is Load for many IDs at once, in every namespace: the
	// operations found, in no particular order (an ID that names none is left
	// out), and the database's clock.
	LoadMany(ctx context.Context, ids []string) ([]Operation, time.Time, error)
	// LoadByKey is Load by the caller's key.
	LoadByKey(ctx context.Context, namespace, key string) (Operation, time.Time, error)
	// Twin returns the oldest operation in the namespace with the
	// identity hash (Operation.IdentityHash: type and content, or the
	// fields the card's identity names) under a key other than key, whose
	// outcome is open: action_pending, unknown_outcome or failed_terminal.
	Twin(ctx context.Context, namespace, identity, key string) (Operation, bool, error)
	// CompletedTwin returns the operation in the namespace with the
	// identity hash (Operation.IdentityHash) that completed latest, at or
	// after since: the original an echo of our own effect names.
	CompletedTwin(ctx context.Context, namespace, identity string, since time.Time) (Operation, bool, error)
	// ClaimReady finds up to q.Limit ready operations, skipping rows that
	// other transactions hold, and writes what decide returns for each, all in
	// one transaction. decide gets the database's clock.
	ClaimReady(ctx context.Context, q ReadyQuery, decide func(Operation, time.Time) (Change, error)) ([]Change, error)
	// List returns one page of operations, oldest first, and the cursor of
	// the next page ("" on the last).
	List(ctx context.Context, q ListQuery) ([]Operation, string, error)
	Attempts(ctx context.Context, operationID string) ([]Attempt, error)
	// SettledAttempt returns the operation's attempt that the lease token
	// names, if any; found is false when no attempt has that token.
	SettledAttempt(ctx context.Context, operationID string, leaseToken int64) (a Attempt, found bool, err error)
	Timeline(ctx context.Context, operationID string) ([]AuditEvent, error)
	ContentVersions(ctx context.Context, operationID string) ([]ContentVersion, error)
	// Overdue lists operations that time alone changed — leases that
	// expired, retries past their type's time limit — by the database's
	// clock, and returns that clock.
	Overdue(ctx context.Context, q OverdueQuery) ([]Operation, time.Time, error)
	// SaveEvent records an incoming event unless its ID is known in the
	// namespace; then the stored one is returned with created false.
	SaveEvent(ctx context.Context, e Event) (Event, bool, error)
	GetEvent(ctx context.Context, namespace, eventID string) (Event, error)
	// SyncCards records the loaded cards, adding a version for each card
	// whose definition changed, and returns each card's current version.
	SyncCards(ctx context.Context, cards Cards) (map[string]int, error)
	// Ping checks that the database answers and its schema is current.
	Ping(ctx context.Context) error
}

// ReadyQuery selects operations a worker may claim now.
type ReadyQuery struct {
	Namespace string
	Types     []string // empty: every type
	Limit     int
}

// ListQuery filters and pages the operation list. Empty fields match all.
type ListQuery struct {
	Namespace     string // the caller's scope ("" for people: all)
	Key           string
	States        []State
	Types         []string // a type filter, or the types of a provider filter
	EventID       string
	CorrelationID string
	Assignee      string
	// HeldBy lists what one person holds: assigned to their (issuer,
	// subject), or, for an assignment recorded before those were kept, to
	// their identity. The desk's "Mine".
	HeldBy *Actor
	Text   string     // matches key, event, correlation, provider key, result reference, error
	Error  *ErrorKind // the last error's class and code (an incident's items)
	// Deep makes Text also match the content's text and the operation ID
	// and an attempt ID whole, and match the event ID, correlation ID,
	// provider key and result reference whole (in any case) rather than a
	// part of them: the Operations page's search. A part of the key or of
	// the error still matches.
	Deep bool
	// ContentHiddenTypes are the types whose content Text must not match:
	// those whose card keeps the content from the caller
	// (content_visible_to), or a search would confirm what is hidden one
	// guess at a time. Set by the Ledger.
	ContentHiddenTypes []string
	CreatedBefore      time.Time // zero: no bound
	// InDeskBefore bounds when the operation entered the desk (its
	// creation when it never did): the desk's "older than".
	InDeskBefore time.Time
	// InDeskSince is InDeskBefore's other end, inclusive: the desk's
	// "within", which with "older than" makes an age band of the overview.
	InDeskSince time.Time
	// EnteredSince and ResolvedSince keep the operations handed to a
	// person (their last desk or approval entry) or decided by one (their
	// last resolution) at or after a time, in any state now: the
	// overview's flows, as lists.
	EnteredSince, ResolvedSince time.Time
	Limit                       int
	Cursor                      string
	// RecentFirst orders by the last change, newest first, instead of by
	// creation, oldest first: the Approvals page, where a revision of an
	// old operation is the newest thing to approve.
	RecentFirst bool
	// NewestFirst orders by creation, newest first: the desk's "newest
	// first" sort, read backwards along the same indexes.
	NewestFirst bool
	// Until is a page cursor read the other way: the page that ends with
	// the cursor's row, included — the desk's "previous page". With it,
	// List's second result is the Until of the page before, "" on the
	// first. Cursor and Until are not given together.
	Until string

	// AwaitingLookupOf leaves out the operations of these types that
	// await Handoff's own lookup (AwaitingLookup): not handed off yet,
	// so not on the desk.
	AwaitingLookupOf []string
}

// OverdueQuery selects what the sweeper should look at.
type OverdueQuery struct {
	Limit int
	// MaxElapsed is each type's retry time limit; types without one are
	// left out.
	MaxElapsed map[string]time.Duration
	// Retention is each type's provider key retention, for the types whose
	// provider deduplicates by key: a resend guard (CodeResendGuarded)
	// waiting for a claim lapses when its key's retention ends
	// (ResendLapsed), and the sweeper hands it on then, not at the next
	// claim. Types without one are left out.
	Retention map[string]time.Duration
}
