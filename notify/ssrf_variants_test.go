package notify_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestSSRFGuard_Variants: the spellings an attacker tries for an internal
// address — the loopback receiver by name, mapped IPv6, the unspecified
// address, numeric and shortened forms, user-info tricks, TLS — and the
// private, shared, link-local, multicast and metadata ranges. None reaches
// a listener; the count is logged.
func TestSSRFGuard_Variants(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	variants := []string{
		"http://127.0.0.1" + port + "/", "http://localhost" + port + "/", "http://LOCALHOST" + port + "/",
		"http://[::1]" + port + "/", "http://[::ffff:127.0.0.1]" + port + "/", "http://[0:0:0:0:0:ffff:7f00:1]" + port + "/",
		"http://0.0.0.0" + port + "/", "http://[::]" + port + "/", "http://0" + port + "/",
		"http://127.1" + port + "/", "http://2130706433" + port + "/", "http://0x7f000001" + port + "/",
		"http://017700000001" + port + "/", "http://127.000.000.001" + port + "/",
		"http://user@127.0.0.1" + port + "/", "http://example.com@127.0.0.1" + port + "/",
		"https://127.0.0.1" + port + "/", "http://127.0.0.2" + port + "/",
		"http://10.0.0.1/", "http://172.16.0.1/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/",
		"http://[fd00:ec2::254]/", "http://100.64.0.1/", "http://[fe80::1]/", "http://[fc00::1]/",
		"http://224.0.0.1/", "http://[::ffff:169.254.169.254]/",
	}
	guarded, unresolved := 0, 0
	for _, u := range variants {
		res := sender(false).Send(context.Background(), note(u, domain.FormatStandard))
		switch {
		case res.StatusCode != 0 || res.Err == "":
			t.Errorf("%s: %+v, want no delivery", u, res)
		case res.Refused:
			guarded++
		default:
			unresolved++ // not an address, and no name server knows it
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the loopback listener", n)
	}
	t.Logf("%d SSRF variants: %d refused by the guard, %d never resolved, %d reached a listener",
		len(variants), guarded, unresolved, hits.Load())
}
