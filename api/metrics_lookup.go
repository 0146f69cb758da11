package api

import (
	"github.com/opshandoff/handoff/domain"
	"github.com/prometheus/client_golang/prometheus"
)

// lookupCounters are the metrics of Handoff's own lookups at providers:
// every try by type and result, and what settled the operations that would
// otherwise wait on a person — the lookup, or a person at the desk.
type lookupCounters struct {
	lookups *prometheus.CounterVec
	settled *prometheus.CounterVec
}

// The settled_total labels.
const (
	SettledByLookup = "lookup"
	SettledByPerson = "person"
)

func (lc *lookupCounters) register(reg prometheus.Registerer) error {
	lc.lookups = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "handoff_lookups_total",
		Help: "Lookups made at providers by a card's lookup_adapter, by type and result: found, not_found, conflict, unsure or error."},
		[]string{"type", "result"})
	lc.settled = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "handoff_settled_total",
		Help: "Unknown or failed outcomes settled, by whom: lookup (Handoff looked it up, no person asked) or person (a desk decision)."},
		[]string{"by"})
	var err error
	for _, c := range []**prometheus.CounterVec{&lc.lookups, &lc.settled} {
		if *c, err = register(reg, *c); err != nil {
			return err
		}
	}
	lc.settled.WithLabelValues(SettledByLookup)
	lc.settled.WithLabelValues(SettledByPerson)
	return nil
}

// observeSettled counts a change that settled an operation: a lookup's
// conclusion that needed no person, or a person's desk decision.
func (lc *lookupCounters) observeSettled(ch domain.Change) {
	if len(ch.Events) > 0 {
		switch ch.Events[len(ch.Events)-1].Action {
		case domain.ActionLookedUp, domain.ActionLookupNotFound:
			lc.settled.WithLabelValues(SettledByLookup).Inc()
			return
		}
	}
	// A person's decision on a desk item; an approval is not a settlement.
	if ch.LeftDesk != nil && ch.LeftDesk.ByPerson && len(ch.Events) > 0 {
		if from, err := domain.ParseState(ch.Events[0].FromState); err == nil && from.InDesk() {
			lc.settled.WithLabelValues(SettledByPerson).Inc()
		}
	}
}

// ObserveLookup counts one lookup try (reconcile.Lookuper.Observe).
func (r *Recovery) ObserveLookup(opType string, t domain.LookupTry) {
	r.lookup.lookups.WithLabelValues(opType, t.Result.String()).Inc()
}
