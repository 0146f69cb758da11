package domain

import (
	"context"
	"log/slog"
)

// logChange writes one log line per written change: which operation (its
// key and event), the state before and after, the attempt and the request,
// so a line in the server's log answers "what happened to evt_42:charge"
// without the database.
func (l *Ledger) logChange(ch Change) {
	if l.Log == nil || len(ch.Events) == 0 {
		return
	}
	first, last := ch.Events[0], ch.Events[len(ch.Events)-1]
	actions := make([]string, len(ch.Events))
	for i, e := range ch.Events {
		actions[i] = e.Action
	}
	l.Log.LogAttrs(context.Background(), slog.LevelInfo, "ledger",
		slog.String("request_id", first.RequestID), slog.String("operation_id", ch.Op.ID),
		slog.String("namespace", ch.Op.Namespace), slog.String("key", ch.Op.Key), slog.String("event_id", ch.Op.EventID),
		slog.String("type", ch.Op.Type), slog.Any("actions", actions),
		slog.String("state_before", first.FromState), slog.String("state_after", last.ToState),
		slog.Int("attempt", ch.Op.Attempts), slog.String("actor", first.Actor.Identity()))
}
