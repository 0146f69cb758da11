package auth

import (
	"context"
	"strings"

	"github.com/opshandoff/handoff/domain"
)

// Authenticator turns a bearer credential into the actor it stands for, or
// an EUnauthenticated error. The api package depends on this interface only.
type Authenticator interface {
	Authenticate(ctx context.Context, bearer string) (domain.Actor, error)
}

// Chain picks the verifier by the credential's shape: API tokens carry the
// "hnd_" prefix, anything else is taken for a person's JWT.
type Chain struct {
	Tokens Authenticator
	// People verifies OIDC JWTs and maps their claims to a person with a
	// role. nil until OIDC is configured: every JWT is then refused.
	People Authenticator
}

var _ Authenticator = Chain{}
var _ Authenticator = (*Tokens)(nil)

// Authenticate implements Authenticator.
func (c Chain) Authenticate(ctx context.Context, bearer string) (domain.Actor, error) {
	switch {
	case bearer == "":
		return domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "credentials are required")
	case strings.HasPrefix(bearer, TokenPrefix) && c.Tokens != nil:
		return c.Tokens.Authenticate(ctx, bearer)
	case !strings.HasPrefix(bearer, TokenPrefix) && c.People != nil:
		return c.People.Authenticate(ctx, bearer)
	}
	return domain.Actor{}, errBadToken()
}
