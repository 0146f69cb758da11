package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store"
)

// What belongs to no operation goes to the audit trail's system stream:
// tokens created and revoked, card versions loaded. The audit loops
// (checkpoints, retention) are wired here too.

// auditToken records a token's creation or revocation — never its secret.
func auditToken(ctx context.Context, s *store.Store, action string, t domain.APIToken) error {
	_, err := s.AppendSystem(ctx, domain.SystemEvent(ctx, &domain.IDSource{}, time.Now(), cliActor(), action, "",
		map[string]any{"token_id": t.ID, "namespace": t.Namespace, "name": t.Name}))
	return err
}

// auditTokenRevoked records the revocation of the token with the id.
func auditTokenRevoked(ctx context.Context, s *store.Store, id string) error {
	list, err := s.ListTokens(ctx)
	if err != nil {
		return err
	}
	for _, t := range list {
		if t.ID == id {
			return auditToken(ctx, s, "token_revoked", t)
		}
	}
	return fmt.Errorf("token %s vanished before its revocation was recorded", id)
}

// recordCardsLoaded records the loaded card versions when they differ from
// the last record: on the first start, and whenever SyncCards added a
// version (or a card was dropped), not on every restart.
func recordCardsLoaded(ctx context.Context, s *store.Store, versions map[string]int) error {
	last, found, err := s.LastAudit(ctx, domain.SystemStream, "cards_loaded")
	if err != nil {
		return err
	}
	if found {
		var d struct{ Cards map[string]int }
		if json.Unmarshal(last.Detail, &d) == nil && maps.Equal(d.Cards, versions) {
			return nil
		}
	}
	_, err = s.AppendSystem(ctx, domain.SystemEvent(ctx, &domain.IDSource{}, time.Now(), domain.System, "cards_loaded", "",
		map[string]any{"cards": versions}))
	return err
}

// startAuditLoops runs the checkpointer until ctx ends. Its settings are
// read here, beside the loop they shape:
//
//	HANDOFF_AUDIT_CHECKPOINT_INTERVAL  how often checkpoints are written (default 1m)
//	HANDOFF_AUDIT_RETENTION            how long the streams of final operations
//	                                   are kept, e.g. 400d; empty keeps them for ever
//	HANDOFF_AUDIT_ROOTS_FILE           a file each checkpoint's root is appended
//	                                   to, one JSON line each, for
//	                                   `handoff audit verify --roots`
func startAuditLoops(ctx context.Context, loops *sync.WaitGroup, s *store.Store) error {
	interval, err := auditDuration("HANDOFF_AUDIT_CHECKPOINT_INTERVAL", time.Minute)
	if err != nil {
		return err
	}
	retention, err := auditDuration("HANDOFF_AUDIT_RETENTION", 0)
	if err != nil {
		return err
	}
	if retention > 0 {
		slog.Info("audit retention", "final_operations_kept", retention)
	}
	cp := &reconcile.Checkpointer{Trail: audit.NewTrail(s), Interval: interval, Retention: retention}
	if file := os.Getenv("HANDOFF_AUDIT_ROOTS_FILE"); file != "" {
		cp.Publish = append(cp.Publish, &audit.RootFile{Path: file})
		slog.Info("audit roots published", "file", file)
	}
	loops.Go(func() { cp.Run(ctx) })
	return nil
}

// auditDuration reads a positive Go duration, or whole days ("400d").
func auditDuration(name string, def time.Duration) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	d, ok := parseDays(v)
	if !ok {
		return 0, fmt.Errorf("%s: %q is not a positive duration such as 30s, 5m or 400d", name, v)
	}
	return d, nil
}

// parseDays reads a positive Go duration, or whole days ("400d"), as the
// retention settings take them.
func parseDays(v string) (time.Duration, bool) {
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, nerr := strconv.Atoi(days)
		d, err = time.Duration(n)*24*time.Hour, nerr
	}
	return d, err == nil && d > 0
}
