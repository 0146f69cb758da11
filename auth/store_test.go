package auth_test

import (
	"context"
	"testing"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestTokens_onStore runs the token lifecycle on the real database.
func TestTokens_onStore(t *testing.T) {
	ctx := context.Background()
	tokens := auth.NewTokens(storetest.New(t))
	secret, tok, err := tokens.Create(ctx, "campaigns", "n8n")
	if err != nil {
		t.Fatal(err)
	}
	if a, err := tokens.Authenticate(ctx, secret); err != nil || a.Namespace != "campaigns" || a.Name != "n8n" {
		t.Fatalf("authenticate: %+v %v", a, err)
	}
	list, err := tokens.List(ctx)
	if err != nil || len(list) != 1 || list[0].Hash != auth.HashToken(secret) {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := tokens.Revoke(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Authenticate(ctx, secret); domain.ErrorCode(err) != domain.EUnauthenticated {
		t.Fatalf("revoked: %v", err)
	}
	if err := tokens.Revoke(ctx, "tok_missing"); domain.ErrorCode(err) != domain.ENotFound {
		t.Fatalf("revoke missing: %v", err)
	}
}
