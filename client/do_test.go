package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/opshandoff/handoff/client"
)

// Do says when it returned a stored result without calling fn.
func TestDoReportsReplay(t *testing.T) {
	url, token, stop := startHandoff()
	defer stop()
	c := client.New(url, token)
	req := client.Request{Key: "evt_1:crm_task", Type: "crm.task.create",
		Content: map[string]any{"owner": "u_1", "due": "2026-12-01", "title": "Call back"}}
	calls := 0
	fn := func(context.Context, client.Claim) (client.Result, error) {
		calls++
		return client.Result{Ref: "crm_1"}, nil
	}
	first, err := c.Do(context.Background(), req, fn)
	if err != nil || first.State != "completed" || first.Replayed {
		t.Fatalf("first Do: %+v %v, want completed and not replayed", first, err)
	}
	again, err := c.Do(context.Background(), req, fn)
	if err != nil || again.State != "completed" || !again.Replayed || again.Result.Ref != "crm_1" || calls != 1 {
		t.Fatalf("second Do: %+v %v after %d calls, want the stored crm_1 replayed after 1 call", again, err, calls)
	}
}

// A Result without a Ref is settled completed, its ref derived from the
// data as the Python and TypeScript clients derive it.
func TestDoDerivesAMissingRef(t *testing.T) {
	url, token, stop := startHandoff()
	defer stop()
	c := client.New(url, token)
	req := client.Request{Key: "evt_2:crm_task", Type: "crm.task.create",
		Content: map[string]any{"owner": "u_2", "due": "2026-12-01", "title": "Call back"}}
	op, err := c.Do(context.Background(), req, func(context.Context, client.Claim) (client.Result, error) {
		return client.Result{Data: json.RawMessage(`{"status": "sent", "count": 2}`)}, nil
	})
	const want = "sha256:05c0c613efdcd4d633d648b65ae10045" // sdk/conformance/scenarios.json's no_ref_derived
	if err != nil || op.State != "completed" || op.Result == nil || op.Result.Ref != want {
		t.Fatalf("Do: %+v %v, want completed with ref %s", op, err, want)
	}
	empty, err := client.DerivedRef(client.Result{})
	if err != nil || empty != "sha256:44136fa355b3678a1146ad16f7e8649e" { // SHA-256 of "{}"
		t.Errorf("the ref of an empty result: %q %v", empty, err)
	}
}

// The canonical form sorts members as JavaScript does and escapes strings
// as JSON.stringify does.
func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"b": 1, "a": [true, null, "x"]}`: `{"a":[true,null,"x"],"b":1}`,
		`{"s": "<é>\u2028\n\u0001\"\\"}`:   "{\"s\":\"<é>\u2028\\n\\u0001\\\"\\\\\"}",
		`{"\ud83d\ude00": 1, "\uff61": 2}`: "{\"\U0001F600\":1,\"\uff61\":2}",
		`[1.50, -0, 12345678901234567890]`: `[1.50,-0,12345678901234567890]`,
	} {
		got, err := client.CanonicalJSON([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("CanonicalJSON(%s) = %s %v, want %s", in, got, err, want)
		}
	}
}

// fn that stops before calling the provider releases the lease at once:
// the attempt is settled (not left to lapse into unknown_outcome).
func TestDoNotSentReleasesTheLease(t *testing.T) {
	url, token, stop := startHandoff()
	defer stop()
	c := client.New(url, token)
	req := client.Request{Key: "evt_3:crm_task", Type: "crm.task.create",
		Content: map[string]any{"owner": "u_3", "due": "2026-12-01", "title": "Call back"}}
	op, err := c.Do(context.Background(), req, func(context.Context, client.Claim) (client.Result, error) {
		return client.Result{}, fmt.Errorf("%w: the owner has no e-mail address", client.ErrNotSent)
	})
	if op.State == "action_pending" || op.State == "unknown_outcome" || op.Lease != nil || op.LastError == nil || op.LastError.Code != "not_sent" {
		t.Fatalf("Do: %+v %v, want the attempt settled not_sent and the lease released", op, err)
	}
	if _, err := c.Do(context.Background(), req, nil); err == nil {
		t.Error("Do with a nil fn: no error")
	}
}
