package notify_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/notify"
)

func verified(secret string, r *http.Request, body []byte) bool {
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	ts, err := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false // missing or stale: refuse replays
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.%s", r.Header.Get("webhook-id"), ts, body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(r.Header.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

// TestReadmeReceiver: the receiver the notifications guide shows, copied here verbatim
// (the test checks the copy), accepts a signed delivery and refuses a
// tampered one.
func TestReadmeReceiver(t *testing.T) {
	readme, err := os.ReadFile("../docs/guides/notifications.md")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(self), "func verified(")
	end := strings.Index(string(self), "\n}\n") + 3
	if start < 0 || !strings.Contains(string(readme), string(self[start:end])) {
		t.Fatal("the guide's receiver differs from the one tested here")
	}
	body := []byte(`{"a":1}`)
	ts := time.Now().Unix()
	sig, _ := notify.Sign(secret, "msg_1", ts, body)
	r, _ := http.NewRequest("POST", "/", nil)
	r.Header.Set("webhook-id", "msg_1")
	r.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	r.Header.Set("webhook-signature", sig)
	if !verified(secret, r, body) {
		t.Fatal("a signed delivery was refused")
	}
	if verified(secret, r, []byte(`{"a":2}`)) {
		t.Fatal("a tampered body was accepted")
	}
}
