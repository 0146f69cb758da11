package api_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestTracing_oneWorkflowCall: a workflow's Do, traced in the workflow's
// process, reaches the server with its traceparent. One trace holds the
// workflow's span, the client's span per call under it, the server's span
// per call under the client's, and under the server's the store's write
// (and, on PostgreSQL, the group commit's flush). No attribute carries the
// content.
func TestTracing_oneWorkflowCall(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	st := storetest.New(t)
	tokens := auth.NewTokens(st)
	secret, _, err := tokens.Create(context.Background(), "campaigns", "n8n")
	if err != nil {
		t.Fatal(err)
	}
	ledger := domain.NewLedger(st, contractCards())
	ledger.Log = slog.New(slog.DiscardHandler) // the change's fields reach the span the way they reach the access log
	e, err := api.New(api.Config{Ledger: ledger, Auth: auth.Chain{Tokens: tokens},
		Logger: slog.New(slog.DiscardHandler), Tracing: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e)
	defer srv.Close()

	ctx, workflow := tp.Tracer("workflow").Start(context.Background(), "send follow-up")
	op, err := client.New(srv.URL, secret).Do(ctx, client.Request{Key: "evt_7:crm_task", Type: "crm.task.create",
		Content: map[string]any{"owner": "u_9", "title": "SECRET-TITLE-TEXT"}},
		func(context.Context, client.Claim) (client.Result, error) { return client.Result{Ref: "crm_1"}, nil })
	workflow.End()
	if err != nil || op.State != "completed" {
		t.Fatalf("Do: %v %+v", err, op)
	}

	spans := rec.Ended()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
		if s.SpanContext().TraceID() != workflow.SpanContext().TraceID() {
			t.Errorf("span %q is in another trace", s.Name())
		}
		for _, a := range s.Attributes() {
			if strings.Contains(a.Value.Emit(), "SECRET-TITLE-TEXT") || strings.Contains(a.Value.Emit(), "u_9") {
				t.Errorf("span %q carries content in %s", s.Name(), a.Key)
			}
		}
	}
	parent := func(s sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan { return byID[s.Parent().SpanID()] }
	var register, settle sdktrace.ReadOnlySpan
	writes, flushes := 0, 0
	for _, s := range spans {
		switch {
		case s.SpanKind() == trace.SpanKindServer && s.Name() == "POST /v1/operations":
			register = s
		case s.SpanKind() == trace.SpanKindServer && s.Name() == "POST /v1/operations/:id/settle":
			settle = s
		case s.Name() == "store.write":
			if p := parent(s); p == nil || p.SpanKind() != trace.SpanKindServer {
				t.Errorf("a store write's parent is not a server span: %v", p)
			}
			writes++
		case s.Name() == "store.flush":
			if p := parent(s); p == nil || p.Name() != "store.write" {
				t.Errorf("a flush's parent is not a store write: %v", p)
			}
			flushes++
		}
	}
	for name, s := range map[string]sdktrace.ReadOnlySpan{"register": register, "settle": settle} {
		if s == nil {
			t.Fatalf("no server span for the %s call among %d spans", name, len(spans))
		}
		c := parent(s)
		if c == nil || c.SpanKind() != trace.SpanKindClient || parent(c) == nil || parent(c).Name() != "send follow-up" {
			t.Fatalf("the %s call's server span should be under the client's span, under the workflow's: %v", name, c)
		}
	}
	attrs := map[string]string{}
	for _, a := range settle.Attributes() {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	if attrs["handoff.key"] != "evt_7:crm_task" || attrs["handoff.type"] != "crm.task.create" || attrs["handoff.namespace"] != "campaigns" ||
		attrs["handoff.state_before"] != "action_pending" || attrs["handoff.state_after"] != "completed" || attrs["handoff.attempt"] != "1" ||
		attrs["http.response.status_code"] != "200" {
		t.Errorf("the settle's span attributes: %v", attrs)
	}
	if writes < 2 {
		t.Errorf("store writes traced: %d, want one per change (register, settle)", writes)
	}
	if storetest.Postgres() && flushes < 2 {
		t.Errorf("group commit flushes traced: %d", flushes)
	}
}
