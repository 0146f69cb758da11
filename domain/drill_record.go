package domain

import (
	"context"
	"regexp"
	"time"
)

// Drills holds the drill receipts: those a drill sends (RecordDrill) and
// what the Types page reads of them.
type Drills struct {
	*core
	// Reader reads the stored drill receipts; nil when the wiring tracks
	// none.
	Reader DrillReader
	// Writer records the receipts drills send; nil when the wiring keeps
	// none.
	Writer DrillWriter
}

// NewDrills builds the drill receipts' use cases, keeping none until the
// wiring sets Reader and Writer.
func NewDrills(cards Cards) *Drills { return &Drills{core: newCore(nil, cards)} }

// Summaries answers, by type, the last drill and the last passing one;
// kept is false when this Handoff tracks no drills.
func (l *Drills) Summaries(ctx context.Context) (sums map[string]DrillSummary, kept bool, err error) {
	if l.Reader == nil {
		return nil, false, nil
	}
	sums, err = l.Reader.DrillSummaries(ctx)
	return sums, true, err
}

// Receipt answers a stored receipt's record and text as it was written.
func (l *Drills) Receipt(ctx context.Context, id string) (DrillRecord, []byte, error) {
	if l.Reader == nil {
		return DrillRecord{}, nil, Errorf(ENotFound, "no drill receipts are kept here")
	}
	return l.Reader.DrillReceipt(ctx, id)
}

// DrillWriter stores a drill receipt with its drill_recorded event on the
// system audit stream, in one transaction; the store implements it.
type DrillWriter interface {
	SaveDrill(ctx context.Context, rec DrillRecord, receipt []byte, e AuditEvent) (AuditEvent, error)
}

var drillIDRE = regexp.MustCompile(`^drl_[0-9a-f]{8,64}$`)

// The verdicts a drill receipt may carry.
var drillVerdicts = map[string]bool{DrillVerdictPass: true, "fail": true, "incomplete": true}

// RecordDrill stores the receipt of a drill run against this Handoff, sent
// by the drill itself (`handoff drill --url`): the receipt then shows on
// this Handoff's Types page, and its hash is chained into this Handoff's
// audit trail under the caller's identity. A workflow token (the one the
// drill ran with) or an admin may record one.
func (l *Drills) RecordDrill(ctx context.Context, actor Actor, rec DrillRecord, receipt []byte) (AuditEvent, error) {
	// A receipt makes the Types page say a type was drilled: only the drill
	// namespace's workflows (whose operations never notify) or an admin may
	// record one, so no other workflow can pass a type off as drilled.
	if actor.Kind == ActorWorkflow && actor.Namespace != DrillNamespace {
		return AuditEvent{}, Errorf(EForbidden, "only a workflow token of the %q namespace records drill receipts", DrillNamespace)
	}
	if actor.Kind != ActorWorkflow {
		if err := requirePerson(actor, RoleAdmin); err != nil {
			return AuditEvent{}, err
		}
	}
	if l.Writer == nil {
		return AuditEvent{}, Errorf(ENotFound, "this Handoff keeps no drill receipts")
	}
	var errs []FieldError
	if !drillIDRE.MatchString(rec.ID) {
		errs = append(errs, FieldError{"receipt.id", "must be a drill receipt ID (drl_ and hex)"})
	}
	if !drillVerdicts[rec.Verdict] {
		errs = append(errs, FieldError{"receipt.verdict", "must be pass, fail or incomplete"})
	}
	if rec.RanAt.IsZero() {
		errs = append(errs, FieldError{"receipt.finished_at", "is required"})
	}
	if len(errs) > 0 {
		return AuditEvent{}, Invalid(errs...)
	}
	if _, err := l.Cards.Get(rec.Type); err != nil {
		return AuditEvent{}, err
	}
	rec.SHA256 = SHA256Hex(receipt)
	if rec.RanBy == "" {
		rec.RanBy = actor.Identity()
	}
	e := SystemEvent(ctx, l.IDs, l.Now().UTC().Truncate(time.Microsecond), actor, "drill_recorded", "",
		map[string]any{"receipt_id": rec.ID, "type": rec.Type, "card_version": rec.CardVersion, "card_sha256": rec.CardSHA256,
			"verdict": rec.Verdict, "sha256": rec.SHA256, "ran_by": rec.RanBy})
	return l.Writer.SaveDrill(ctx, rec, receipt, e)
}
