package domain_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestFourEyes_FollowPerson: the person who revised content may not
// approve or reject it, recognised by (issuer, subject) even when their
// identity provider has since changed their email or no longer vouches
// for it; a different subject with the reviser's verified email is
// refused too (the cautious choice); anyone else may decide.
func TestFourEyes_FollowPerson(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	const idp = "https://idp.example.com"
	reviser := domain.Actor{Kind: domain.ActorPerson, Issuer: idp, Subject: "u-1", Email: "rita@example.com", Role: domain.RoleApprover}

	revised := func(key string) domain.Operation {
		t.Helper()
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "coupon.issue", Content: json.RawMessage(`{"a":"` + key + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		op, err := l.Desk.Revise(ctx, reviser, res.Operation.ID, domain.Revise{Content: json.RawMessage(`{"a":2}`), Reason: "fix"})
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	sameEmailChanged, sameUnverified := reviser, reviser
	sameEmailChanged.Email = "rita.new@example.com"
	sameUnverified.Email = ""
	otherWithEmail := reviser
	otherWithEmail.Subject = "u-2"
	for name, who := range map[string]domain.Actor{"email changed": sameEmailChanged, "email unverified": sameUnverified,
		"another subject with the reviser's email": otherWithEmail} {
		op := revised("k-" + who.Subject + domain.SHA256Hex([]byte(who.Email))[:12])
		if _, err := l.Desk.Approve(ctx, who, op.ID, domain.Approve{ContentVersion: 2, Reason: "ok"}); domain.ErrorCode(err) != domain.EForbidden {
			t.Errorf("%s: approve was %v, want forbidden", name, err)
		}
		if _, err := l.Desk.Reject(ctx, who, op.ID, domain.Reject{ContentVersion: 2, Reason: "no"}); domain.ErrorCode(err) != domain.EForbidden {
			t.Errorf("%s: reject was %v, want forbidden", name, err)
		}
	}
	op := revised("k-other")
	other := domain.Actor{Kind: domain.ActorPerson, Issuer: idp, Subject: "u-3", Email: "otto@example.com", Role: domain.RoleApprover}
	if got, err := l.Desk.Approve(ctx, other, op.ID, domain.Approve{ContentVersion: 2, Reason: "ok"}); err != nil || got.State != domain.Received {
		t.Fatalf("another person's approval: %v %v", got.State, err)
	}
	vs, err := s.ContentVersions(ctx, op.ID)
	if err != nil || len(vs) != 2 || vs[1].CreatedByIssuer != idp || vs[1].CreatedBySubject != "u-1" {
		t.Fatalf("the revision does not record its reviser: %+v %v", vs, err)
	}
}
