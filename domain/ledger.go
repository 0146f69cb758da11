package domain

// Ledger is every use case of Handoff built over one store. The wiring
// builds it once and hands each caller the part it uses: the worker
// protocol its Workflow, the desk its Desk, Incidents, Bulk and Views, the
// loops their Upkeep and Outbox. The parts share one core, so the cards,
// clock, ID source, change observer and log set here (ledger.Now,
// ledger.Observer, …) are set for all of them.
type Ledger struct {
	*core
	Workflow  *Workflow
	Desk      *Desk
	Incidents *Incidents
	Bulk      *Bulk
	Views     *Views
	Outbox    *Outbox
	Upkeep    *Upkeep
	Drills    *Drills
	// Store is the store the parts were built on, for what reads it beside
	// the ledger: the audit trail (audit.OfLedger) and the recovery gauges.
	Store LedgerStore
}

// NewLedger builds every part over s with the real clock and randomness.
func NewLedger(s LedgerStore, cards Cards) *Ledger {
	c := newCore(s, cards)
	outbox := newOutbox(c, s)
	return &Ledger{core: c, Store: s,
		Workflow:  newWorkflow(c, s),
		Desk:      newDesk(c, s),
		Incidents: newIncidents(c, s),
		Bulk:      newBulk(c, s),
		Views:     newViews(c, s),
		Outbox:    outbox,
		Upkeep:    &Upkeep{core: c, store: s, outbox: outbox},
		Drills:    &Drills{core: c},
	}
}
