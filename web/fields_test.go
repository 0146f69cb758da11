package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestDesk_OneErrorPerField: a refused form names each field once, with one
// error, under a heading that counts them and does not repeat them; a JSON
// error says its line and column.
func TestDesk_OneErrorPerField(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", false)
	for _, c := range []struct {
		name, path string
		form       url.Values
		heading    string
		fields     []string // each field's error starts so, once
	}{
		{"bad JSON", "/revisions", url.Values{"form": {"revise"}, "expected_version": {version(op)}, "content": {"{\n  oops"},
			"reason": {"fix"}}, "correct this field", []string{"content: is not valid JSON at line 2, column 3"}},
		{"no reason", "/resolve", url.Values{"form": {"retry"}, "action": {"retry"}, "expected_version": {version(op)}},
			"correct this field", []string{"reason: is required"}},
		{"two fields", "/resolve", url.Values{"form": {"retry"}, "action": {"explode"}, "reason": {"x"}},
			"correct these 2 fields", []string{"expected_version: is required", "action: must be"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := d.post("ada", "/desk/operations/"+op.ID+c.path, c.form).refused(http.StatusUnprocessableEntity)
			box := p.one("problem")
			got := text(box)
			if !strings.Contains(got, c.heading) {
				t.Fatalf("problem %q, want the heading %q", got, c.heading)
			}
			var items []string
			var walk func(n *html.Node)
			walk = func(n *html.Node) {
				if n.Data == "li" {
					items = append(items, text(n))
				}
				for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
					walk(ch)
				}
			}
			walk(box)
			if len(items) != len(c.fields) {
				t.Fatalf("%d field errors %q, want %d", len(items), items, len(c.fields))
			}
			for i, f := range c.fields {
				if !strings.HasPrefix(items[i], f) || strings.Count(got, f) != 1 {
					t.Fatalf("field error %d: %q (%d times in %q), want %q once", i, items[i], strings.Count(got, f), got, f)
				}
			}
		})
	}
}

// TestDesk_BulkFormFields: a bulk form with two bad fields names both, each
// once; with one, that one.
func TestDesk_BulkFormFields(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", false)
	for _, c := range []struct {
		name   string
		form   url.Values
		fields []string
	}{
		{"two", url.Values{"decision": {"explode"}, "reason": {"x"}, "item": {"nonsense"}}, []string{"item: ", "decision: "}},
		{"one", url.Values{"decision": {"explode"}, "reason": {"x"}, "item": {op.ID + ":1"}}, []string{"decision: "}},
	} {
		for _, target := range []string{"/desk/batch/preview", "/desk/batch"} {
			got := d.post("ada", target, c.form).want(http.StatusUnprocessableEntity).text("problem")
			for _, f := range c.fields {
				if strings.Count(got, f) != 1 {
					t.Errorf("%s, %s: %q names %q %d times, want once", c.name, target, got, f, strings.Count(got, f))
				}
			}
		}
	}
}
