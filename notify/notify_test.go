package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/notify"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// verify is a receiver's check written from the Standard Webhooks
// specification, sharing no code with the signer: the key is the base64
// after "whsec_", the signed content "id.timestamp.body", and the header a
// space-separated list of "v1,<base64 HMAC-SHA256>".
func verify(t *testing.T, h http.Header, body []byte) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	if id == "" || ts == "" {
		t.Fatalf("missing webhook-id or webhook-timestamp: %v", h)
	}
	if _, err := strconv.ParseInt(ts, 10, 64); err != nil {
		t.Fatalf("webhook-timestamp %q is not integer seconds", ts)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "." + string(body)))
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	for _, sig := range strings.Split(h.Get("webhook-signature"), " ") {
		if v, ok := strings.CutPrefix(sig, "v1,"); ok && hmac.Equal([]byte(v), []byte(want)) {
			return
		}
	}
	t.Fatalf("webhook-signature %q does not verify", h.Get("webhook-signature"))
}

func note(url, format string) domain.Notification {
	s := domain.NotificationSummary{ID: "op_1", Key: "evt_1:task", Type: "crm.task.create", Namespace: "shop",
		State: "unknown_outcome", Reason: "lease_expired", Attempts: 2, Provider: "acme-crm", ProviderKey: "pk",
		DeskPath: domain.DeskPath("op_1"), LastError: &domain.NotifiedError{Class: "timeout", Code: "lease_expired", Message: "gone"}}
	return domain.Notification{ID: "msg_1", OperationID: "op_1", Type: domain.NotifyHandedOff, Summary: s,
		Destination: domain.Destination{URL: url, SecretEnv: "HOOK_SECRET", Format: format}, CreatedAt: time.Unix(1700000000, 0)}
}

func sender(allowPrivate bool) *notify.Sender {
	return notify.NewSender(notify.Sender{DeskBase: "https://handoff.example.com/", AllowPrivate: allowPrivate, Timeout: 5 * time.Second,
		Getenv: func(k string) string {
			if k == "HOOK_SECRET" {
				return secret
			}
			return ""
		}})
}

// TestStandardWebhook: the receiver gets the Standard Webhooks headers, a
// signature an independent verifier accepts, and the summary with the
// absolute desk URL.
func TestStandardWebhook(t *testing.T) {
	var got struct {
		h    http.Header
		body []byte
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.h, got.body = r.Header.Clone(), must(io.ReadAll(r.Body))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	res := sender(true).Send(context.Background(), note(srv.URL, domain.FormatStandard))
	if res.StatusCode != 204 || res.Err != "" {
		t.Fatalf("result: %+v", res)
	}
	verify(t, got.h, got.body)
	if got.h.Get("webhook-id") != "msg_1" {
		t.Fatalf("webhook-id %q, want the notification's id", got.h.Get("webhook-id"))
	}
	var m notify.Message
	if err := json.Unmarshal(got.body, &m); err != nil {
		t.Fatal(err)
	}
	if m.Type != domain.NotifyHandedOff || m.Data.DeskURL != "https://handoff.example.com/desk/operations/op_1" ||
		m.Data.Reason != "lease_expired" || m.Data.Key != "evt_1:task" {
		t.Fatalf("body: %s", got.body)
	}
}

// TestSlackMessage: a summary, the reason and a button to the desk item.
func TestSlackMessage(t *testing.T) {
	body, err := notify.Body(note("https://hooks.slack.com/x", domain.FormatSlack), "https://handoff.example.com")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type string `json:"type"`
			Text struct {
				Text string `json:"text"`
			} `json:"text"`
			Elements []struct {
				Type string `json:"type"`
				URL  string `json:"url"`
			} `json:"elements"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, "evt_1:task") || len(m.Blocks) != 3 || !strings.Contains(m.Blocks[1].Text.Text, "lease_expired") ||
		m.Blocks[2].Type != "actions" || m.Blocks[2].Elements[0].URL != "https://handoff.example.com/desk/operations/op_1" {
		t.Fatalf("slack message: %s", body)
	}
}

// TestSSRFGuard: private, metadata and loopback destinations — by address
// or by a name that resolves to one — are refused before connecting, unless
// allowed.
func TestSSRFGuard(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for _, u := range []string{"http://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data", "http://localhost" + port + "/",
		srv.URL, "http://[::1]" + port + "/", "http://192.168.1.1/"} {
		res := sender(false).Send(context.Background(), note(u, domain.FormatStandard))
		if !res.Refused || res.StatusCode != 0 || !strings.Contains(res.Err, "refused") {
			t.Errorf("%s: %+v, want refused", u, res)
		}
	}
	if res := sender(true).Send(context.Background(), note("http://localhost"+port+"/", domain.FormatStandard)); res.StatusCode != 200 {
		t.Errorf("allowed loopback: %+v", res)
	}
	for _, ip := range []string{"8.8.8.8", "2606:4700::1", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8",
		"2001:0:4136:e378:8000:63bf:f7f7:f7f7"} {
		if notify.Refused(parseIP(ip)) {
			t.Errorf("%s refused", ip)
		}
	}
}

// TestSSRFGuard_WrappedIPv4: a private or metadata IPv4 address inside an
// IPv6 address that a gateway translates or tunnels — NAT64, 6to4, Teredo,
// IPv4-compatible and -mapped — is refused like the address itself, as are
// reserved ranges.
func TestSSRFGuard_WrappedIPv4(t *testing.T) {
	for _, ip := range []string{
		"64:ff9b::a9fe:a9fe", "64:ff9b::169.254.169.254", "64:ff9b::7f00:1", "64:ff9b::10.0.0.1", "64:ff9b:1::a00:1",
		"2002:a9fe:a9fe::", "2002:7f00:1::1", "2002:c0a8:101::1",
		"2001:0:4136:e378:8000:63bf:f5ff:fffe", // Teredo, client 10.0.0.1
		"::10.0.0.1", "::169.254.169.254", "::ffff:127.0.0.1", "::ffff:169.254.169.254",
		"198.18.0.1", "192.0.0.8", "240.0.0.1", "255.255.255.255", "fec0::1", "::", "::1",
	} {
		if !notify.Refused(parseIP(ip)) {
			t.Errorf("%s is not refused", ip)
		}
	}
}

// TestNoRedirect: a 3xx is the answer, not a hop to somewhere else.
func TestNoRedirect(t *testing.T) {
	followed := false
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed = true }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusFound)
	}))
	defer srv.Close()
	res := sender(true).Send(context.Background(), note(srv.URL, domain.FormatStandard))
	if res.StatusCode != http.StatusFound || followed {
		t.Fatalf("redirect followed: %+v %v", res, followed)
	}
}

// TestRecordsTheAnswer: status, latency, the first 1 KB, and Retry-After.
func TestRecordsTheAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, strings.Repeat("x", 5000))
	}))
	defer srv.Close()
	res := sender(true).Send(context.Background(), note(srv.URL, domain.FormatStandard))
	if res.StatusCode != 429 || len(res.Response) != 1024 || res.RetryAfter != 5*time.Second || res.Latency <= 0 {
		t.Fatalf("result: status %d, %d bytes, retry after %v, latency %v", res.StatusCode, len(res.Response), res.RetryAfter, res.Latency)
	}
}

// TestTimeout: a receiver that does not answer within the timeout is a
// failed attempt with no status, to be retried.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	s := notify.NewSender(notify.Sender{AllowPrivate: true, Timeout: 50 * time.Millisecond, Getenv: func(string) string { return secret }})
	res := s.Send(context.Background(), note(srv.URL, domain.FormatStandard))
	if res.StatusCode != 0 || res.Err == "" || res.Refused {
		t.Fatalf("result: %+v", res)
	}
	if outcome, _ := domain.JudgeDelivery(res, 1, time.Now(), time.Now(), domain.DefaultDeliveryPolicy, func() float64 { return 0 }); outcome != domain.DeliveryRetry {
		t.Fatalf("a timeout is %s, want retry", outcome)
	}
}

func TestSignRejectsABadSecret(t *testing.T) {
	if _, err := notify.Sign("whsec_!!!", "id", 1, nil); err == nil {
		t.Fatal("a secret that is not base64 was accepted")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func parseIP(s string) net.IP { return net.ParseIP(s) }

// TestSend_NeverUnsignedWhenASecretIsNamed: a destination that names a
// secret whose variable is empty is refused, not sent without a signature.
func TestSend_NeverUnsignedWhenASecretIsNamed(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ }))
	defer srv.Close()
	s := notify.NewSender(notify.Sender{AllowPrivate: true, Getenv: func(string) string { return "" }})
	res := s.Send(context.Background(), note(srv.URL, domain.FormatStandard))
	if !res.Refused || !strings.Contains(res.Err, "HOOK_SECRET") || calls != 0 {
		t.Fatalf("result %+v, %d calls", res, calls)
	}
}

func TestCheckSecret(t *testing.T) {
	for secret, ok := range map[string]bool{"whsec_c2VjcmV0": true, "raw-bytes": true, "whsec_!!!": false, "whsec_": false, "": false} {
		if err := notify.CheckSecret(secret); (err == nil) != ok {
			t.Errorf("CheckSecret(%q) = %v", secret, err)
		}
	}
}
