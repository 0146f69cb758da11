package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/lookup"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store"
)

// The embedded Handoff looks up, itself, the types whose cards have a
// lookup_adapter — against the drill's sandbox, never the real provider.
// Each such card's adapter is replaced by one of the same authority that
// reads the sandbox's provider-shaped list (GET /v1/records?external_id=),
// through a loopback router that sends each type's lookups to the sandbox
// the drill started for it.

// Drill speed for lookups.
const (
	drillLookupWindow  = 2 * time.Second
	drillLookupBackoff = 100 * time.Millisecond
)

// drillLookups routes the embedded Handoff's lookups to the drill's sandboxes.
type drillLookups struct {
	mu        sync.Mutex
	sandboxes map[string]*url.URL // by type
	base      string
	types     map[string]bool // looked up by Handoff
	executes  map[string]bool // called by Handoff
	ln        net.Listener
}

// Close stops the router.
func (dl *drillLookups) Close() {
	if dl.ln != nil {
		_ = dl.ln.Close()
	}
}

// drillLookupCards gives each card with an adapter (whose drill sandbox
// answers lookups) the sandbox-shaped adapter, and starts the router.
func drillLookupCards(cards domain.Cards) (domain.Cards, *drillLookups, []string, error) {
	dl := &drillLookups{sandboxes: map[string]*url.URL{}, types: map[string]bool{}}
	out := domain.Cards{}
	for name, c := range cards {
		if c.LookupAdapter != nil && c.DrillLookup() != "none" {
			dl.types[name] = true
		}
		out[name] = c
	}
	if len(dl.types) == 0 {
		return out, dl, nil, nil
	}
	if err := dl.listen(); err != nil {
		return nil, nil, nil, err
	}
	for name := range dl.types {
		c := out[name]
		window := min(c.LookupAdapter.Window, drillLookupWindow)
		if c.LookupAdapter.Window > 0 {
			window = max(window, 4*drillLookupBackoff)
		}
		c.LookupAdapter = &domain.LookupAdapter{Method: "GET", URL: dl.base + "/" + url.PathEscape(name) + "/v1/records?external_id={provider_key}",
			Found: domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", Key: "/data/0/external_id", WhenNonempty: "/data"}, NotFoundStatus: []int{404}, Window: window}
		out[name] = c
	}
	note := fmt.Sprintf("embedded Handoff looks up the types with a lookup_adapter itself, against the sandbox's provider-shaped list "+
		"(GET /v1/records?external_id=), window at most %s, backoff %s, no auth header: the card's own request is never sent", drillLookupWindow, drillLookupBackoff)
	return out, dl, []string{note}, nil
}

// Route is drill.Options.LookupRoute: it points typ's lookups at its sandbox.
func (dl *drillLookups) Route(typ, sandboxURL string) bool {
	if !dl.types[typ] {
		return false
	}
	return dl.route(typ, sandboxURL)
}

// RouteExecute is drill.Options.ExecuteRoute: it points typ's calls at
// its sandbox.
func (dl *drillLookups) RouteExecute(typ, sandboxURL string) bool {
	if !dl.executes[typ] {
		return false
	}
	return dl.route(typ, sandboxURL)
}

func (dl *drillLookups) route(typ, sandboxURL string) bool {
	u, err := url.Parse(sandboxURL)
	if err != nil {
		return false
	}
	dl.mu.Lock()
	dl.sandboxes[typ] = u
	dl.mu.Unlock()
	return true
}

func (dl *drillLookups) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	typ, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	typ, _ = url.PathUnescape(typ)
	dl.mu.Lock()
	target := dl.sandboxes[typ]
	dl.mu.Unlock()
	if target == nil {
		http.Error(w, "no sandbox for this type", http.StatusBadGateway)
		return
	}
	r.URL.Path = "/" + rest
	httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
}

// run looks the routed types up until ctx ends.
func (dl *drillLookups) run(ctx context.Context, ledger *domain.Ledger, s *store.Store) {
	if len(dl.types) == 0 {
		return
	}
	l := &reconcile.Lookuper{Ledger: ledger.Upkeep, Store: s, Looker: lookup.New(true, nil), Types: ledger.Cards.LookupTypes(),
		Interval: drillLookupBackoff, Backoff: drillLookupBackoff, Log: quiet}
	go l.Run(ctx)
}
