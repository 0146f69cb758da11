package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// slackReceiver counts what a Slack incoming webhook is sent, by body.
type slackReceiver struct {
	mu     sync.Mutex
	bodies map[string]int
}

func (r *slackReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.bodies[string(body)]++
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (r *slackReceiver) count() (messages, distinct int, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []string
	for b, n := range r.bodies {
		messages += n
		all = append(all, b)
	}
	return messages, len(r.bodies), strings.Join(all, "\n")
}

// TestNotifications_RoutedByKind: an outage of 50 items on one provider.
// The Slack destination with its default kinds is paged per incident —
// the opening and each doubling, at most 7 messages, no item's hand-off;
// the standard destination, which takes every kind, gets the 50
// operation.handed_off and the same incident notices. Each arrives once.
func TestNotifications_RoutedByKind(t *testing.T) {
	std, stdURL := newReceiver(t)
	slack := &slackReceiver{bodies: map[string]int{}}
	srv := httptest.NewServer(slack)
	t.Cleanup(srv.Close)

	raw, err := os.ReadFile("testdata/cards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cards := filepath.Join(t.TempDir(), "cards.yaml")
	routed := strings.Replace(string(raw), "- name: crm.task.create\n", "- name: crm.task.create\n  notify:\n"+
		"    - {url: "+srv.URL+"/services/T/B/x, format: slack}\n"+
		"    - {url: "+stdURL+", secret_env: HANDOFF_NOTIFY_SECRET, events: [\"*\"]}\n", 1)
	if err := os.WriteFile(cards, []byte(routed), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "HANDOFF_CARDS="+cards, "HANDOFF_NOTIFY_SECRET="+notifySecret, "HANDOFF_NOTIFY_ALLOW_PRIVATE=true",
		"HANDOFF_NOTIFY_TIMEOUT=1s")
	for i := range 50 {
		s.intoDesk(t, fmt.Sprintf("evt_outage%d:crm_task", i), true)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	handedOff := func() (n, incidents int) {
		std.mu.Lock()
		defer std.mu.Unlock()
		for _, op := range std.ops {
			if strings.HasPrefix(op, "operation.handed_off ") {
				n++
			}
		}
		return n, len(std.incidents)
	}
	for {
		n, inc := handedOff()
		msgs, _, _ := slack.count()
		if n == 50 && inc > 0 && msgs == inc {
			break
		}
		select {
		case <-std.got:
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("standard: %d handed_off, %d incident notices; Slack: %d messages", n, inc, msgs)
		}
	}
	time.Sleep(2 * time.Second) // anything late or repeated would arrive meanwhile
	n, inc := handedOff()
	msgs, distinct, bodies := slack.count()
	if n != 50 || inc > 7 || msgs != inc || distinct != msgs {
		t.Fatalf("standard: %d handed_off and %d incident notices; Slack: %d messages (%d distinct), want 50, ≤ 7 and as many, once each:\n%s",
			n, inc, msgs, distinct, bodies)
	}
	if strings.Contains(bodies, "evt_outage") {
		t.Fatalf("Slack was told of an item rather than the incident:\n%s", bodies)
	}
	std.mu.Lock()
	defer std.mu.Unlock()
	for id, k := range std.seen {
		if k != 1 {
			t.Errorf("%s (%s) delivered %d times", id, std.ops[id], k)
		}
	}
	if len(std.seen) != 50+inc {
		t.Fatalf("standard: %d deliveries, want %d", len(std.seen), 50+inc)
	}
}
