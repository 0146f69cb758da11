package drill

import (
	"errors"
	"strings"
	"testing"
)

func TestReceipt_RoundTripAndHash(t *testing.T) {
	ok := true
	r := Receipt{ID: "drl_1", Type: "crm.task.create", Card: CardRef{Name: "crm.task.create", Version: 3, SHA256: "abc"},
		Cases: []CaseResult{{Number: 1, Name: "the same event delivered twice", Verdict: VerdictPass, Executions: 1, State: "completed", StoredResultMatch: &ok},
			{Number: 12, Name: "a resend", Verdict: VerdictFail, Executions: 2, Explanation: "DUPLICATE EXECUTION"}},
		Verdict: VerdictFail}
	raw := r.Marshal()
	back, err := Parse(raw)
	if err != nil || back.ID != r.ID || back.Card != r.Card || len(back.Cases) != 2 || !*back.Cases[0].StoredResultMatch {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if Hash(raw) == Hash([]byte(strings.Replace(string(raw), `"executions": 2`, `"executions": 1`, 1))) {
		t.Fatal("an edit must change the hash")
	}
	md := r.Markdown(Hash(raw))
	for _, want := range []string{"crm.task.create — FAIL", "version 3, sha256 abc", "| 12 | a resend | fail |", "DUPLICATE EXECUTION", Hash(raw)} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
	if _, err := Parse([]byte(`{"hello": 1}`)); err == nil {
		t.Fatal("a file that is no receipt must be refused")
	}
}

func TestOverall(t *testing.T) {
	cs := func(vs ...string) []CaseResult {
		var out []CaseResult
		for _, v := range vs {
			out = append(out, CaseResult{Verdict: v})
		}
		return out
	}
	for _, tc := range []struct {
		cases []CaseResult
		want  string
	}{
		{cs(VerdictPass, VerdictNotApplicable), VerdictPass},
		{cs(VerdictPass, VerdictSkipped), VerdictIncomplete},
		{cs(VerdictSkipped, VerdictFail), VerdictFail},
	} {
		if got := overall(tc.cases); got != tc.want {
			t.Fatalf("%v: got %s, want %s", tc.cases, got, tc.want)
		}
	}
}

func TestRefuse(t *testing.T) {
	for _, adapter := range []string{"", "live", "noop", "Sandbox"} {
		c := Card{Name: "x"}
		c.Drill.Adapter = adapter
		if err := Refuse(c); !errors.Is(err, ErrNotSandbox) {
			t.Fatalf("adapter %q must be refused, got %v", adapter, err)
		}
	}
	c := Card{Name: "x"}
	c.Drill.Adapter = "sandbox"
	if err := Refuse(c); err != nil {
		t.Fatal(err)
	}
}
