package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/opshandoff/handoff/auth/oidctest"
)

// The desk in a real browser: Debian's Chromium driven by chromedp against
// the real binary, people signed in through a real OIDC flow with the mock
// provider running in this process.

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// browser is one Chromium with one tab, recording what the page logged and
// every request it made.
type browser struct {
	t      *testing.T
	ctx    context.Context
	server string // the desk's origin
	idp    string // the provider's origin, allowed only while signing in

	signingIn atomic.Bool
	mu        sync.Mutex
	problems  []string // console errors, exceptions, error log entries
	foreign   []string // requests to any other origin
	expected  []string // problems the journey causes on purpose
}

// expect declares a problem the journey causes on purpose, such as the
// browser's log line for a refusal the test provokes; clean requires it to
// have happened, once.
func (b *browser) expect(substr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expected = append(b.expected, substr)
}

// needBrowser skips without Chromium, except in CI, where a missing browser
// is a broken runner, not a reason to pass.
func needBrowser(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %s is missing (%v): install the chromium package", chromiumPath, err)
		}
		t.Skipf("%s is missing: install the chromium package to run the browser tests", chromiumPath)
	}
}

// deskServer starts the server with OIDC sign-in through a mock provider:
// group "ops" maps to operator, "leads" to approver, "admins" to admin.
func deskServer(t *testing.T, extra ...string) (*server, *oidctest.Provider) {
	t.Helper()
	idp := oidctest.Start(t)
	s := startServer(t, append([]string{"HANDOFF_OIDC_ISSUER=" + idp.Issuer(), "HANDOFF_OIDC_CLIENT_ID=" + idp.ClientID,
		"HANDOFF_OIDC_CLIENT_SECRET=" + idp.ClientSecret, "HANDOFF_ROLE_MAP=ops=operator,leads=approver,admins=admin"}, extra...)...)
	return s, idp
}

// chromium is the one Chromium of this test process, started by the first
// test that needs a browser and stopped by TestMain. Each test gets a
// browser context of its own in it (cookies, storage and cache of its own,
// as a fresh profile would give it), without the cost of starting a
// browser for every test.
var chromium struct {
	mu     sync.Mutex
	ctx    context.Context // the browser's first tab; done once the browser has gone
	cancel func()
}

// sharedChromium is the running browser, started when there is none or
// when the last one has gone (a crash ends one test, not the rest).
func sharedChromium(t *testing.T) context.Context {
	t.Helper()
	chromium.mu.Lock()
	defer chromium.mu.Unlock()
	if chromium.ctx != nil && chromium.ctx.Err() == nil {
		return chromium.ctx
	}
	stopChromium()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Chromium opens two pages of its own address bar's pop-ups (in
		// renderers of their own) for every window, one per test here;
		// headless, no one types into them, and they cost the browser as
		// much CPU as the desk's own pages.
		chromedp.Flag("disable-features", "WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup,AimEnabled"),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser; no timeout here, it would stop the browser
		cancelCtx()
		cancelAlloc()
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	chromium.ctx, chromium.cancel = ctx, func() { cancelCtx(); cancelAlloc() }
	return ctx
}

// stopChromium stops the shared browser, if one runs; the caller holds
// chromium.mu.
func stopChromium() {
	if chromium.cancel != nil {
		chromium.cancel()
	}
	chromium.ctx, chromium.cancel = nil, nil
}

// newBrowser opens a tab for the test in a browser context of its own,
// its viewport width × height.
func newBrowser(t *testing.T, s *server, idp *oidctest.Provider, width, height int) *browser {
	t.Helper()
	needBrowser(t)
	b := &browser{t: t, server: s.URL, idp: origin(idp.Issuer())}
	ctx, cancel := chromedp.NewContext(sharedChromium(t), chromedp.WithNewBrowserContext(), chromedp.WithListener(b.listen))
	t.Cleanup(cancel)
	// Opens the tab; no timeout on this first action, it would close the tab.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("opening a tab in %s: %v", chromiumPath, err)
	}
	b.ctx = ctx
	return b
}

func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Scheme + "://" + u.Host
}

// listen records console errors, uncaught exceptions, error log entries
// and requests that leave the desk's origin.
func (b *browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning ||
			ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, fmt.Sprint(a.Value)+a.Description)
			}
			b.problems = append(b.problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		b.problems = append(b.problems, fmt.Sprintf("exception: %s %s:%d", d.Text, d.URL, d.LineNumber))
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			b.problems = append(b.problems, fmt.Sprintf("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		o := origin(ev.Request.URL)
		if strings.HasPrefix(ev.Request.URL, "data:") || o == b.server || (o == b.idp && b.signingIn.Load()) {
			return
		}
		b.foreign = append(b.foreign, ev.Request.Method+" "+ev.Request.URL)
	}
}

// clean fails the test if the page logged an error or asked another origin
// for anything.
func (b *browser) clean() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var unexpected []string
	seen := make([]int, len(b.expected))
	for _, p := range b.problems {
		i := slices.IndexFunc(b.expected, func(e string) bool { return strings.Contains(p, e) })
		if i < 0 {
			unexpected = append(unexpected, p)
			continue
		}
		seen[i]++
	}
	if len(unexpected) > 0 {
		b.t.Errorf("the browser reported problems:\n  %s", strings.Join(unexpected, "\n  "))
	}
	for i, e := range b.expected {
		if seen[i] != 1 {
			b.t.Errorf("the browser reported %q %d times, want once", e, seen[i])
		}
	}
	if len(b.foreign) > 0 {
		b.t.Errorf("requests left the desk's origin %s:\n  %s", b.server, strings.Join(b.foreign, "\n  "))
	}
}

// stepTimeout bounds one step: long enough for a slow CI runner, short
// enough that a missing element fails the test rather than hanging it.
const stepTimeout = 20 * time.Second

// run runs browser actions, failing the test with what step broke.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.where())
	}
}

// where is the page's address and text, for failure messages.
func (b *browser) where() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return "at " + loc + ":\n" + body
}

// eval evaluates JavaScript in the page.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v\n%s", js, err, b.where())
	}
	return v
}

// signIn signs the person in through the provider, landing on path.
func (b *browser) signIn(idp *oidctest.Provider, p oidctest.Person, path string) {
	b.t.Helper()
	idp.Next(p)
	b.signingIn.Store(true)
	b.run("signing in as "+p.Email, chromedp.Navigate(b.server+path), chromedp.WaitVisible(sel("whoami")))
	b.signingIn.Store(false)
	if who := b.text(sel("whoami")); !strings.Contains(who, p.Name) {
		b.t.Fatalf("signed in as %q, want %s", who, p.Name)
	}
}

// signOut uses the header's button.
func (b *browser) signOut() {
	b.t.Helper()
	b.run("signing out", chromedp.Click(chromedp.CSS(`header.top form button`)), chromedp.WaitNotPresent(sel("whoami")))
}

// sel selects the first element with the data-testid.
func sel(testid string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + testid + `"]`) }

// text reads an element's text once it is there.
func (b *browser) text(selector chromedp.CSS) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(selector))
	if err != nil {
		b.t.Fatalf("reading %s: %v\n%s", selector, err, b.where())
	}
	return s
}

// waitFor polls a JavaScript condition until it holds.
func (b *browser) waitFor(what, js string) {
	b.t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("waiting for %s (%s): %v\n%s", what, js, err, b.where())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
