package web

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDesk_FlashIsSigned: a flash the server did not sign — forged to show
// "Retried ✓", or signed with another key — shows nothing and is
// forgotten; garbage is no server error. A replica with the same key shows
// the flash another signed.
func TestDesk_FlashIsSigned(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", false)
	page := "/desk/operations/" + op.ID

	forged, _ := json.Marshal(flash{Op: op.ID, Done: "Retried ✓"})
	payload := base64.RawURLEncoding.EncodeToString(forged)
	other := &signIn{cookieKey: []byte("another key, another server 0123")}
	for name, v := range map[string]string{
		"unsigned":         payload,
		"another key":      other.signFlash(payload),
		"signature reused": payload + "x." + strings.SplitN(d.signed(payload), ".", 2)[1],
		"empty signature":  payload + ".",
		"garbage":          "%%%.%%%",
		"dots":             "...",
	} {
		p := d.get("ada", page, "Cookie", "handoff_flash="+v).want(http.StatusOK)
		p.none("decision-recorded")
		// (A value that is no cookie value at all never reaches the check.)
		if name != "garbage" && !strings.Contains(strings.Join(p.header.Values("Set-Cookie"), ";"), "handoff_flash=;") {
			t.Errorf("%s: the refused flash was not forgotten: %v", name, p.header)
		}
	}

	// A real decision's flash, signed by one replica, shows on another
	// with the database's key.
	form := url.Values{"form": {"note"}, "text": {"called the CRM team"}}
	r := d.post("ada", page+"/notes", form).want(http.StatusSeeOther)
	var cookie string
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "handoff_flash" {
			cookie = c.Value
		}
	}
	if cookie == "" {
		t.Fatalf("the note left no flash: %v", r.header)
	}
	replica, err := newSignIn(SignIn{Sessions: noSessions{}, CookieKey: testCookieKey})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := replica.verifiedFlash(cookie); !ok || !strings.HasPrefix(cookie, p+".") {
		t.Fatalf("the replica refused %q", cookie)
	}
	d.get("ada", page, "Cookie", "handoff_flash="+cookie).want(http.StatusOK).one("decision-recorded")
	if _, ok := other.verifiedFlash(cookie); ok {
		t.Fatal("a server with another key accepted the flash")
	}
}

// noSessions is a SessionKeeper that is never asked: the replica here
// only verifies a cookie.
type noSessions struct{ SessionKeeper }

// signed is payload signed as the test desk signs it.
func (d *desk) signed(payload string) string {
	return (&signIn{cookieKey: testCookieKey}).signFlash(payload)
}
