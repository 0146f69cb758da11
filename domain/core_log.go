package domain

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
)

// logChange records each written change for the server's log: which
// operation (its key, event and correlation ID), the state before and
// after, the attempt, the result's reference once there is one, and the
// request, so a line in the log answers "what happened to
// evt_42:charge" without the database. A request that writes one log line
// of its own (WithRequestLog: the API's access log) gets its first change
// in that line; every other change is a "ledger" line.
func (l *core) logChange(ctx context.Context, ch Change) {
	if l.Log == nil || len(ch.Events) == 0 {
		return
	}
	if ri, _ := ctx.Value(requestInfoKey{}).(requestInfo); ri.log != nil && ri.log.keep(ch) {
		return
	}
	l.Log.LogAttrs(context.Background(), slog.LevelInfo, "ledger",
		append([]slog.Attr{slog.String("request_id", ch.Events[0].RequestID)}, changeAttrs(ch)...)...)
}

// changeAttrs are a change's log fields but the request ID, which the
// access log names already.
func changeAttrs(ch Change) []slog.Attr {
	first, last := ch.Events[0], ch.Events[len(ch.Events)-1]
	actions := make(actionList, len(ch.Events))
	for i, e := range ch.Events {
		actions[i] = e.Action
	}
	ref := ""
	if ch.Op.Result != nil {
		ref = ch.Op.Result.Ref
	}
	return []slog.Attr{slog.String("operation_id", ch.Op.ID),
		slog.String("namespace", ch.Op.Namespace), slog.String("key", ch.Op.Key), slog.String("event_id", ch.Op.EventID),
		slog.String("correlation_id", ch.Op.CorrelationID), slog.String("type", ch.Op.Type), slog.Any("actions", actions),
		slog.String("state_before", first.FromState), slog.String("state_after", last.ToState),
		slog.Int("attempt", ch.Op.Attempts), slog.String("result_ref", ref), slog.String("actor", first.Actor.Identity())}
}

// RequestLog holds the first change a request wrote, for its one log line.
type RequestLog struct {
	mu  sync.Mutex
	ch  Change
	has bool
}

// keep takes the change if it is the request's first.
func (rl *RequestLog) keep(ch Change) bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.has {
		return false
	}
	rl.ch, rl.has = ch, true
	return true
}

// Attrs are the log fields of the first change the request wrote (but
// the request ID), none if it wrote none.
func (rl *RequestLog) Attrs() []slog.Attr {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if !rl.has {
		return nil
	}
	return changeAttrs(rl.ch)
}

// actionList is a change's actions as a log field. It renders as a
// []string does — [claimed began] in text, ["claimed","began"] in JSON —
// but the text handler takes MarshalText instead of formatting the slice
// through fmt's reflection, a fifth of the access log line's cost.
type actionList []string

// MarshalText is fmt's %+v of the []string.
func (a actionList) MarshalText() ([]byte, error) {
	return []byte("[" + strings.Join(a, " ") + "]"), nil
}

// MarshalJSON is the []string as slog's JSON handler writes it (no HTML
// escaping); without it, MarshalText would make the list one string.
func (a actionList) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode([]string(a)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
