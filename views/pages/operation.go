package pages

import (
	"net/url"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/layouts"
)

// OperationView is everything a person needs to decide on one operation.
type OperationView struct {
	Frame        layouts.Frame
	Op           OpFacts
	NextDecision string
	Snapshot     Snapshot
	Versions     []VersionRow // newest first, each with its diff against the one before
	Attempts     []AttemptRow
	Timeline     []EventRow
	Card         CardView
	Retention    Retention
	LookupLink   string
	Lookup       LookupPanel
	// ProviderKeyUse says which provider key the next attempt sends and why.
	ProviderKeyUse string
	Related        []RelatedRow
	Actions        Actions
	Problem        Problem
	Draft          Draft  // what the person typed into the form that was refused
	Done           string // the decision just recorded, for the success banner
	Next           string // the next item of the queue the person came from
	Back           string // that queue, with its filter
	// Notifications are the operation's notifications and their attempts.
	Notifications []NotificationRow
	// Notes are the notes people left, oldest first, pinned above the
	// timeline.
	Notes []EventRow
	// KeyWindow is when the provider stops deduplicating the provider key.
	KeyWindow KeyWindow
	// CausedBy and Supersedes are the chains of operations behind this one.
	CausedBy, Supersedes Chain
	// Twin is the operation this one may be a second execution of, when it
	// is held for that (twin_unresolved, supersedes_sent).
	Twin *TwinView
	// Kept is a refused decision that the item no longer offers, kept
	// beside what was decided meanwhile; nil when there is none.
	Kept *KeptDecision
	// Contradictions are the decisions recorded against the one that
	// stands; an item with any is flagged.
	Contradictions []ContradictionRow
	// From is the list the person opened the item from, with its filter;
	// decisions carry it, so "next item" and "back" keep that filter.
	From string
}

// KeyWindow is the provider's retention window for the provider key, shown
// when the provider deduplicates by key and the key was sent.
type KeyWindow struct {
	Until   *time.Time // when the window closes (closed)
	Left    string     // how long until then, or since then: "3 h 12 m"
	Expired bool
}

// Chain is a run of linked operations, nearest first.
type Chain struct {
	Links []ChainLink
	More  bool // the chain goes on past the hops the page follows
}

// ChainLink is one operation of a chain. Without an ID it is only a name:
// an operation the viewer cannot open, or the same one again (a loop).
type ChainLink struct {
	Name, ID, State string
	Missing, Loop   bool
}

// DetailField is one member of an audit event's detail.
type DetailField struct {
	Key, Value string
	Time       *time.Time // the value is a time: shown as the person reads times
}

// OpFacts are the operation's fields as text.
type OpFacts struct {
	ID, Key, Namespace, Type, State, EventID, Source, CorrelationID string
	CausedBy, Supersedes, SupersededBy, Fingerprint, ProviderKey    string
	LastError, Assignee, ResultRef, Resolution, Lease               string
	Version                                                         int64
	ContentVersion, Attempts                                        int
	ProviderKeyFirstSentAt, NextRetryAt, ResolvedAt                 *time.Time
	CreatedAt, UpdatedAt                                            time.Time
}

// Snapshot is the content the operation executes.
type Snapshot struct {
	Version    int
	SHA256     string
	JSON       string     // pretty-printed, cut at components.ContentBudget
	Truncated  bool       // JSON is cut: Download has it all
	Download   string     // the snapshot as a JSON file
	PurgedAt   *time.Time // content retention purged every version then
	HiddenFrom string     // the role the card shows content to, when the viewer is below it
	Bytes      int        // the content's size, shown when it is hidden
	Author     string     // "" for the registering workflow
	ApprovedBy string
	ApprovedAt *time.Time
	Hidden     []rune // the hidden characters the content holds (components.ContentHiddenRunes)
}

// VersionRow is one content version and what changed from the one before.
type VersionRow struct {
	Version                        int
	SHA256, Author, Reason, Status string
	CreatedAt                      time.Time
	Diff                           []components.DiffLine // nil for the first version and old ones
	DiffTruncated                  bool                  // Diff is cut: download the versions
	Download                       string                // the version as a JSON file
}

// AttemptRow is one attempt.
type AttemptRow struct {
	Number                 int
	Worker, Outcome, Error string
	ClaimedAt              time.Time
	BeganAt, SettledAt     *time.Time
}

// EventRow is one audit event of the timeline.
type EventRow struct {
	Seq                                int64
	At                                 time.Time
	Actor, ActorKind, Action, From, To string
	Reason, Detail, OperationID, Hash  string
	Fields                             []DetailField // Detail, member by member
}

// Retention says whether the provider still remembers the provider key.
type Retention struct {
	Known   bool   // the card says how long the provider keeps keys and the key was sent
	Expired bool   // the key has left the provider's retention window
	Text    string // what it means for the person deciding
}

// RelatedRow is another action of the same event.
type RelatedRow struct{ ID, Key, Type, State string }

// Actions are the forms the state and the viewer's role allow.
type Actions struct {
	ConfirmExecuted, ConfirmNotExecuted, Retry, Cancel bool
	Assign, Note, Revise, Approve                      bool
	Me                                                 string // the viewer's PersonOption value
	OwnRevision                                        bool   // the viewer made the current content version
	RetryNeedsApproval                                 bool   // retrying sends a revised snapshot to approval first
	// ResendSameKey: the item may be re-sent under the same provider key,
	// because the provider deduplicates it until DedupUntil. The safe
	// decision, so it is offered first.
	ResendSameKey bool
	DedupUntil    time.Time
	// RetryRisk names the risk of a re-send the provider does not
	// deduplicate; a retry then needs a second confirmation.
	RetryRisk string
	// People are whom the item can be assigned to: the people who signed
	// in with a role that can decide.
	People []PersonOption
	// AssignedElsewhere: someone else has taken the item, and the viewer
	// could still decide it.
	AssignedElsewhere bool
	// Loop: the item triggered itself; cancelling comes first, and a retry
	// is offered only below it, with a warning.
	Loop bool
}

// PersonOption is one person to choose: Value names them by (issuer,
// subject), so that two people with one email cannot be confused; Label
// shows who they are.
type PersonOption struct{ Value, Label string }

// Problem is why the last action was refused.
type Problem struct {
	Conflict bool // the item changed since the person loaded it
	Message  string
	Fields   []string
	Changes  []string // with a conflict: who changed what since, and when
	Expired  bool     // the session had expired: nothing was recorded
}

// Draft is the refused form's input, offered again.
type Draft struct{ Form, Reason, Ref, Text, Content, Assignee, Then string }

// For returns the draft when it belongs to the named form.
func (d Draft) For(form string) Draft {
	if d.Form == form {
		return d
	}
	return Draft{}
}

// ItemURL is an operation's page, keeping the list it was opened from.
func ItemURL(id, from string) string {
	if from == "" {
		return domain.DeskPath(id)
	}
	return domain.DeskPath(id) + "?from=" + url.QueryEscape(from)
}

// ActionURL is where an operation's page posts action.
func ActionURL(id, action string) string { return domain.DeskActionPath(id, action) }

// BackURL is the list the person came from, scrolled to the row of id.
func BackURL(from, id string) string {
	if from == "" {
		from = "/desk/queue"
	}
	if id == "" {
		return from
	}
	return from + "#row-" + id
}

// DraftShown reports whether the refused form's input is on the page
// again: only while the decision it belongs to is still offered. An item
// that left the desk meanwhile offers none, and its page must not say
// "with what you typed".
func (v OperationView) DraftShown() bool {
	a := v.Actions
	switch v.Draft.Form {
	case "":
		return false
	case "confirm-executed":
		return a.ConfirmExecuted
	case "confirm-not-executed":
		return a.ConfirmNotExecuted
	case "retry":
		return a.Retry
	case "cancel":
		return a.Cancel
	case "resend-same-key":
		return a.ResendSameKey
	case "assign":
		return a.Assign
	case "revise":
		return a.Revise
	case "note":
		return a.Note
	case "approve", "reject":
		return a.Approve
	}
	return false
}

// PendingDiff is the changes of the content version awaiting a decision,
// shown above Approve so it is read before it is pressed; nil for a first
// version (the content itself is the snapshot) or when the diff is not
// kept.
func (v OperationView) PendingDiff() []components.DiffLine {
	for _, ver := range v.Versions {
		if ver.Version == v.Snapshot.Version {
			return ver.Diff
		}
	}
	return nil
}

// KeptDecision is what a person typed into a decision that turned stale:
// the evidence they held is never dropped.
type KeptDecision struct {
	Form, Claim, Then, Ref, Reason string // Claim: confirm_executed or confirm_not_executed
	Label                          string // "confirmed executed, reference ch_…"
	// Meanwhile is the decision that was taken meanwhile, as a sentence;
	// MeanwhileAt when.
	Meanwhile   string
	MeanwhileAt *time.Time
	// Contradicts: the kept decision says the opposite of the one that
	// stands; Record: the viewer may record the contradiction.
	Contradicts, Record bool
}

// ContradictionRow is one recorded contradiction.
type ContradictionRow struct {
	By, Reason, Claim, Contradicts string
	At                             time.Time
}
