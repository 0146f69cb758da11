package e2e

import (
	"context"
	"errors"
	"testing"

	"github.com/opshandoff/handoff/client"
)

// TestClientDo runs the Go client's whole protocol against the real server:
// the provider is called at most once per key, whatever happens.
func TestClientDo(t *testing.T) {
	s := startServer(t)
	c := client.New(s.URL, s.Token)
	ctx := context.Background()
	calls := map[string]int{}
	provider := func(key string, err error) func(context.Context, client.Claim) (client.Result, error) {
		return func(_ context.Context, claim client.Claim) (client.Result, error) {
			calls[key]++
			var content map[string]any
			if e := claim.ContentInto(&content); e != nil || content["title"] != "hi" || claim.ProviderKey == "" {
				t.Errorf("claim without the snapshot or provider key: %+v", claim)
			}
			return client.Result{Ref: "crm_" + key}, err
		}
	}
	req := func(key string) client.Request {
		return client.Request{Key: key, Type: "crm.task.create", Content: map[string]any{"title": "hi"}}
	}

	op, err := c.Do(ctx, req("ok"), provider("ok", nil))
	if err != nil || op.State != "completed" || op.Result.Ref != "crm_ok" {
		t.Fatalf("first run: %+v %v", op, err)
	}
	op, err = c.Do(ctx, req("ok"), provider("ok", nil))
	if err != nil || op.State != "completed" || op.Result.Ref != "crm_ok" || calls["ok"] != 1 {
		t.Fatalf("a rerun must return the stored result without calling the provider: %+v %v calls=%d", op, err, calls["ok"])
	}

	lost := errors.New("read timeout")
	op, err = c.Do(ctx, req("lost"), provider("lost", lost))
	if !errors.Is(err, lost) || op.State != "unknown_outcome" {
		t.Fatalf("a timeout after begin must be unknown_outcome: %+v %v", op, err)
	}
	_, err = c.Do(ctx, req("lost"), provider("lost", nil))
	if !client.IsCode(err, "not_claimable") || calls["lost"] != 1 {
		t.Fatalf("an unknown outcome must not be retried: %v calls=%d", err, calls["lost"])
	}

	op, err = c.Do(ctx, req("bad"), provider("bad", &client.ProviderError{Class: "validation", Message: "owner missing"}))
	if err == nil || op.State != "failed_terminal" {
		t.Fatalf("a validation error is terminal by the card: %+v %v", op, err)
	}
}
