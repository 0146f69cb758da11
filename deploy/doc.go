// Package deploy holds deployment files — Prometheus alerting rules and a
// Grafana dashboard — and the test that keeps them true to /metrics.
package deploy
