package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// bigContents are 64 KiB contents shaped to cost the desk most: characters
// HTML escapes five times over, one value per line at the deepest level
// allowed, many tiny members.
func bigContents() map[string]func(variant string) string {
	const size = domain.MaxContentBytes - 64
	return map[string]func(string) string{
		"ampersands": func(v string) string {
			return `{"s":"` + v + strings.Repeat(`&\"'<`, (size-20)/5) + `"}`
		},
		"deep": func(v string) string {
			head := strings.Repeat(`{"a":`, domain.MaxNesting-1) + `["` + v + `"`
			tail := `]` + strings.Repeat(`}`, domain.MaxNesting-1)
			return head + strings.Repeat(`,""`, (size-len(head)-len(tail))/3) + tail
		},
		"members": func(v string) string {
			var b strings.Builder
			b.WriteString(`{"v":"` + v + `"`)
			for i := 0; b.Len() < size-20; i++ {
				b.WriteString(`,"` + strings.Repeat("k", 1+i%3) + itoa(i) + `":"&"`)
			}
			return b.String() + "}"
		},
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestDesk_PagesStayBoundedForLargeContent: with 64 KiB contents of the
// costliest shapes, revised once so there is a diff to show, every desk
// page stays under 1 MB and is no-store; a cut rendering says so and links
// to the whole snapshot, which downloads exactly as stored.
func TestDesk_PagesStayBoundedForLargeContent(t *testing.T) {
	const pageLimit = 1 << 20
	d := newDesk(t)
	ctx := context.Background()
	var ids []string
	for name, content := range bigContents() {
		res, err := d.ledger.Workflow.Register(ctx, testWorkflow, domain.Registration{Key: "big:" + name, Type: "coupon.issue",
			Content: json.RawMessage(content("one"))})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		op := res.Operation
		if _, err := d.ledger.Desk.Revise(ctx, testPeople["ada"], op.ID, domain.Revise{ExpectedVersion: op.Version,
			Reason: "second try", Content: json.RawMessage(content("two"))}); err != nil {
			t.Fatalf("%s: revise: %v", name, err)
		}
		ids = append(ids, op.ID)
	}
	pages := []string{"/desk", "/desk/queue", "/desk/queue?state=awaiting_approval", "/desk/approvals", "/desk/audit", "/desk/types"}
	for _, id := range ids {
		pages = append(pages, "/desk/operations/"+id)
	}
	for _, p := range pages {
		for _, hx := range []string{"false", "true"} {
			a := d.get("bob", p, "HX-Request", hx).want(http.StatusOK)
			if len(a.body) >= pageLimit {
				t.Errorf("%s (htmx %s) is %d bytes", p, hx, len(a.body))
			}
			if cc := a.header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control %q", p, cc)
			}
		}
	}

	for _, id := range ids {
		p := d.get("bob", "/desk/operations/"+id).want(http.StatusOK)
		if len(p.all("truncated")) == 0 {
			continue // this shape fits the budget
		}
		link := attr(p.all("download-snapshot")[0], "href")
		if link != "/desk/operations/"+id+"/content/2.json" {
			t.Fatalf("download link %q", link)
		}
		op, err := d.ledger.Desk.Get(ctx, testPeople["bob"], id)
		if err != nil {
			t.Fatal(err)
		}
		got := d.get("bob", link).want(http.StatusOK)
		if got.body != string(op.Content) || got.header.Get("Content-Type") != "application/json" ||
			got.header.Get("Cache-Control") != "no-store" || !strings.Contains(got.header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("download: %d bytes, headers %v", len(got.body), got.header)
		}
		if one := d.get("bob", "/desk/operations/"+id+"/content/1.json").want(http.StatusOK); !strings.Contains(one.body, `one`) {
			t.Fatal("version 1 download lacks its content")
		}
	}
	for _, bad := range []string{"3.json", "0.json", "x.json", "2", "2.txt"} {
		d.get("bob", "/desk/operations/"+ids[0]+"/content/"+bad).want(http.StatusNotFound)
	}
	if n := len(d.get("bob", "/desk/operations/"+ids[0]).all("truncated")) +
		len(d.get("bob", "/desk/operations/"+ids[1]).all("truncated")) + len(d.get("bob", "/desk/operations/"+ids[2]).all("truncated")); n == 0 {
		t.Fatal("no shape was cut: the budgets test nothing")
	}
}
