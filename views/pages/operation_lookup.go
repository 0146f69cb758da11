package pages

import "time"

// LookupPanel is what Handoff's lookups at the provider found, shown first
// on the page: the reconciler's tries before the item reached the desk, or
// the latest "Look up now".
type LookupPanel struct {
	Adapter  bool   // the card has a lookup adapter
	CanRun   bool   // the viewer may run it (operator and above)
	Pending  bool   // Handoff's own lookup has not concluded: not handed off yet
	Evidence string // "looked up 3× at …: 404 / 404 / error: timeout"
	By       string // the system, or the person who looked it up
	At       time.Time
	Tries    []LookupTryRow
	// FoundRef is the reference of the record the last lookup found, if
	// any: it pre-fills the confirm form; the person still confirms.
	FoundRef string
	// Repeats counts the lookups in a row, this one the last, that failed
	// with the same answer: shown once, with the count and since when.
	Repeats int
	Since   time.Time
}

// LookupTryRow is one request of a lookup, or Count of them in a row with
// the same answer, the first at At and the last at Last.
type LookupTryRow struct {
	At, Request, Summary string
	Count                int
	Last                 string
}

// confirmRef is the confirm form's reference: what the person typed, else
// what the lookup found.
func confirmRef(v OperationView) string {
	if d := v.Draft.For("confirm-executed"); d.Ref != "" {
		return d.Ref
	}
	return v.Lookup.FoundRef
}
