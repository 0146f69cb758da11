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
	if len(args) == 0 {
		return fmt.Errorf("token: want create, list or revoke")
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
		fs := flag.NewFlagSet("token create", flag.ContinueOnError)
		ns := fs.String("namespace", "", "the one namespace the token may act in")
		name := fs.String("name", "", "who or what holds the token")
		drillRole := fs.String("drill-person", "", "operator or approver: a drill credential acting as a person with that role, for handoff drill --url")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *drillRole != "" {
			role, err := domain.ParseRole(*drillRole)
			if err != nil {
				return fmt.Errorf("token create: --drill-person is operator or approver")
			}
			secret, tok, err := tokens.CreateDrillPerson(ctx, *name, role)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "created drill credential %s (%s) acting as an %s; it is shown only once:\n%s\n", tok.ID, tok.Name, tok.PersonRole, secret)
			return nil
		}
		secret, tok, err := tokens.Create(ctx, *ns, *name)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created token %s (%s) for namespace %s; it is shown only once:\n%s\n", tok.ID, tok.Name, tok.Namespace, secret)
		return nil
	case "list":
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
	case "revoke":
		if len(args) != 2 {
			return fmt.Errorf("token revoke: want exactly one token ID")
		}
		if err := tokens.Revoke(ctx, args[1]); err != nil {
			return err
		}
		if err := auditTokenRevoked(ctx, s, args[1]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", args[1])
		return nil
	}
	return fmt.Errorf("token: unknown subcommand %q", args[0])
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
	}
	return nil
}
