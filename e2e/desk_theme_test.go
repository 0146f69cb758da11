package e2e

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// colorScheme emulates the system's preference: "light" or "dark".
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}

// pageIsDark reports whether the page reads light on dark: the body's
// background darker than its text.
const pageIsDark = `(() => {
	const lum = c => { const [r, g, b] = c.match(/\d+/g).map(Number); return 0.2126 * r + 0.7152 * g + 0.0722 * b };
	const s = getComputedStyle(document.body);
	return lum(s.backgroundColor) < 80 && lum(s.color) > 160;
})()`

// TestDesk_Theme: the desk follows the system's colour preference; a
// person may choose light or dark over it, with or without JavaScript,
// and the choice stays from page to page; "auto" follows the system again.
func TestDesk_Theme(t *testing.T) {
	s, idp := deskServer(t)
	s.intoDesk(t, "evt_theme:crm_task", true)
	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/queue")
	dark := func(where string, want bool) {
		t.Helper()
		if got := eval[bool](b, pageIsDark); got != want {
			t.Errorf("%s: dark %v, want %v (data-theme %q)", where, got, want, eval[string](b, `document.documentElement.dataset.theme || ""`))
		}
	}
	b.run("a system that prefers dark", colorScheme("dark"), chromedp.Navigate(s.URL+"/desk/queue"), chromedp.WaitVisible(sel("queue-table")))
	dark("the queue, system dark", true)
	b.run("a system that prefers light", colorScheme("light"), chromedp.Reload(), chromedp.WaitVisible(sel("queue-table")))
	dark("the queue, system light", false)
	if pressed := eval[string](b, `document.querySelector('[data-testid="theme-auto"]').getAttribute('aria-pressed')`); pressed != "true" {
		t.Errorf("auto is not pressed without a choice: %s", pressed)
	}

	b.run("choosing dark", chromedp.Click(sel("theme-dark")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="theme-dark"][aria-pressed="true"]`)))
	dark("the queue, dark chosen, system light", true)
	if loc := eval[string](b, `location.pathname`); loc != "/desk/queue" {
		t.Errorf("choosing the theme went to %s, not back to the queue", loc)
	}
	b.run("another page", chromedp.Navigate(s.URL+"/desk/audit"), chromedp.WaitVisible(sel("audit-filter")))
	dark("the audit, dark chosen", true)

	b.run("turning scripts off", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}), colorScheme("dark"), chromedp.Reload(), chromedp.WaitVisible(sel("audit-filter")))
	if eval[bool](b, `typeof window.htmx !== "undefined"`) {
		t.Fatal("scripts still run")
	}
	b.run("choosing light without scripts", chromedp.Click(sel("theme-light")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="theme-light"][aria-pressed="true"]`)))
	dark("the audit, light chosen, system dark", false)
	b.run("choosing auto without scripts", chromedp.Click(sel("theme-auto")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="theme-auto"][aria-pressed="true"]`)))
	dark("the audit, auto, system dark", true)
	b.clean()
}
