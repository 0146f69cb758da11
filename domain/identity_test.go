package domain

import "testing"

// TestIdentityHash: two contents equal on the named fields share an
// identity whatever else differs, however their JSON is written; a content
// that lacks a named field, and a card without the line, compare the
// whole content (the fingerprint); the type is part of the identity.
func TestIdentityHash(t *testing.T) {
	canon := func(s string) []byte {
		c, err := CanonicalObject([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ptrs := []string{"/order", "/amount", "/customer/id", "/a~1b"}
	base := IdentityHash("pay", canon(`{"order":"o1","amount":1200,"customer":{"id":"c1","name":"Ann"},"a/b":true,"note":"x"}`), ptrs)
	for _, same := range []string{
		`{"note":"reworded","a/b":true,"customer":{"name":"Bo","id":"c1"},"amount":1.2e3,"order":"o1"}`,
		`{"order":"o1","amount":1200.0,"customer":{"id":"c1"},"a/b":true}`,
	} {
		if got := IdentityHash("pay", canon(same), ptrs); got != base {
			t.Errorf("%s: identity %s, want %s", same, got, base)
		}
	}
	for _, other := range []string{
		`{"order":"o1","amount":1300,"customer":{"id":"c1"},"a/b":true}`,
		`{"order":"o1","amount":"1200","customer":{"id":"c1"},"a/b":true}`,
		`{"order":"o1","amount":1200,"customer":{"id":"c2"},"a/b":true}`,
		`{"order":"o1","amount":1200,"customer":{"id":"c1"},"a/b":false}`,
	} {
		if got := IdentityHash("pay", canon(other), ptrs); got == base {
			t.Errorf("%s shares the identity", other)
		}
	}
	if IdentityHash("refund", canon(`{"order":"o1","amount":1200,"customer":{"id":"c1"},"a/b":true}`), ptrs) == base {
		t.Error("another type shares the identity")
	}
	lacking := canon(`{"order":"o1","customer":{"id":"c1"},"a/b":true}`)
	if got := IdentityHash("pay", lacking, ptrs); got != Fingerprint("pay", lacking) {
		t.Errorf("a content without a named field: %s, want its fingerprint", got)
	}
	whole := canon(`{"order":"o1"}`)
	if got := IdentityHash("pay", whole, nil); got != Fingerprint("pay", whole) {
		t.Errorf("without identity: %s, want the fingerprint", got)
	}
}

// TestCard_identityAndEchoRules: what Validate refuses in the identity and
// echo lines, by field.
func TestCard_identityAndEchoRules(t *testing.T) {
	c := Card{Identity: []string{"/order", "order", "/order", "/a~2"}, Echo: &Echo{Within: -1}, TwinsAllowed: true}
	got := map[string]bool{}
	for _, e := range validateIdentity(c) {
		got[e.Field] = true
	}
	for _, f := range []string{"identity[1]", "identity[2]", "identity[3]", "echo.source", "echo.within", "echo"} {
		if !got[f] {
			t.Errorf("no complaint about %s: %v", f, got)
		}
	}
	if got["identity[0]"] {
		t.Errorf("a good pointer refused: %v", got)
	}
	ok := Card{Identity: []string{"/order"}, Echo: &Echo{Source: "crm-webhook", Within: 600e9}}
	if errs := validateIdentity(ok); len(errs) != 0 {
		t.Errorf("a good card refused: %v", errs)
	}
}
