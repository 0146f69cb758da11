// Command handoff is the Handoff server and its administration tool:
// serve (the default), migrate, token, cards.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// version is stamped at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

const usage = `handoff — an operation ledger with a human reconciliation desk

usage:
  handoff [serve]                                  run the server (HANDOFF_* environment)
  handoff migrate                                  apply database migrations and exit
  handoff token create --namespace NS --name NAME  create an API token (printed once)
  handoff token list                               list API tokens
  handoff token revoke ID                          revoke an API token
  handoff cards check FILE|DIR                     validate operation types
  handoff lookup TYPE KEY [--namespace NS] [--provider-key K] [--event-id E] [--content JSON]
                                                   run the type's lookup_adapter once and print what it read
  handoff execute TYPE KEY [--content JSON] [--url URL] [--token TOKEN] [--async]
                                                   one POST /v1/execute/TYPE to a running Handoff, as a workflow would
  handoff audit export [--format jsonl|csv] [--from T] [--to T] [--namespace NS] [-o FILE]
                                                   export the audit trail with its chain fields
  handoff audit verify [--partial] FILE            check an export offline: chains, checkpoints, gaps
  handoff audit verify --db                        check the database's audit trail
  handoff version                                  print the version
  handoff healthcheck [URL]                        exit 0 when the server at HANDOFF_ADDR (or URL) is ready
  handoff drill [--type T] [--url URL --token TOKEN [--operator-token T] [--approver-token T]] [--receipts DIR]
                                                   run the seed cases against a sandbox provider; write receipts
  handoff mcp [--http ADDR] FILE | mcp check FILE  put an AI agent's MCP tool calls through the ledger
  handoff drill verify RECEIPT                     check a receipt against its audit event
  handoff sandbox [--addr A] [--idempotency none|key|key_and_params] [--retention D] [--lookup none|authoritative|unsure]
                                                   run the simulated provider the drill uses
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "handoff:", err)
		os.Exit(1)
	}
}

// run dispatches a subcommand; it is main without the process, for tests.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	if wantsHelp(args) {
		// Asking for help never opens a database, binds a port or runs a
		// migration: it prints the subcommand's lines of the usage and stops.
		fmt.Fprint(stdout, usageOf(cmd))
		return nil
	}
	cfg, err := configFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	slog.SetDefault(cfg.logger(stderr))
	switch cmd {
	case "serve":
		return serve(ctx, cfg, stderr)
	case "migrate":
		return migrate(ctx, cfg, stdout)
	case "token":
		return tokenCmd(ctx, cfg, args, stdout)
	case "cards":
		return cardsCmd(args, stdout)
	case "audit":
		return auditCmd(ctx, cfg, args, stdout, stderr)
	case "healthcheck":
		return healthcheck(ctx, cfg, args, stdout)
	case "version", "--version":
		fmt.Fprintln(stdout, version)
		return nil
	case "sandbox":
		return sandboxCmd(ctx, args, stdout)
	case "drill":
		return drillCmd(ctx, cfg, args, stdout, stderr)
	case "lookup":
		return lookupCmd(ctx, cfg, args, stdout)
	case "execute":
		return executeCmd(ctx, cfg, args, stdout)
	case "mcp":
		return mcpCmd(ctx, args, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
