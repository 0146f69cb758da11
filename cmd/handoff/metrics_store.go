package main

import (
	"github.com/opshandoff/handoff/store"
	"github.com/prometheus/client_golang/prometheus"
)

// groupCommitMetrics puts the store's group commit on /metrics as
// counters (store.GroupCommitStats says how to read them). On SQLite, which
// has no group commit, it exports nothing rather than zeros.
type groupCommitMetrics struct {
	read func() (store.GroupCommitStats, bool)
}

var (
	flushesDesc = prometheus.NewDesc("handoff_db_flushes_total",
		"Flushes the group commit sent to PostgreSQL, each one commit (a batch re-run change by change counts once); with handoff_db_flushed_changes_total, the changes a commit carried.", nil, nil)
	flushedChangesDesc = prometheus.NewDesc("handoff_db_flushed_changes_total",
		"Changes the group commit's flushes held.", nil, nil)
	flushSecondsDesc = prometheus.NewDesc("handoff_db_flush_seconds_total",
		"Summed time of the group commit's flushes, from sending to the commit's answer: its rate is the flushes in flight on average.", nil, nil)
	spareFlushesDesc = prometheus.NewDesc("handoff_db_spare_flushes_total",
		"Flushes started beside one that had stalled (a lock wait, a slow disk).", nil, nil)
	flushRerunsDesc = prometheus.NewDesc("handoff_db_flush_reruns_total",
		"Flushes that failed as a whole and were re-run one change at a time.", nil, nil)
)

func (groupCommitMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{flushesDesc, flushedChangesDesc, flushSecondsDesc, spareFlushesDesc, flushRerunsDesc} {
		ch <- d
	}
}

func (m groupCommitMetrics) Collect(ch chan<- prometheus.Metric) {
	st, ok := m.read()
	if !ok {
		return
	}
	for _, c := range []struct {
		d *prometheus.Desc
		v float64
	}{
		{flushesDesc, float64(st.Flushes)}, {flushedChangesDesc, float64(st.Changes)}, {flushSecondsDesc, st.Busy.Seconds()},
		{spareFlushesDesc, float64(st.Spares)}, {flushRerunsDesc, float64(st.Reruns)},
	} {
		ch <- prometheus.MustNewConstMetric(c.d, prometheus.CounterValue, c.v)
	}
}
