package domain

import (
	"context"
	"time"
)

// A drill is `handoff drill`: the seed cases run for one operation type
// against a sandbox provider. Its receipt is stored and its hash chained
// into the system audit stream; the Types page says when each type was last
// drilled and whether the card changed since its last passing drill.

// DrillNamespace is the namespace drills run in, and the only one whose
// operations never notify: a drill hands off, escalates and resolves on
// purpose, and its receivers are real people. The server can trust it
// because an operation's namespace is its workflow token's, which an admin
// chose when creating the token (handoff token create --namespace drill),
// never anything a request says. Workers of other namespaces cannot claim
// its operations either.
const DrillNamespace = "drill"

// DrillRecord is one stored drill receipt, without its text.
type DrillRecord struct {
	ID          string
	Type        string
	CardVersion int
	CardSHA256  string
	Verdict     string // pass, fail or incomplete
	SHA256      string // of the receipt as written
	RanBy       string
	RanAt       time.Time
}

// DrillVerdictPass is the verdict of a drill whose every case passed.
const DrillVerdictPass = "pass"

// DrillSummary is what the Types page says about a type's drills.
type DrillSummary struct {
	Last     DrillRecord
	LastPass *DrillRecord
}

// Drilled reports whether card, as loaded now, passed a drill: a passing
// receipt names this card's hash.
func (s DrillSummary) Drilled(card Card) bool {
	return s.LastPass != nil && card.SHA256 != "" && s.LastPass.CardSHA256 == card.SHA256
}

// DrillReader reads the stored drills; the store implements it.
type DrillReader interface {
	// DrillSummaries answers, by type, the last drill and the last passing one.
	DrillSummaries(ctx context.Context) (map[string]DrillSummary, error)
	// DrillReceipt answers a stored receipt's record and text.
	DrillReceipt(ctx context.Context, id string) (DrillRecord, []byte, error)
}
