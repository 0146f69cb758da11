package client

import (
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// tracer makes a client span per call through the application's global
// OpenTelemetry provider (a no-op until the application sets one); each
// call sends its W3C traceparent, so the workflow's trace holds the
// server's spans under the client's.
var tracer = otel.Tracer("github.com/opshandoff/handoff/client")

var traceContext = propagation.TraceContext{}

// routeOf is a call's path with the operation ID and query left out, a
// span name of few values.
func routeOf(path string) string {
	path, _, _ = strings.Cut(path, "?")
	parts := strings.Split(path, "/")
	for i := 1; i < len(parts); i++ {
		if parts[i-1] == "operations" && parts[i] != "" {
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}
