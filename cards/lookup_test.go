package cards_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/cards"
	"github.com/opshandoff/handoff/domain"
)

const adapterCard = `- name: crm.task.create
  provider: acme-crm
  provider_idempotency: none
  lookup: api
  lookup_authoritative: false
  retry: {max_attempts: 3, backoff: 1s}
  lookup_adapter:
    request:
      method: GET
      url: "https://crm.example.com/api/tasks?external_id={provider_key}&event={event_id}&subject={content.task.subject}"
      auth_env: CRM_TOKEN
      headers: {Accept: application/json}
      timeout: 5s
    found: {status: [200], ref: /data/0/id, when_nonempty: /data, state: /data/0/status, done_states: [open, done],
            compare: [{answer: /data/0/subject, content: /task/subject}]}
    not_found: {status: [404]}
    window: 2m
`

func loadString(t *testing.T, yaml string) (domain.Cards, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return cards.Load(p)
}

func TestLoad_LookupAdapter(t *testing.T) {
	cs, err := loadString(t, adapterCard)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := cs.Get("crm.task.create")
	a := c.LookupAdapter
	if a == nil || a.Method != "GET" || a.AuthEnv != "CRM_TOKEN" || a.Timeout != 5*time.Second || a.Window != 2*time.Minute ||
		a.Found.Ref != "/data/0/id" || a.Found.WhenNonempty != "/data" || len(a.Found.DoneStates) != 2 ||
		len(a.Found.Compare) != 1 || a.Found.Compare[0].Content != "/task/subject" || a.NotFoundStatus[0] != 404 || a.Headers["Accept"] != "application/json" {
		t.Fatalf("adapter read wrong: %+v", a)
	}
	op := domain.Operation{Key: "evt 1/x", ProviderKey: "hk_a&b", EventID: "evt#1", Content: []byte(`{"task":{"subject":"call?me"}}`)}
	u, err := a.LookupRequestURL(op)
	if err != nil || u != "https://crm.example.com/api/tasks?external_id=hk_a%26b&event=evt%231&subject=call%3Fme" {
		t.Fatalf("url %q %v", u, err)
	}
	if e := a.LookupEvidenceURL(op); e != "https://crm.example.com/api/tasks?external_id=hk_a%26b&event=evt%231&subject={content.task.subject}" {
		t.Fatalf("evidence url %q: a content value must not be recorded", e)
	}
	path := *a
	path.URL = "https://crm.example.com/api/tasks/{key}"
	if u, _ := path.LookupRequestURL(op); u != "https://crm.example.com/api/tasks/evt%201%2Fx" {
		t.Fatalf("a path segment is escaped as one: %q", u)
	}
}

func TestLoad_LookupAdapterRefusals(t *testing.T) {
	cases := map[string]struct{ from, to, want string }{
		"placeholder in the host": {"https://crm.example.com/api", "https://{provider_key}.crm.example.com/api", "request.url may use placeholders only in the path or the query"},
		"placeholder in the port": {"https://crm.example.com/api", "https://crm.example.com:{key}/api", "request.url"},
		"unknown placeholder":     {"{event_id}", "{secret}", "{secret} is not"},
		"a write":                 {"method: GET", "method: POST", "request.method must be GET or HEAD"},
		"a secret on the card":    {"Accept: application/json", "Authorization: Bearer sk_live_x", "request.headers Authorization is set from auth_env"},
		"not a pointer":           {"ref: /data/0/id", "ref: data.0.id", "found.ref \"data.0.id\" is not a JSON pointer"},
		"bad escape":              {"when_nonempty: /data", "when_nonempty: /da~2ta", "found.when_nonempty"},
		"no ref":                  {"ref: /data/0/id, ", "", "found.ref is required"},
		"status twice":            {"not_found: {status: [404]}", "not_found: {status: [200]}", "not_found.status 200 is also a found status"},
		"bad env name":            {"auth_env: CRM_TOKEN", "auth_env: crm-token", "request.auth_env must name an environment variable"},
		"bad window":              {"window: 2m", "window: soon", "lookup_adapter.window"},
		"unknown field":           {"window: 2m", "window: 2m\n    retries: 3", "unknown field"},
		"lookup none":             {"lookup: api", "lookup: none", "lookup must be api when the card has a lookup_adapter"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			y := strings.Replace(adapterCard, c.from, c.to, 1)
			if y == adapterCard {
				t.Fatalf("the case changes nothing")
			}
			_, err := loadString(t, y)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to say %q", err, c.want)
			}
		})
	}
}

// TestReadmeLookupRecipes: every card the lookup guide's recipes show
// passes cards check.
func TestReadmeLookupRecipes(t *testing.T) {
	guide, err := os.ReadFile("../docs/guides/lookup.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(guide), "\n## Recipes\n")
	section, _, _ = strings.Cut(section, "\n## ")
	n := 0
	for _, block := range strings.Split(section, "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		cs, err := loadString(t, block)
		if err != nil {
			t.Fatalf("a recipe does not load:\n%s\n%v", block, err)
		}
		for _, c := range cs {
			if c.LookupAdapter == nil || c.LookupAuthoritative {
				t.Errorf("%s: a recipe should have an adapter and claim no authority it has not been tested for", c.Name)
			}
		}
		n++
	}
	if n != 4 {
		t.Fatalf("%d recipes, want 4 (Stripe twice, HubSpot, Salesforce)", n)
	}
}
