// Package notify delivers the outbox: it turns a notification into an HTTP
// request — a Standard Webhooks message or a Slack Block Kit message —
// signs it, sends it through a client that refuses private destinations at
// connect time and follows no redirect, and reports what it saw. Whether to
// retry is decided in domain (JudgeDelivery); the loop is in reconcile.
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/opshandoff/handoff/domain"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Sign is the Standard Webhooks signature of a message: "v1," and the
// base64 HMAC-SHA256 of "id.timestamp.body" keyed with the secret, which is
// "whsec_" and base64 (a secret without the prefix is used as raw bytes).
func Sign(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, timestamp)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// secretKey is the HMAC key of a secret.
func secretKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		if secret == "" {
			return nil, errors.New("the secret is empty")
		}
		return []byte(secret), nil
	}
	k, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, fmt.Errorf("the secret after whsec_ is not base64: %w", err)
	}
	if len(k) == 0 {
		return nil, errors.New("the secret after whsec_ is empty")
	}
	return k, nil
}

// CheckSecret reports why a secret cannot sign, nil when it can: checked
// at start-up, so a malformed secret does not wait for the first delivery.
func CheckSecret(secret string) error {
	_, err := secretKey(secret)
	return err
}

// Message is the Standard Webhooks body: the type, when it happened, and the
// operation summary.
type Message struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      Summary   `json:"data"`
}

// Summary is the operation as a webhook's data carries it: the summary's
// JSON (domain.NotificationSummary), with desk_url and an incident's
// headline filled in when it is sent.
type Summary = domain.NotificationSummary

// Incident is the incident an incident's notice tells of.
type Incident = domain.NotifiedIncident

// LastError is the operation's last error in a webhook's data.
type LastError = domain.NotifiedError

// summaryOf is the summary with its incident's headline; the outbox's
// summary is left as it is.
func summaryOf(s domain.NotificationSummary) Summary {
	if in := s.Incident; in != nil {
		with := *in
		with.Headline = domain.GrowthWords(*in)
		s.Incident = &with
	}
	return s
}

// Body renders the notification for its destination's format. deskBase is
// the public URL of the desk ("" leaves desk_url out).
func Body(n domain.Notification, deskBase string) ([]byte, error) {
	if n.Unreadable != nil {
		return nil, fmt.Errorf("notification %s: unreadable summary: %w", n.ID, n.Unreadable)
	}
	s := summaryOf(n.Summary)
	if deskBase != "" {
		s.DeskURL = strings.TrimRight(deskBase, "/") + s.DeskPath
	}
	if n.Destination.Format == domain.FormatSlack {
		return json.Marshal(slackMessage(n.Type, s))
	}
	return json.Marshal(Message{Type: n.Type, Timestamp: n.CreatedAt.UTC(), Data: s})
}

var headlines = map[string]string{
	domain.NotifyHandedOff:         "handed to the desk",
	domain.NotifyApprovalRequested: "waits for approval",
	domain.NotifyEscalated:         "escalated: still unassigned and unresolved",
	domain.NotifyResolved:          "resolved",
}

// incidentHead is an incident notice's headline in Slack.
func incidentHead(s Summary) string {
	e := ""
	if s.LastError != nil {
		e = " " + s.LastError.Class
		if s.LastError.Code != "" {
			e += ":" + s.LastError.Code
		}
	}
	return fmt.Sprintf("Incident %s · %s%s %s", s.Provider, s.Type, e, s.Incident.Headline)
}

// slackMessage is a Slack incoming-webhook message in Block Kit: a summary,
// the reason and a button to the desk item.
func slackMessage(typ string, s Summary) map[string]any {
	head := fmt.Sprintf("%s `%s` %s", s.Type, s.Key, headlines[typ])
	if s.Incident != nil {
		head = incidentHead(s)
	}
	reason := "*Reason:* " + s.Reason
	if s.LastError != nil && s.LastError.Message != "" {
		reason += " — " + s.LastError.Message
	}
	if s.DecidedBy != "" {
		reason += "\n*By:* " + s.DecidedBy
	}
	fields := []map[string]any{
		{"type": "mrkdwn", "text": "*State:* " + s.State},
		{"type": "mrkdwn", "text": "*Namespace:* " + s.Namespace},
		{"type": "mrkdwn", "text": "*Provider:* " + s.Provider},
		{"type": "mrkdwn", "text": "*Attempts:* " + strconv.Itoa(s.Attempts)},
	}
	blocks := []map[string]any{
		{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": head}, "fields": fields},
		{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": reason}},
	}
	if s.DeskURL != "" {
		blocks = append(blocks, map[string]any{"type": "actions", "elements": []map[string]any{{
			"type": "button", "text": map[string]any{"type": "plain_text", "text": "Open in the desk"}, "url": s.DeskURL}}})
	}
	return map[string]any{"text": head, "blocks": blocks}
}

// ErrRefused is returned when a destination resolves to an address
// notifications may not reach.
var ErrRefused = errors.New("destination refused")

// Refused reports whether ip is loopback, private, link-local, unspecified,
// multicast, shared (CGNAT), reserved or a cloud metadata address — also
// when it is one wrapped in an IPv6 address that a gateway translates or
// tunnels to it (NAT64, 6to4, Teredo, IPv4-compatible and -mapped).
func Refused(ip net.IP) bool {
	if len(ip) != net.IPv4len && len(ip) != net.IPv6len {
		return true
	}
	if inner, wrapped, opaque := unwrapIPv4(ip); opaque {
		return true
	} else if wrapped {
		ip = inner
	}
	if ip4 := ip.To4(); ip4 != nil {
		ip = ip4
		switch {
		case ip4[0] == 100 && ip4[1]&0xc0 == 64, // 100.64.0.0/10, shared
			ip4[0] == 0, // 0.0.0.0/8, "this network"
			ip4[0] == 192 && ip4[1] == 0 && ip4[2] == 0, // 192.0.0.0/24, protocol assignments
			ip4[0] == 198 && ip4[1]&0xfe == 18,          // 198.18.0.0/15, benchmarking
			ip4[0] >= 240:                               // 240.0.0.0/4 reserved, and broadcast
			return true
		}
	} else if ip[0] == 0xfe && ip[1]&0xc0 == 0xc0 { // fec0::/10, the deprecated site-local
		return true
	}
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() ||
		ip.Equal(net.ParseIP("fd00:ec2::254"))
}

// unwrapIPv4 is the IPv4 address an IPv6 address carries to a gateway that
// translates or tunnels it: NAT64's well-known prefix 64:ff9b::/96, 6to4's
// 2002::/16, Teredo's 2001::/32 (the client, inverted) and the deprecated
// IPv4-compatible ::/96 (IPv4-mapped ::ffff:0:0/96 is To4's). opaque is
// true for the local-use NAT64 prefix 64:ff9b:1::/48, whose embedded
// address depends on the network's own prefix length.
func unwrapIPv4(ip net.IP) (inner net.IP, wrapped, opaque bool) {
	if len(ip) != net.IPv6len || ip.To4() != nil {
		return nil, false, false
	}
	zero := func(b []byte) bool { return !slices.ContainsFunc(b, func(x byte) bool { return x != 0 }) }
	switch {
	case ip[0] == 0x00 && ip[1] == 0x64 && ip[2] == 0xff && ip[3] == 0x9b && zero(ip[4:12]):
		return net.IP(slices.Clone(ip[12:16])), true, false
	case ip[0] == 0x00 && ip[1] == 0x64 && ip[2] == 0xff && ip[3] == 0x9b && ip[4] == 0 && ip[5] == 1:
		return nil, false, true
	case ip[0] == 0x20 && ip[1] == 0x02:
		return net.IP(slices.Clone(ip[2:6])), true, false
	case ip[0] == 0x20 && ip[1] == 0x01 && ip[2] == 0 && ip[3] == 0:
		return net.IPv4(^ip[12], ^ip[13], ^ip[14], ^ip[15]).To4(), true, false
	case zero(ip[:12]) && !zero(ip[12:14]):
		// ::a.b.c.d, leaving :: and ::1 (and ::0.0.x.y) to the checks above.
		return net.IP(slices.Clone(ip[12:16])), true, false
	}
	return nil, false, false
}

// guard is the dialer's Control: it runs on the address actually being
// connected to, after name resolution, so a DNS answer cannot swap in a
// private address after a check.
func guard(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil || Refused(ip) {
		return fmt.Errorf("%w: %s is a private, loopback, link-local or metadata address", ErrRefused, host)
	}
	return nil
}

// Sender delivers one notification per call.
type Sender struct {
	// DeskBase is the desk's public URL, for desk_url and Slack's button.
	DeskBase string
	// Timeout bounds one attempt, connect to last byte (default 10 s).
	Timeout time.Duration
	// AllowPrivate lets notifications reach private and loopback addresses
	// (HANDOFF_NOTIFY_ALLOW_PRIVATE).
	AllowPrivate bool
	// Getenv reads destination secrets (default: none).
	Getenv func(string) string
	// Now stamps webhook-timestamp (default time.Now).
	Now func() time.Time

	client *http.Client
}

// NewSender builds a sender with its own HTTP client.
func NewSender(s Sender) *Sender {
	if s.Timeout <= 0 {
		s.Timeout = 10 * time.Second
	}
	if s.Getenv == nil {
		s.Getenv = func(string) string { return "" }
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	d := &net.Dialer{Timeout: s.Timeout}
	if !s.AllowPrivate {
		d.Control = guard
	}
	tr := &http.Transport{DialContext: d.DialContext, Proxy: nil, ForceAttemptHTTP2: true,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: s.Timeout,
		ResponseHeaderTimeout: s.Timeout}
	s.client = &http.Client{Transport: tr, Timeout: s.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &s
}

// tracer makes a span per delivery (a no-op unless tracing is configured).
var tracer = otel.Tracer("github.com/opshandoff/handoff/notify")

// maxResponse is how much of an answer an attempt records.
const maxResponse = 1024

// Send makes one delivery attempt and reports what happened; it never
// retries by itself.
func (s *Sender) Send(ctx context.Context, n domain.Notification) (r domain.DeliveryResult) {
	// The span names the notification, never the URL: a Slack webhook's
	// URL is its secret.
	ctx, span := tracer.Start(ctx, "notify.deliver", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("handoff.notification_id", n.ID)))
	defer func() {
		span.SetAttributes(attribute.Int("http.response.status_code", r.StatusCode))
		span.End()
	}()
	body, err := Body(n, s.DeskBase)
	if err != nil {
		return domain.DeliveryResult{Err: err.Error(), Refused: true}
	}
	ts := s.Now().Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.Destination.URL, bytes.NewReader(body))
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return domain.DeliveryResult{Err: fmt.Sprintf("bad destination URL %q", n.Destination.URL), Refused: true}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Handoff-Webhooks/1")
	req.Header.Set("webhook-id", n.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	if env := n.Destination.SecretEnv; env != "" {
		// A destination that names a secret is never sent unsigned: a
		// receiver could not tell it from a forger's.
		secret := s.Getenv(env)
		if secret == "" {
			return domain.DeliveryResult{Err: env + " is not set: not sending unsigned", Refused: true}
		}
		sig, err := Sign(secret, n.ID, ts, body)
		if err != nil {
			return domain.DeliveryResult{Err: env + ": " + err.Error(), Refused: true}
		}
		req.Header.Set("webhook-signature", sig)
	}
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		r = domain.DeliveryResult{Latency: time.Since(start), Err: err.Error()}
		r.Refused = errors.Is(err, ErrRefused)
		return r
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	r = domain.DeliveryResult{StatusCode: resp.StatusCode, Latency: time.Since(start), Response: string(head)}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		r.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), s.Now())
	}
	return r
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
