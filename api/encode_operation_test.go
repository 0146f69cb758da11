package api

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The hand encoder writes exactly encoding/json's bytes for every
// operation, registration and claim answer, or leaves the value to
// encoding/json: it never writes something encoding/json would refuse,
// nor different bytes.
func TestAppendOperation_sameBytes(t *testing.T) {
	fast := 0
	for range 20 { // rapid's 100 checks each time: 2,000 answers
		rapid.Check(t, sameBytes(&fast))
	}
	t.Logf("by hand: %d", fast)
	if fast == 0 {
		t.Fatal("no value was encoded by hand")
	}
}

func sameBytes(fast *int) func(*rapid.T) {
	return func(t *rapid.T) {
		var v any
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0:
			v = genOperation(t, "op")
		case 1:
			v = genRegisterResponse(t)
		default:
			c := genClaim(t, "claim")
			c.Operation = genOperation(t, "claim.op")
			v = registerResponse{operationJSON: genOperation(t, "reg.op"), Claim: c}
		}
		want, werr := json.Marshal(v)
		var b bytes.Buffer
		ok, err := encodeFast(&b, v)
		if !ok {
			t.Fatalf("%T is not encoded by hand", v)
		}
		if err != nil {
			if werr == nil && err != errEncodeFallback {
				t.Fatalf("hand encoder failed (%v) where encoding/json wrote %s", err, want)
			}
			return
		}
		if werr != nil {
			t.Fatalf("hand encoder wrote %s where encoding/json refused: %v", b.Bytes(), werr)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("bytes differ\n hand: %s\n json: %s", b.Bytes(), want)
		}
		*fast++
	}
}

// A realistic answer takes the hand path, not the fallback.
func TestAppendOperation_typicalIsFast(t *testing.T) {
	at := time.Date(2026, 12, 1, 21, 0, 0, 123456000, time.UTC)
	op := &operationJSON{ID: "op_1", Namespace: "default", Key: "load_1:task", Type: "crm.task.create", State: "action_pending",
		Version: 3, Fingerprint: "f", ContentVersion: 1, ContentSHA256: "abc", ProviderKey: nullIfEmpty("pk"),
		Lease: &leaseJSON{Worker: "w", ExpiresAt: at}, CreatedAt: at, UpdatedAt: at,
		Result: &resultJSON{Ref: "crm_1", Data: json.RawMessage(`{"a": 1, "b": [1, 2]}`)},
		Links:  linksJSON{Self: "/v1/operations/op_1", Desk: "/desk/operations/op_1"}}
	reg := registerResponse{operationJSON: op, Claim: &claimJSON{Content: json.RawMessage(`{"title": "Follow up"}`)}}
	for _, v := range []any{op, reg} {
		var b bytes.Buffer
		if ok, err := encodeFast(&b, v); !ok || err != nil {
			t.Fatalf("%T: ok %v err %v", v, ok, err)
		}
		want, _ := json.Marshal(v)
		if !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("bytes differ\n hand: %s\n json: %s", b.Bytes(), want)
		}
	}
}

func genString(t *rapid.T, label string) string {
	// Mostly what answers hold; now and then what needs escaping.
	switch k := rapid.IntRange(0, 40).Draw(t, label+".kind"); {
	case k == 0:
		return ""
	case k > 3:
		return rapid.StringMatching(`[A-Za-z0-9_.:/-]{1,30}`).Draw(t, label)
	case k == 1: // anything, invalid UTF-8 included
		return string(rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, label))
	case k == 2:
		return rapid.SampledFrom([]string{"<b>", "a&b", "\"q\"", `back\slash`, "tab\there", "line\u2028sep", "é", "\x00", "\x7f", "\b\f"}).Draw(t, label)
	}
	return rapid.String().Draw(t, label)
}

func genStringp(t *rapid.T, label string) *string {
	if rapid.Bool().Draw(t, label+".nil") {
		return nil
	}
	s := genString(t, label)
	return &s
}

func genTime(t *rapid.T, label string) time.Time {
	year := rapid.SampledFrom([]int{1970, 2026, 2026, 2026, 2026, 2026, 2026, 2026, 9999, 0, 1, 10000, -1}).Draw(t, label+".year")
	ns := rapid.SampledFrom([]int{0, 1, 100, 123456000, 999999999, 500000}).Draw(t, label+".ns")
	sec := rapid.IntRange(0, 86400*365).Draw(t, label+".sec")
	tm := time.Date(year, 1, 1, 0, 0, sec, ns, time.UTC)
	if rapid.IntRange(0, 9).Draw(t, label+".zone") == 0 {
		tm = tm.In(time.FixedZone("x", 3600*rapid.IntRange(-12, 12).Draw(t, label+".off")))
	}
	return tm
}

func genTimep(t *rapid.T, label string) *time.Time {
	if rapid.Bool().Draw(t, label+".nil") {
		return nil
	}
	tm := genTime(t, label)
	return &tm
}

func genRaw(t *rapid.T, label string) json.RawMessage {
	switch k := rapid.IntRange(0, 12).Draw(t, label+".kind"); {
	case k == 0:
		return nil
	case k < 8:
		return json.RawMessage(rapid.SampledFrom([]string{`{"a": 1, "b": [1, 2, {"c": "d"}]}`, `{}`, `{ "t" : "x y" }`,
			"{\n\t\"k\": null\n}", `{"h": "<a&b>"}`, "{\"s\": \"\u2028\"}", `"x"`, `[1, 2]`, `{"a": "é"}`}).Draw(t, label))
	case k == 8: // not JSON: encoding/json refuses it
		return json.RawMessage(rapid.SampledFrom([]string{``, `{`, `{"a":}`, `nul`, `{"a": 1} x`}).Draw(t, label))
	}
	b, _ := json.Marshal(map[string]any{genString(t, label+".k"): genString(t, label+".v")})
	return b
}

func genOperation(t *rapid.T, p string) *operationJSON {
	o := &operationJSON{ID: genString(t, p+".id"), Namespace: genString(t, p+".ns"), Key: genString(t, p+".key"),
		Type: genString(t, p+".type"), State: genString(t, p+".state"), Version: rapid.Int64().Draw(t, p+".version"),
		EventID: genStringp(t, p+".event"), Source: genStringp(t, p+".source"), CorrelationID: genStringp(t, p+".corr"),
		CausedBy: genStringp(t, p+".caused"), Supersedes: genStringp(t, p+".supersedes"), SupersededBy: genStringp(t, p+".by"),
		Fingerprint: genString(t, p+".fp"), ContentVersion: rapid.Int().Draw(t, p+".cv"), ContentSHA256: genString(t, p+".sha"),
		Content: genRaw(t, p+".content"), ContentHidden: rapid.Bool().Draw(t, p+".hidden"),
		ContentBytes: rapid.IntRange(-1, 70000).Draw(t, p+".bytes"), ContentPurgedAt: genTimep(t, p+".purged"),
		ProviderKey: genStringp(t, p+".pk"), ProviderKeyFirstSentAt: genTimep(t, p+".sent"),
		Attempts: rapid.Int().Draw(t, p+".attempts"), NextRetryAt: genTimep(t, p+".next"), Assignee: genStringp(t, p+".assignee"),
		CreatedAt: genTime(t, p+".created"), UpdatedAt: genTime(t, p+".updated"),
		Links: linksJSON{Self: genString(t, p+".self"), Desk: genString(t, p+".desk")}}
	if rapid.Bool().Draw(t, p+".pkcv") {
		v := rapid.Int().Draw(t, p+".pkcv.v")
		o.ProviderKeyContentVersion = &v
	}
	if rapid.Bool().Draw(t, p+".approval") {
		o.Approval = &approvalJSON{ContentVersion: rapid.Int().Draw(t, p+".approval.cv"), By: genString(t, p+".approval.by"),
			At: genTime(t, p+".approval.at")}
	}
	if rapid.Bool().Draw(t, p+".lease") {
		o.Lease = &leaseJSON{Worker: genString(t, p+".lease.worker"), ExpiresAt: genTime(t, p+".lease.exp")}
	}
	if rapid.Bool().Draw(t, p+".result") {
		o.Result = &resultJSON{Ref: genString(t, p+".result.ref"), Data: genRaw(t, p+".result.data")}
	}
	if rapid.Bool().Draw(t, p+".error") {
		o.LastError = &errorJSON{Class: genString(t, p+".error.class"), Code: genString(t, p+".error.code"),
			Message: genString(t, p+".error.msg")}
	}
	if rapid.Bool().Draw(t, p+".resolution") {
		o.Resolution = &resolutionJSON{Action: genString(t, p+".res.action"), By: genString(t, p+".res.by"),
			Reason: genString(t, p+".res.reason"), At: genTime(t, p+".res.at")}
	}
	return o
}

func genClaim(t *rapid.T, p string) *claimJSON {
	return &claimJSON{Lease: claimLeaseJSON{Token: rapid.Int64().Draw(t, p+".token"), Worker: genString(t, p+".worker"),
		ExpiresAt: genTime(t, p+".exp")},
		Attempt: attemptRefJSON{ID: genString(t, p+".attempt"), Number: rapid.Int().Draw(t, p+".number")},
		Content: genRaw(t, p+".content"), ContentSHA256: genString(t, p+".sha"), ProviderKey: genString(t, p+".pk"),
		ProviderKeyUse: genString(t, p+".use")}
}

func genRegisterResponse(t *rapid.T) registerResponse {
	r := registerResponse{operationJSON: genOperation(t, "reg")}
	switch rapid.IntRange(0, 2).Draw(t, "reg.claim") {
	case 1:
		r.Claim = genClaim(t, "reg.claim")
	case 2:
		r.Claim = (*claimJSON)(nil)
		r.ClaimRefused = &claimRefusedJSON{Reason: genString(t, "refused.reason"), Detail: genString(t, "refused.detail"),
			RetryAfterSeconds: rapid.IntRange(-1, 100).Draw(t, "refused.after")}
	}
	return r
}
