package main

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/opshandoff/handoff/store"
	"github.com/prometheus/client_golang/prometheus"
)

// TestGroupCommitMetrics: /metrics carries the group commit's figures as
// the store reports them (seconds for its time), each a counter, and
// nothing on SQLite.
func TestGroupCommitMetrics(t *testing.T) {
	gather := func(read func() (store.GroupCommitStats, bool)) map[string]float64 {
		t.Helper()
		reg := prometheus.NewRegistry()
		reg.MustRegister(groupCommitMetrics{read: read})
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range fams {
			if len(f.GetMetric()) != 1 || f.GetMetric()[0].GetCounter() == nil {
				t.Fatalf("%s: want one counter, got %v", f.GetName(), f.GetMetric())
			}
			got[f.GetName()] = f.GetMetric()[0].GetCounter().GetValue()
		}
		return got
	}
	got := gather(func() (store.GroupCommitStats, bool) {
		return store.GroupCommitStats{Flushes: 3, Changes: 10, Busy: 1500 * time.Millisecond, Spares: 1, Reruns: 2}, true
	})
	want := map[string]float64{"handoff_db_flushes_total": 3, "handoff_db_flushed_changes_total": 10,
		"handoff_db_flush_seconds_total": 1.5, "handoff_db_spare_flushes_total": 1, "handoff_db_flush_reruns_total": 2}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if got := gather(func() (store.GroupCommitStats, bool) { return store.GroupCommitStats{}, false }); len(got) != 0 {
		t.Fatalf("SQLite exported %v, want nothing", got)
	}
}

// TestDashboard_groupCommitSeries: every group-commit series the Grafana
// dashboard queries is one this collector serves (deploy's TestDashboard
// checks the rest), and the dashboard shows the batch and the flushes in
// flight.
func TestDashboard_groupCommitSeries(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/handoff.json")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	descs := make(chan *prometheus.Desc, 10)
	groupCommitMetrics{}.Describe(descs)
	close(descs)
	name := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	for d := range descs {
		m := name.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("unreadable description %s", d)
		}
		served[m[1]] = true
	}
	used := map[string]bool{}
	for _, s := range regexp.MustCompile(`\bhandoff_db_[a-z_]+`).FindAllString(string(raw), -1) {
		used[s] = true
		if !served[s] {
			t.Errorf("the dashboard queries %s, which the group commit's collector does not serve", s)
		}
	}
	for _, want := range []string{"handoff_db_flushes_total", "handoff_db_flushed_changes_total", "handoff_db_flush_seconds_total"} {
		if !used[want] {
			t.Errorf("the dashboard does not query %s", want)
		}
	}
}
