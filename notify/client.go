package notify

import (
	"net"
	"net/http"
	"time"
)

// GuardedClient is an HTTP client with the notifications' rules, for other
// outgoing requests Handoff makes on a card's behalf (provider lookups):
// unless allowPrivate, a connection to a private, loopback, link-local or
// metadata address is refused at connect time, after name resolution; no
// proxy; no redirect is followed (the 3xx is the answer).
func GuardedClient(timeout time.Duration, allowPrivate bool) *http.Client {
	d := GuardedDialer(timeout, allowPrivate)
	tr := &http.Transport{DialContext: d.DialContext, Proxy: nil, ForceAttemptHTTP2: true,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: timeout,
		ResponseHeaderTimeout: timeout}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// GuardedDialer is the guarded client's dialer, for a caller that builds
// its own transport (the execute adapter, which must know whether a
// connection was made before it sends a byte): unless allowPrivate, a
// connection to a private, loopback, link-local or metadata address is
// refused with ErrRefused, after name resolution.
func GuardedDialer(timeout time.Duration, allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Timeout: timeout}
	if !allowPrivate {
		d.Control = guard
	}
	return d
}
