package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/cards"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

func migrate(ctx context.Context, cfg config, stdout io.Writer) error {
	s, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintln(stdout, "database is up to date")
	return nil
}

// tokenCmd creates, lists and revokes API tokens. A new token's secret is
// printed once, alone on the last line, so scripts can take it with tail -1.
func tokenCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	// The arguments are checked before the database is opened, so a
	// mistyped command leaves nothing behind.
	req, err := parseTokenArgs(args)
	if err != nil {
		return err
	}
	s, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer s.Close()
	tokens := auth.NewTokens(s)
	tokens.Creator = cliActor() // token_created commits with the token
	switch args[0] {
	case "create":
		return createToken(ctx, tokens, req, stdout)
	case "list":
		return listTokens(ctx, tokens, stdout)
	default: // revoke
		return revokeToken(ctx, tokens, s, args[1], stdout)
	}
}

// tokenRequest is what `handoff token create` asks for: a workflow token
// for a namespace, or a drill credential acting as a person of drillRole.
type tokenRequest struct {
	ns, name, drillPerson string
	drillRole             domain.Role
}

// parseTokenArgs checks the subcommand and its arguments.
func parseTokenArgs(args []string) (tokenRequest, error) {
	var req tokenRequest
	if len(args) == 0 {
		return req, fmt.Errorf("token: want create, list or revoke")
	}
	switch args[0] {
	case "create":
		return parseTokenCreate(args[1:])
	case "list":
	case "revoke":
		if len(args) != 2 {
			return req, fmt.Errorf("token revoke: want exactly one token ID")
		}
	default:
		return req, fmt.Errorf("token: unknown subcommand %q (want create, list or revoke)", args[0])
	}
	return req, nil
}

// parseTokenCreate reads `handoff token create`'s flags.
func parseTokenCreate(args []string) (tokenRequest, error) {
	var req tokenRequest
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	fs.StringVar(&req.ns, "namespace", "", "the one namespace the token may act in")
	fs.StringVar(&req.name, "name", "", "who or what holds the token")
	fs.StringVar(&req.drillPerson, "drill-person", "", "operator or approver: a drill credential acting as a person with that role, for handoff drill --url")
	if err := fs.Parse(args); err != nil {
		return req, err
	}
	if req.drillPerson != "" {
		role, err := domain.ParseRole(req.drillPerson)
		if err != nil || (role != domain.RoleOperator && role != domain.RoleApprover) || req.name == "" {
			return req, fmt.Errorf("token create: --drill-person is operator or approver, with --name")
		}
		req.drillRole = role
	} else if req.ns == "" || req.name == "" {
		return req, fmt.Errorf("token create: --namespace and --name are both required, e.g. " +
			"handoff token create --namespace default --name my-workflow")
	}
	return req, nil
}

// createToken creates the token and prints its secret, once.
func createToken(ctx context.Context, tokens *auth.Tokens, req tokenRequest, stdout io.Writer) error {
	if req.drillPerson != "" {
		secret, tok, err := tokens.CreateDrillPerson(ctx, req.name, req.drillRole)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created drill credential %s (%s) acting as an %s; it is shown only once:\n%s\n", tok.ID, tok.Name, tok.PersonRole, secret)
		return nil
	}
	secret, tok, err := tokens.Create(ctx, req.ns, req.name)
	if err != nil {
		return err
	}
	if tok.Namespace == domain.DrillNamespace {
		fmt.Fprintf(stdout, "namespace %s is handoff drill's: its operations never notify anyone\n", tok.Namespace)
	}
	fmt.Fprintf(stdout, "created token %s (%s) for namespace %s; it is shown only once:\n%s\n", tok.ID, tok.Name, tok.Namespace, secret)
	return nil
}

// listTokens prints every token as a table.
func listTokens(ctx context.Context, tokens *auth.Tokens, stdout io.Writer) error {
	list, err := tokens.List(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAMESPACE\tNAME\tCREATED\tLAST USED\tREVOKED")
	for _, t := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Namespace, t.Name, t.CreatedAt.Format(time.RFC3339),
			timeOr(t.LastUsedAt, "never"), timeOr(t.RevokedAt, "-"))
	}
	return w.Flush()
}

// revokeToken revokes the token id and records it in the audit trail.
func revokeToken(ctx context.Context, tokens *auth.Tokens, s *store.Store, id string, stdout io.Writer) error {
	if err := tokens.Revoke(ctx, id); err != nil {
		return err
	}
	if err := auditTokenRevoked(ctx, s, id); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %s\n", id)
	return nil
}

func timeOr(t *time.Time, def string) string {
	if t == nil {
		return def
	}
	return t.Format(time.RFC3339)
}

// cardsCmd validates operation types without starting anything.
func cardsCmd(args []string, stdout io.Writer) error {
	if len(args) != 2 || args[0] != "check" {
		return fmt.Errorf("usage: handoff cards check FILE|DIR")
	}
	cs, err := cards.Load(args[1])
	if err != nil {
		return err
	}
	for _, c := range cs.Sorted() {
		fmt.Fprintf(stdout, "ok  %s (provider %s, idempotency %s, lookup %s)\n", c.Name, c.Provider, c.ProviderIdempotency, c.Lookup)
		if a := c.LookupAdapter; a != nil {
			fmt.Fprintf(stdout, "    lookup_adapter %s %s (window %s, authoritative %t)\n", a.Method, a.URL, a.Window, c.LookupAuthoritative)
			if a.Found.Key != "" {
				fmt.Fprintf(stdout, "    found bound by found.key %s\n", a.Found.Key)
			}
			if n := len(a.Found.Compare); n > 0 {
				fmt.Fprintf(stdout, "    found bound by %d found.compare rule(s)\n", n)
			}
		}
	}
	return nil
}
