package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The bodies are the bytes json.Marshal wrote for the maps the driver
// sent before.
func TestBodies_sameAsMaps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.OneOf(rapid.StringMatching(`load_[0-9]{1,19}_[0-9]{1,7}:task`), rapid.String()).Draw(t, "key")
		typ := rapid.OneOf(rapid.SampledFrom([]string{"crm.task.create", "a<b>&c", `q"t`}), rapid.String()).Draw(t, "type")
		begin := rapid.Bool().Draw(t, "begin")
		tok := rapid.Int64().Draw(t, "token")
		mustEqual := func(got []byte, m map[string]any) {
			want, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("\n got  %s\n want %s", got, want)
			}
		}
		mustEqual(registerBody(quote(nil, key), quote(nil, typ), begin), map[string]any{"key": key, "type": typ,
			"content": map[string]any{"title": "Follow up", "owner": "u_9", "ref": key},
			"claim":   map[string]any{"worker": "handoff-load", "lease_seconds": 30, "begin": begin}})
		mustEqual(beginBody(tok), map[string]any{"lease_token": tok})
		mustEqual(settleBody(tok, key), map[string]any{"lease_token": tok, "outcome": "completed",
			"result": map[string]any{"ref": "crm_" + key}})
	})
}

// The answers read as json.Unmarshal read them: the same id, claim and
// token, the same state, an error where it gave one.
func TestAnswers_sameAsUnmarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		body := genAnswer(t)
		var want registeredJSON
		werr := json.Unmarshal([]byte(body), &want)
		got, err := readRegistered([]byte(body))
		if (err != nil) != (werr != nil) {
			t.Fatalf("%s: error %v, encoding/json's %v", body, err, werr)
		}
		if werr == nil {
			w := registered{id: want.ID, claimed: want.Claim != nil}
			if want.Claim != nil {
				w.token = want.Claim.Lease.Token
			}
			if got != w {
				t.Fatalf("%s:\n got  %+v\n want %+v", body, got, w)
			}
		}
		var wantState struct {
			State string `json:"state"`
		}
		serr := json.Unmarshal([]byte(body), &wantState)
		st, err := readState([]byte(body))
		if (err != nil) != (serr != nil) || (serr == nil && st != wantState.State) {
			t.Fatalf("%s: state %q %v, encoding/json's %q %v", body, st, err, wantState.State, serr)
		}
	})
}

// genAnswer is an answer as the server writes it, or bent: members in any
// order, escapes, other cases, null and absent claims, bad JSON.
func genAnswer(t *rapid.T) string {
	str := func(label string) string {
		s := rapid.OneOf(rapid.StringMatching(`[a-z_0-9]{0,12}`), rapid.SampledFrom([]string{`a\"b`, `\u0041`, `<`, `é`})).Draw(t, label)
		return `"` + s + `"`
	}
	name := func(label, n string) string {
		return `"` + rapid.SampledFrom([]string{n, n, n, n, strings.ToUpper(n), n + "x", `\u00` + fmt.Sprintf("%x", n[0]) + n[1:]}).Draw(t, label) + `"`
	}
	num := rapid.SampledFrom([]string{"7", "-3", "0", "9223372036854775807", "9223372036854775808", "1.5", "1e3", `"7"`, "null"})
	lease := `{"token":` + num.Draw(t, "token") + `,"worker":"handoff-load","expires_at":"2026-12-01T00:00:00Z"}`
	if rapid.Bool().Draw(t, "lease.order") {
		lease = `{ "worker" : "w", ` + name(t.Name()+"tokname", "token") + ` : ` + num.Draw(t, "token2") + ` }`
	}
	var claim string
	switch rapid.IntRange(0, 4).Draw(t, "claim") {
	case 0:
		claim = "null"
	case 1:
		claim = `{"operation":{"id":"op_x","state":"claimed","lease":{"token":99}},` + name("lease", "lease") + `:` + lease + `,"attempt":{"id":"at_1","number":1},"content":{"title":"a,b}]"}}`
	case 2:
		claim = `{"lease":` + lease + `}`
	case 3:
		claim = `[]`
	default:
		claim = ""
	}
	members := []string{name("id", "id") + `:` + str("idv"), `"namespace":"default"`, name("state", "state") + `:` + str("statev"),
		`"version":3`, `"content_sha256":"abc"`, `"approval":null`, `"result":{"ref":"crm_1","data":{"a":[1,2,{"b":"}"}]}}`,
		`"lease":{"worker":"w","expires_at":"2026-12-01T00:00:00Z"}`, `"links":{"self":"/v1/operations/op_1","desk":"/desk"}`}
	if claim != "" {
		members = append(members, name("claim", "claim")+`:`+claim)
	}
	members = rapid.Permutation(members).Draw(t, "order")
	body := "{" + strings.Join(members, ",") + "}"
	switch rapid.IntRange(0, 9).Draw(t, "bent") {
	case 0:
		body += " x"
	case 1:
		body = body[:len(body)-1]
	case 2:
		body = " \n" + body + "\n "
	case 3:
		body = `{"id":"a","id":"b","state":"x","state":"completed"}`
	}
	return body
}
