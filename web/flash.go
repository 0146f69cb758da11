package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/pages"
)

// A decision that was not recorded — refused by the Ledger, or posted after
// the session expired — leaves a flash: a short-lived cookie holding why,
// and what the person typed. The browser is redirected (303) to the page
// the person came from, which shows the flash once and forgets it. So the
// address bar never rests on a POST target, a reload never posts again,
// and sign-in in between loses nothing.

// flash is what the next page shows about a decision that was not recorded.
type flash struct {
	Op      string        `json:"op"`     // the operation the decision was about
	Key     string        `json:"key"`    // its key, for a notice away from its page
	Status  int           `json:"status"` // the status the refusal would have had
	Problem pages.Problem `json:"problem"`
	Draft   pages.Draft   `json:"draft"`
	Take    bool          `json:"take,omitempty"` // a stale Take, shown by the list it came from
	Done    string        `json:"done,omitempty"` // a decision recorded: the success banner
	// For is the person who typed the draft (flashOwner); the flash is
	// shown to nobody else who signs in on that browser. "" when the
	// decision came without any session to tell.
	For string `json:"for,omitempty"`
}

// flashOwner names a person for a flash: their issuer and subject, which
// no other person shares, or their identity without a subject.
func flashOwner(p domain.Actor) string {
	if p.Kind != domain.ActorPerson {
		return ""
	}
	if p.Subject == "" {
		return "id:" + p.Identity()
	}
	return p.Issuer + " " + p.Subject
}

// flashMaxAge is how long a flash waits: long enough to sign in again.
const flashMaxAge = 15 * time.Minute

// maxFlash keeps the cookie under the 4 KB browsers accept with its
// attributes; a larger draft is shown at the POST's address instead.
const maxFlash = 3800

func (si *signIn) flashCookie() string {
	if si.secure {
		return "__Host-handoff_flash"
	}
	return "handoff_flash"
}

// The flash is signed: a cookie for the host can be set by others than
// this server (a sibling subdomain, a script on plain http), and an
// unsigned flash would let them show a banner of their choosing — "Retried
// ✓" — on the desk. The value is the JSON, base64url, a dot and the
// HMAC-SHA256 of the cookie's name and that JSON under the server key.

// signFlash is the cookie value of payload, a flash as base64url JSON.
func (si *signIn) signFlash(payload string) string {
	return payload + "." + base64.RawURLEncoding.EncodeToString(si.flashMAC(payload))
}

func (si *signIn) flashMAC(payload string) []byte {
	m := hmac.New(sha256.New, si.cookieKey)
	m.Write([]byte(si.flashCookie() + "\x00" + payload))
	return m.Sum(nil)
}

// verifiedFlash is the payload of a cookie value this server signed;
// false for anything else.
func (si *signIn) verifiedFlash(v string) (string, bool) {
	payload, sig, ok := strings.Cut(v, ".")
	if !ok {
		return "", false
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	return payload, err == nil && hmac.Equal(mac, si.flashMAC(payload))
}

// setFlash stores f for the next page; false when it does not fit.
func (s *server) setFlash(c *gin.Context, f flash) bool {
	if draftBytes(f.Draft) > maxFlash {
		return false // could never fit: not worth encoding and signing
	}
	if f.For == "" {
		f.For = flashOwner(me(c))
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return false
	}
	v := s.signIn.signFlash(base64.RawURLEncoding.EncodeToString(raw))
	if len(v) > maxFlash {
		return false
	}
	s.signIn.setCookie(c, s.signIn.flashCookie(), v, flashMaxAge)
	return true
}

// takeFlash returns the flash when it is for this page and forgets it.
func (s *server) takeFlash(c *gin.Context, forPage func(flash) bool) (flash, bool) {
	if htmx(c) {
		return flash{}, false // a fragment is no page to show it on
	}
	v, err := c.Cookie(s.signIn.flashCookie())
	if err != nil || v == "" {
		return flash{}, false
	}
	payload, ok := s.signIn.verifiedFlash(v)
	if !ok {
		// Not ours: shown nowhere, and forgotten.
		s.signIn.clearCookie(c, s.signIn.flashCookie())
		return flash{}, false
	}
	var f flash
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(raw, &f) != nil || !forPage(f) {
		return flash{}, false
	}
	if f.For != "" && f.For != flashOwner(me(c)) {
		// Someone else typed it, and then someone else signed in on this
		// browser: not theirs to read, nor to submit.
		s.signIn.clearCookie(c, s.signIn.flashCookie())
		return flash{}, false
	}
	s.signIn.clearCookie(c, s.signIn.flashCookie())
	return f, true
}

// draftOf is the decision form as posted.
func draftOf(c *gin.Context) pages.Draft {
	return pages.Draft{Form: c.PostForm("form"), Reason: c.PostForm("reason"), Ref: c.PostForm("result_ref"),
		Text: c.PostForm("text"), Content: c.PostForm("content"), Assignee: c.PostForm("assignee"), Then: c.PostForm("then")}
}

// draftBytes is the length of what a person typed into the draft; its
// encoding in a flash is longer still.
func draftBytes(d pages.Draft) int {
	return len(d.Form) + len(d.Reason) + len(d.Ref) + len(d.Text) + len(d.Content) + len(d.Assignee) + len(d.Then)
}

// decisionPath matches the desk's decision forms' targets.
var decisionPath = regexp.MustCompile(`^/desk/operations/([A-Za-z0-9_]{1,64})/(resolve|assign|notes|revisions|approve|reject|contradiction)$`)

// keepExpiredDecision keeps a decision posted without a live session and
// sends the person to sign in, to come back to the operation with it.
func (s *server) keepExpiredDecision(c *gin.Context) {
	m := decisionPath.FindStringSubmatch(c.Request.URL.Path)
	if _, ok := personOf(c); ok || c.Request.Method != http.MethodPost || m == nil {
		c.Next()
		return
	}
	back := domain.DeskPath(m[1])
	var owner string
	if v, ok := c.Get(keyExpired); ok {
		if p, isActor := v.(domain.Actor); isActor {
			owner = flashOwner(p)
		}
	}
	f := flash{Op: m[1], For: owner, Status: http.StatusUnauthorized, Draft: draftOf(c), Problem: pages.Problem{Expired: true,
		Message: "Your session had expired, so nothing was recorded. You are signed in again: check what you typed below and submit it again."}}
	if !s.setFlash(c, f) {
		f.Draft = pages.Draft{}
		f.Problem.Message = "Your session had expired, so nothing was recorded, and what you typed was too long to keep. Decide again."
		s.setFlash(c, f)
	}
	target := "/auth/login?expired=1&next=" + url.QueryEscape(back)
	if c.GetHeader("HX-Request") == "true" {
		c.Header("HX-Redirect", target)
		c.AbortWithStatus(http.StatusUnauthorized)
		return
	}
	c.Redirect(http.StatusSeeOther, target)
	c.Abort()
}

// changeSentences say who changed the operation since the person loaded
// it, and when: "Ann Operator retried it 2 min ago (at 2026-05-04 10:02:11 UTC)".
func changeSentences(changes []domain.AuditEvent, now time.Time) []string {
	if len(changes) > 5 {
		changes = changes[len(changes)-5:]
	}
	out := make([]string, 0, len(changes))
	for _, e := range changes {
		out = append(out, fmt.Sprintf("%s %s %s ago (at %s).", actorLabel(e.Actor), didWhat(e), components.Age(now.Sub(e.At)),
			components.UTCText(e.At)))
	}
	return out
}

// actorLabel names who acted: a person by name and identity, a workflow
// by its token's identity, else Handoff itself.
func actorLabel(a domain.Actor) string {
	switch a.Kind {
	case domain.ActorPerson:
		if n := strings.TrimSpace(a.Name); n != "" && n != a.Identity() {
			return n + " <" + a.Identity() + ">"
		}
		return a.Identity()
	case domain.ActorWorkflow:
		return "Workflow " + a.Identity()
	}
	return "Handoff"
}

var resolvedVerbs = map[string]string{"retry": "retried it", "cancel": "cancelled it",
	"confirm_executed": "confirmed it executed", "confirm_not_executed+retry": "confirmed it not executed and retried it",
	"confirm_not_executed+cancel": "confirmed it not executed and cancelled it"}

// didWhat is an audit event as a verb phrase.
func didWhat(e domain.AuditEvent) string {
	var d struct {
		Action string `json:"action"`
		To     string `json:"to"`
	}
	_ = json.Unmarshal(e.Detail, &d)
	switch e.Action {
	case "resolved":
		if v, ok := resolvedVerbs[d.Action]; ok {
			return v
		}
		return "resolved it"
	case "assigned":
		switch d.To {
		case "":
			return "unassigned it"
		case e.Actor.Identity():
			return "took it"
		}
		return "assigned it to " + d.To
	case "noted":
		return "added a note"
	case "revised":
		return "revised its content"
	case "approved":
		return "approved its content"
	case "rejected":
		return "rejected its content"
	}
	return strings.ReplaceAll(e.Action, "_", " ") + " it"
}
