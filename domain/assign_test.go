package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestAssign_keepsThePerson: an assignment records the person as their
// identity provider names them, (issuer, subject), beside the display
// identity; the audit event says which person it went from and to; and
// "assigned to me" follows the person, not the email.
func TestAssign_keepsThePerson(t *testing.T) {
	op := fixture(domain.UnknownOutcome)
	ch := decideOK(t, op, domain.Assign{To: bob.Person(), Reason: "on call"}, newEnv(testCard(), t0, alice))
	n := ch.Op
	if n.Assignee != "bob@example.com" || n.AssigneeIssuer != bob.Issuer || n.AssigneeSubject != bob.Subject {
		t.Fatalf("assigned to %q %q %q", n.Assignee, n.AssigneeIssuer, n.AssigneeSubject)
	}

	// Bob's email changes: still Bob's item. Someone else who signs in with
	// Bob's old email, at another provider, is not Bob.
	renamed := bob
	renamed.Email = "robert@example.com"
	impostor := bob
	impostor.Issuer = "https://other.example.com"
	if !n.AssignedTo(renamed) || n.AssignedTo(impostor) || n.AssignedTo(alice) {
		t.Fatalf("AssignedTo: renamed %v impostor %v alice %v", n.AssignedTo(renamed), n.AssignedTo(impostor), n.AssignedTo(alice))
	}
	// An assignment recorded before issuer and subject were kept matches
	// on the identity, in any case.
	legacy := op
	legacy.Assignee = "Bob@Example.com"
	if !legacy.AssignedTo(bob) || legacy.AssignedTo(alice) || op.AssignedTo(bob) {
		t.Fatal("legacy assignment: matched the wrong person")
	}

	ch = decideOK(t, n, domain.Assign{To: carol.Person(), Reason: "handover"}, newEnv(testCard(), t0, bob))
	var d map[string]string
	if err := json.Unmarshal(ch.Events[0].Detail, &d); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"from": "bob@example.com", "from_issuer": bob.Issuer, "from_subject": bob.Subject,
		"to": "carol@example.com", "to_issuer": carol.Issuer, "to_subject": carol.Subject}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("detail %s = %q, want %q (%s)", k, d[k], v, ch.Events[0].Detail)
		}
	}
	ch = decideOK(t, ch.Op, domain.Assign{Reason: "back to the pool"}, newEnv(testCard(), t0, carol))
	if n := ch.Op; n.Assignee != "" || n.AssigneeIssuer != "" || n.AssigneeSubject != "" {
		t.Fatalf("unassigned: %q %q %q", n.Assignee, n.AssigneeIssuer, n.AssigneeSubject)
	}
}
