package domain

import (
	"bytes"
	"log/slog"
	"testing"
	"time"
)

// The actions field renders exactly as the []string it replaced, in the
// text and the JSON handler alike.
func TestActionList_rendersAsStrings(t *testing.T) {
	lists := [][]string{nil, {}, {"registered"}, {"claimed", "began"}, {ActionClaimedAndBegan, "settled"},
		{"a b", `q"uote`, "<b>&", "tab\t", "line\n", "é", "\u2028", ""}, {"=", "[x]"}}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, l := range lists {
		for _, h := range []func(*bytes.Buffer) slog.Handler{
			func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
			func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		} {
			var want, got bytes.Buffer
			r := slog.NewRecord(at, slog.LevelInfo, "request", 0)
			r.AddAttrs(slog.Any("actions", l))
			if err := h(&want).Handle(t.Context(), r); err != nil {
				t.Fatal(err)
			}
			r = slog.NewRecord(at, slog.LevelInfo, "request", 0)
			r.AddAttrs(slog.Any("actions", actionList(l)))
			if err := h(&got).Handle(t.Context(), r); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%q:\n got  %s want %s", l, got.String(), want.String())
			}
		}
	}
}
