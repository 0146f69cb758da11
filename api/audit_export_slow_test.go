package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// smallBuffers makes every accepted connection's send buffer small, so a
// reader that stops reading stalls the writer after a few kilobytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestContract_AuditExportCutsOffAStalledReader: an export whose reader
// stops reading is cut off once a write has waited the chunk timeout, so
// the export lets go, like any slow client; one that reads gets it whole.
func TestContract_AuditExportCutsOffAStalledReader(t *testing.T) {
	st := storetest.New(t)
	ledger := domain.NewLedger(st, contractCards())
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "n8n", Namespace: "campaigns"}
	for i := range 1000 {
		if _, err := ledger.Workflow.Register(context.Background(), wf, domain.Registration{Key: fmt.Sprintf("evt_%d:task", i),
			Type: "crm.task.create", Content: json.RawMessage(`{"title":"` + strings.Repeat("x", 200) + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	e, err := api.New(api.Config{Ledger: ledger, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(),
		Auth: auth.Chain{People: people{"aud": person("aud@example.com", domain.RoleAuditor)}}, ExportChunkTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(e)
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	defer srv.Close()

	export := func(stall time.Duration) (int, error) {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if stall > 0 {
			_ = conn.(*net.TCPConn).SetReadBuffer(4096)
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		fmt.Fprintf(conn, "GET /v1/audit/export HTTP/1.1\r\nHost: handoff\r\nAuthorization: Bearer aud\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 512), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		time.Sleep(stall)
		n, err := io.Copy(io.Discard, resp.Body)
		return int(n), err
	}
	whole, err := export(0)
	if err != nil || whole < 300_000 {
		t.Fatalf("a reader that reads got %d bytes, %v", whole, err)
	}
	if got, err := export(2 * time.Second); err == nil {
		t.Fatalf("a reader stalled past the chunk timeout got the whole export (%d of %d bytes)", got, whole)
	}
}
