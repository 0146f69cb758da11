package api

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/prometheus/client_golang/prometheus"
)

// Recovery is the recovery metrics: what enters the desk and leaves it, how
// long that takes and how long people spend on it, attempts and confirmed
// effects counted apart, notification deliveries — counters observed in
// this process — and the desk itself, gauges read from the database so
// every replica reports the same.
type Recovery struct {
	entries       *prometheus.CounterVec
	resolutions   *prometheus.CounterVec
	timeToResolve prometheus.Histogram
	handling      prometheus.Histogram
	operations    *prometheus.CounterVec
	attempts      *prometheus.CounterVec
	effects       *prometheus.CounterVec
	notifications *prometheus.CounterVec
	delivery      prometheus.Histogram
	lookup        lookupCounters
	registered    *prometheus.CounterVec
	events        prometheus.Counter
	handlingEntry prometheus.Histogram
}

// GaugeTTL is how long the desk gauges are served from cache.
const GaugeTTL = 15 * time.Second

var recoveryBuckets = []float64{60, 300, 900, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 24 * 3600, 3 * 24 * 3600, 7 * 24 * 3600}

// NewRecovery registers the recovery metrics on reg, the desk gauges read
// from outbox. The caller makes it the ledger's change and event observer
// (Ledger.Observer, Ledger.Events) and the delivery loop's.
func NewRecovery(reg prometheus.Registerer, outbox domain.OutboxStore) (*Recovery, error) {
	r := &Recovery{
		entries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "handoff_desk_entries_total",
			Help: "Operations that came to wait on a person (desk or approval), by type and reason."}, []string{"type", "reason"}),
		resolutions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "handoff_resolutions_total",
			Help: "People's decisions that took an operation off the desk, by type and decision."}, []string{"type", "decision"}),
		timeToResolve: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "handoff_time_to_resolve_seconds",
			Help: "Time from desk entry to a person's decision.", Buckets: recoveryBuckets}),
		handling: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "handoff_human_handling_seconds",
			Help: "Time from a person taking a desk item (assignment) to the decision: staff time on recovery.", Buckets: recoveryBuckets}),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "handoff_operations_total",
			Help: "Operations that reached a final state, by type and outcome."}, []string{"type", "outcome"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "handoff_attempts_total",
			Help: "Attempts (claims) made, by type."}, []string{"type"}),
		effects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "handoff_confirmed_effects_total",
			Help: "Side effects confirmed to have happened, by type and by whom: worker, person, reconcile or lookup."}, []string{"type", "by"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "handoff_notifications_total",
			Help: "Notification delivery attempts, by result: delivered, retry or failed."}, []string{"result"}),
		registered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "handoff_operations_registered_total",
			Help: "Operations registered (a replayed registration is not counted again), by type."}, []string{"type"}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "handoff_events_received_total",
			Help: "Incoming events recorded (a redelivery is not counted again)."}),
		handlingEntry: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "handoff_human_handling_from_entry_seconds",
			Help: "Time from desk entry to a person's decision, whether or not anyone took the item first: people's time on recovery.", Buckets: recoveryBuckets}),
		delivery: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "handoff_notification_delivery_seconds",
			Help: "Time one notification delivery attempt took.", Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30}}),
	}
	var err error
	for _, c := range []**prometheus.CounterVec{&r.entries, &r.resolutions, &r.operations, &r.attempts, &r.effects, &r.notifications, &r.registered} {
		if *c, err = register(reg, *c); err != nil {
			return nil, err
		}
	}
	if r.events, err = register(reg, r.events); err != nil {
		return nil, err
	}
	for _, h := range []*prometheus.Histogram{&r.timeToResolve, &r.handling, &r.delivery, &r.handlingEntry} {
		if *h, err = register(reg, *h); err != nil {
			return nil, err
		}
	}
	if err := r.lookup.register(reg); err != nil {
		return nil, err
	}
	if _, err := register(reg, prometheus.Collector(&deskGauges{read: outbox.DeskGauges, backlog: outbox.OutboxBacklog, ttl: GaugeTTL})); err != nil {
		return nil, err
	}
	for _, s := range []string{domain.DeliveryDelivered, domain.DeliveryRetry, domain.DeliveryFailed} {
		r.notifications.WithLabelValues(s) // present at zero, so alerts see the series
	}
	return r, nil
}

// ObserveEvent counts an incoming event recorded for the first time.
func (r *Recovery) ObserveEvent(domain.Event) { r.events.Inc() }

// Observe counts what a written change means for recovery.
func (r *Recovery) Observe(ch domain.Change) {
	typ := ch.Op.Type
	from := ""
	if len(ch.Events) > 0 {
		from = ch.Events[0].FromState
	}
	moved := from != ch.Op.State.String()
	if ch.DeskEntry != "" {
		r.entries.WithLabelValues(typ, ch.DeskEntry).Inc()
	}
	if ld := ch.LeftDesk; ld != nil && ld.ByPerson {
		r.resolutions.WithLabelValues(typ, ld.Decision).Inc()
		if ld.EnteredAt != nil {
			r.timeToResolve.Observe(math.Max(0, ch.Op.UpdatedAt.Sub(*ld.EnteredAt).Seconds()))
			r.handlingEntry.Observe(math.Max(0, ch.Op.UpdatedAt.Sub(*ld.EnteredAt).Seconds()))
		}
		if ld.AssignedAt != nil {
			r.handling.Observe(math.Max(0, ch.Op.UpdatedAt.Sub(*ld.AssignedAt).Seconds()))
		}
	}
	r.lookup.observeSettled(ch)
	if ch.FromVersion == 0 {
		r.registered.WithLabelValues(typ).Inc()
	}
	if a := ch.Attempt; a != nil && a.New {
		r.attempts.WithLabelValues(typ).Inc()
	}
	if moved && ch.Op.State.Final() {
		r.operations.WithLabelValues(typ, ch.Op.State.String()).Inc()
	}
	if moved && ch.Op.State == domain.Completed {
		by := "worker"
		last := ch.Events[len(ch.Events)-1]
		switch {
		case last.Actor.Kind == domain.ActorPerson:
			by = "person"
		case last.Action == "reconciled":
			by = "reconcile"
		case last.Action == domain.ActionLookedUp:
			by = "lookup"
		}
		r.effects.WithLabelValues(typ, by).Inc()
	}
}

// ObserveDelivery counts one notification delivery attempt.
func (r *Recovery) ObserveDelivery(outcome string, latency time.Duration) {
	r.notifications.WithLabelValues(outcome).Inc()
	r.delivery.Observe(latency.Seconds())
}

// deskGauges reads what waits on a person from the database, at most once
// per ttl, in one grouped query.
type deskGauges struct {
	read    func(context.Context) ([]domain.DeskGauge, time.Time, error)
	backlog func(context.Context) (int, time.Time, error)
	ttl     time.Duration

	mu      sync.Mutex
	at      time.Time
	cached  []domain.DeskGauge
	now     time.Time
	pending int
	oldest  time.Time
}

var (
	deskItemsDesc = prometheus.NewDesc("handoff_desk_items", "Operations waiting on a person, by namespace, type and state.",
		[]string{"namespace", "type", "state"}, nil)
	deskOldestDesc = prometheus.NewDesc("handoff_desk_oldest_item_age_seconds",
		"Age of the oldest operation waiting on a person since it entered the desk, by namespace and type.", []string{"namespace", "type"}, nil)
	outboxPendingDesc = prometheus.NewDesc("handoff_notification_outbox_pending",
		"Notifications not yet delivered nor given up on.", nil, nil)
	outboxOldestDesc = prometheus.NewDesc("handoff_notification_outbox_oldest_age_seconds",
		"Age of the oldest notification not yet delivered nor given up on (0 when none).", nil, nil)
)

func (g *deskGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- deskItemsDesc
	ch <- deskOldestDesc
	ch <- outboxPendingDesc
	ch <- outboxOldestDesc
}

func (g *deskGauges) Collect(ch chan<- prometheus.Metric) {
	gauges, now, pending, pendingSince, err := g.load()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(deskItemsDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(outboxPendingDesc, prometheus.GaugeValue, float64(pending))
	outboxAge := 0.0
	if !pendingSince.IsZero() {
		outboxAge = math.Max(0, math.Floor(now.Sub(pendingSince).Seconds()))
	}
	ch <- prometheus.MustNewConstMetric(outboxOldestDesc, prometheus.GaugeValue, outboxAge)
	type nt struct{ ns, typ string }
	oldest := map[nt]time.Time{}
	for _, d := range gauges {
		ch <- prometheus.MustNewConstMetric(deskItemsDesc, prometheus.GaugeValue, float64(d.Items), d.Namespace, d.Type, d.State.String())
		k := nt{d.Namespace, d.Type}
		if o, ok := oldest[k]; !ok || d.Oldest.Before(o) {
			oldest[k] = d.Oldest
		}
	}
	for k, o := range oldest {
		age := math.Max(0, math.Floor(now.Sub(o).Seconds()))
		ch <- prometheus.MustNewConstMetric(deskOldestDesc, prometheus.GaugeValue, age, k.ns, k.typ)
	}
}

func (g *deskGauges) load() ([]domain.DeskGauge, time.Time, int, time.Time, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.at.IsZero() && time.Since(g.at) < g.ttl {
		return g.cached, g.now, g.pending, g.oldest, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gauges, now, err := g.read(ctx)
	if err != nil {
		return nil, time.Time{}, 0, time.Time{}, fmt.Errorf("reading the desk gauges: %w", err)
	}
	pending, oldest, err := g.backlog(ctx)
	if err != nil {
		return nil, time.Time{}, 0, time.Time{}, fmt.Errorf("reading the outbox backlog: %w", err)
	}
	g.cached, g.now, g.pending, g.oldest, g.at = gauges, now, pending, oldest, time.Now()
	return gauges, now, pending, oldest, nil
}
