package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the HTTP RED metrics. The route label is the template
// ("/v1/operations/:id"), never the raw path: IDs would make the label set
// unbounded.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total", Help: "HTTP requests answered, by method, route template and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "http_request_duration_seconds", Help: "Time to answer HTTP requests, by method and route template.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route"}),
	}
	var err error
	if m.requests, err = register(reg, m.requests); err != nil {
		return nil, err
	}
	if m.duration, err = register(reg, m.duration); err != nil {
		return nil, err
	}
	return m, nil
}

// register adds c to reg, or reuses the collector already there, so that a
// second server (tests, a restart in-process) can share one registry.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		if existing, ok := dup.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

func (m *metrics) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	route, method := routeLabel(c), methodLabel(c.Request.Method)
	m.requests.WithLabelValues(method, route, strconv.Itoa(c.Writer.Status())).Inc()
	m.duration.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
}

// routeLabel is the matched route template, or "unmatched".
func routeLabel(c *gin.Context) string {
	if p := c.FullPath(); p != "" {
		return p
	}
	return "unmatched"
}

// methodLabel bounds the method label: any token is a valid HTTP method, so
// a client could otherwise mint label values at will.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}
