package domain_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"pgregory.net/rapid"
)

// referenceCanonicalJSON is how an event's canonical form was first
// defined: json.Marshal of its members, canonicalized. The fast writer must
// give the same bytes, or every stored hash would stop verifying.
func referenceCanonicalJSON(e domain.AuditEvent) ([]byte, error) {
	m := map[string]any{
		"id": e.ID, "stream": e.Stream, "seq": e.Seq, "operation_id": e.OperationID,
		"namespace": e.Namespace, "at": e.At.UTC().Format(time.RFC3339Nano),
		"actor": map[string]any{"kind": e.Actor.Kind.String(), "name": e.Actor.Name,
			"issuer": e.Actor.Issuer, "subject": e.Actor.Subject, "email": e.Actor.Email,
			"role": e.Actor.Role.String(), "namespace": e.Actor.Namespace},
		"action": e.Action, "from_state": e.FromState, "to_state": e.ToState,
		"reason": e.Reason, "request_id": e.RequestID, "client_addr": e.ClientAddr,
		"prev_hash": e.PrevHash,
	}
	if len(e.Detail) > 0 {
		m["detail"] = json.RawMessage(e.Detail)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return domain.Canonicalize(raw)
}

// anyText is any string, valid UTF-8 or not.
func anyText() *rapid.Generator[string] {
	special := rapid.StringOf(rapid.RuneFrom([]rune("<>&\"\\\u2028\u2029\x00\x1f\x7fé😀")))
	invalid := rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")) })
	return rapid.OneOf(rapid.String(), special, invalid)
}

func jsonValue(depth int) *rapid.Generator[any] {
	leaves := []*rapid.Generator[any]{
		rapid.Just[any](nil), rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Map(anyText(), func(s string) any { return s }),
		rapid.Map(rapid.Int64(), func(i int64) any { return i }),
		rapid.Map(rapid.Float64(), func(f float64) any { return f }),
	}
	if depth == 0 {
		return rapid.OneOf(leaves...)
	}
	return rapid.OneOf(append(leaves,
		rapid.Map(rapid.SliceOfN(jsonValue(depth-1), 0, 4), func(xs []any) any { return xs }),
		rapid.Map(rapid.MapOfN(anyText(), jsonValue(depth-1), 0, 4), func(m map[string]any) any { return m }))...)
}

func TestCanonicalJSON_matchesTheReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := domain.AuditEvent{ID: anyText().Draw(t, "id"), Stream: anyText().Draw(t, "stream"), Seq: rapid.Int64().Draw(t, "seq"),
			OperationID: anyText().Draw(t, "op"), Namespace: anyText().Draw(t, "ns"),
			At:     time.Unix(rapid.Int64Range(-1e10, 1e11).Draw(t, "s"), rapid.Int64Range(0, 1e9-1).Draw(t, "ns")),
			Actor:  domain.Actor{Kind: rapid.SampledFrom(domain.ActorKinds).Draw(t, "kind"), Name: anyText().Draw(t, "name"), Email: anyText().Draw(t, "email")},
			Action: anyText().Draw(t, "action"), FromState: anyText().Draw(t, "from"), Reason: anyText().Draw(t, "reason"),
			ClientAddr: anyText().Draw(t, "addr"), PrevHash: anyText().Draw(t, "prev")}
		if rapid.Bool().Draw(t, "has detail") {
			raw, err := json.Marshal(jsonValue(3).Draw(t, "detail"))
			if err != nil {
				t.Skip("not JSON:", err) // a NaN float
			}
			e.Detail = raw
		}
		want, err := referenceCanonicalJSON(e)
		if err != nil {
			t.Skip("the reference refuses it:", err)
		}
		if got := e.CanonicalJSON(); string(got) != string(want) {
			t.Fatalf("canonical form differs:\n got %s\nwant %s", got, want)
		}
	})
}

func TestCanonicalJSON_detailAsWritten(t *testing.T) {
	for _, d := range []string{`{"b":1.0,"a":[1e3,-0,0.000001,1e21,123456789012345678]}`, `{"\u00e9":"x","\ud83d\ude00":"y","z":"<&>"}`,
		`  {"nested":{"k":null,"j":true}}  `, `"just a string"`, `[]`, `null`} {
		e := domain.AuditEvent{ID: "ev_1", Detail: json.RawMessage(d)}
		want, err := referenceCanonicalJSON(e)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if got := e.CanonicalJSON(); string(got) != string(want) {
			t.Errorf("detail %s:\n got %s\nwant %s", d, got, want)
		}
	}
}
