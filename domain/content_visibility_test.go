package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestDecide_ContentOnlyDecidedByThoseWhoMayReadIt: with content_visible_to
// above a person's role, they may neither revise the content nor approve or
// reject a version of it — they would be deciding on what they cannot see.
// Those who may read it decide as usual.
func TestDecide_ContentOnlyDecidedByThoseWhoMayReadIt(t *testing.T) {
	card := testCard()
	card.ContentVisibleTo = domain.RoleAdmin
	awaiting := fixture(domain.AwaitingApproval)
	failed := fixture(domain.FailedTerminal)
	revise := domain.Revise{Content: json.RawMessage(`{"owner":"u_10"}`), Reason: "owner left", ExpectedVersion: failed.Version}
	approve := domain.Approve{ContentVersion: awaiting.ContentVersion, Reason: "fine", ExpectedVersion: awaiting.Version}
	reject := domain.Reject{ContentVersion: awaiting.ContentVersion, Reason: "no", ExpectedVersion: awaiting.Version}
	for _, c := range []struct {
		name  string
		op    domain.Operation
		cmd   domain.Command
		actor domain.Actor
		want  domain.Code // "" when allowed
	}{
		{"operator revises unseen content", failed, revise, alice, domain.EForbidden},
		{"approver approves unseen content", awaiting, approve, bob, domain.EForbidden},
		{"approver rejects unseen content", awaiting, reject, bob, domain.EForbidden},
		{"admin revises", failed, revise, dave, ""},
		{"admin approves", awaiting, approve, dave, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := domain.Decide(c.op, c.cmd, newEnv(card, t0, c.actor))
			if (c.want == "" && err != nil) || (c.want != "" && domain.ErrorCode(err) != c.want) {
				t.Fatalf("err = %v, want code %q", err, c.want)
			}
		})
	}
}
