package cards_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

const executeCard = `- name: charge.create
  provider: payments
  provider_idempotency: key
  provider_key_retention: 24h
  retry: {max_attempts: 3, backoff: 1s}
  lease: 30s
  execute_adapter:
    request:
      method: POST
      url: "https://api.example.com/v1/customers/{content.customer}/charges"
      headers: {Accept: application/json}
      auth_env: PROVIDER_TOKEN
      key_header: Idempotency-Key
      body: content
      timeout: 10s
    completed: {status: [200, 201], ref: /id}
    failed_terminal: {status: [400, 401, 403, 404, 422]}
    failed_retryable: {status: [429, 500, 502, 503, 504]}
  execute_endpoint:
    key: /action_run_id
    content: /properties
    wait: 5s
    signature: {header: X-Shopify-Hmac-SHA256, secret_env: SHOPIFY_API_SECRET, namespace: shop}
`

func TestLoad_ExecuteAdapter(t *testing.T) {
	cs, err := loadString(t, executeCard)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := cs.Get("charge.create")
	a, e := c.ExecuteAdapter, c.ExecuteEndpoint
	if a == nil || a.Method != "POST" || a.AuthEnv != "PROVIDER_TOKEN" || a.ProviderKeyHeader() != "Idempotency-Key" ||
		a.Body != domain.ExecuteBodyContent || a.Timeout != 10*time.Second || a.CompletedRef != "/id" ||
		len(a.CompletedStatus) != 2 || len(a.TerminalStatus) != 5 || len(a.RetryableStatus) != 5 {
		t.Fatalf("adapter read wrong: %+v", a)
	}
	if e == nil || e.KeyPointer != "/action_run_id" || e.ContentPointer != "/properties" || e.Wait != 5*time.Second ||
		e.Signature == nil || e.Signature.SecretEnv != "SHOPIFY_API_SECRET" || e.Signature.Namespace != "shop" {
		t.Fatalf("endpoint read wrong: %+v", e)
	}
	op := domain.Operation{ProviderKey: "hk_1", Content: []byte(`{"customer":".."}`)}
	if _, err := a.ExecuteRequestURL(op); err == nil {
		t.Fatal("a content value of .. in the path must be refused")
	}
	op.Content = []byte(`{"customer":"a/b?c"}`)
	if u, err := a.ExecuteRequestURL(op); err != nil || u != "https://api.example.com/v1/customers/a%2Fb%3Fc/charges" {
		t.Fatalf("url %q %v", u, err)
	}
}

// TestLoad_ExecuteAdapterDefaults: method POST, body content, the key in
// Idempotency-Key; 4xx but 408, 409 and 429 terminal; 429 and 5xx
// retryable; anything else unknown.
func TestLoad_ExecuteAdapterDefaults(t *testing.T) {
	cs, err := loadString(t, `- name: t
  provider: p
  provider_idempotency: none
  retry: {max_attempts: 1, backoff: 1s}
  execute_adapter:
    request: {url: "https://api.example.com/x"}
    completed: {status: [200], ref: /id}
`)
	if err != nil {
		t.Fatal(err)
	}
	a := cs["t"].ExecuteAdapter
	if a.Method != "POST" || a.Body != "content" || a.ProviderKeyHeader() != "Idempotency-Key" || a.RequestTimeout() != 10*time.Second {
		t.Fatalf("defaults: %+v", a)
	}
	want := map[int]domain.ExecuteReading{200: domain.ReadCompleted, 201: domain.ReadUnknown, 400: domain.ReadTerminal,
		404: domain.ReadTerminal, 408: domain.ReadUnknown, 409: domain.ReadUnknown, 429: domain.ReadRetryable,
		500: domain.ReadRetryable, 503: domain.ReadRetryable, 501: domain.ReadUnknown, 302: domain.ReadUnknown}
	for status, w := range want {
		if got := a.ReadStatus(status); got != w {
			t.Errorf("status %d read %d, want %d", status, got, w)
		}
	}
}

func TestLoad_ExecuteAdapterRefusals(t *testing.T) {
	for _, tc := range []struct{ lines, want string }{
		{`request: {url: "https://{content.host}/x"}
    completed: {status: [200], ref: /id}`, "execute_adapter.request.url may use placeholders only in the path or the query"},
		{`request: {url: "https://api.example.com/x", method: GET}
    completed: {status: [200], ref: /id}`, "execute_adapter.request.method must be POST, PUT, PATCH or DELETE"},
		{`request: {url: "https://api.example.com/x", headers: {Authorization: "Bearer x"}}
    completed: {status: [200], ref: /id}`, "execute_adapter.request.headers Authorization is set from auth_env"},
		{`request: {url: "https://api.example.com/x", body: xml}
    completed: {status: [200], ref: /id}`, "execute_adapter.request.body must be content, form or template"},
		{`request: {url: "https://api.example.com/x", body: template, template: {k: "{secret}"}}
    completed: {status: [200], ref: /id}`, "execute_adapter.request.template {secret} is not"},
		{`request: {url: "https://api.example.com/x", timeout: 28s}
    completed: {status: [200], ref: /id}`, "execute_adapter.request.timeout must end at least 5s inside the card's lease"},
		{`request: {url: "https://api.example.com/x"}
    completed: {status: [200, 503], ref: id}`, "execute_adapter.completed.ref \"id\" is not a JSON pointer"},
		{`request: {url: "https://api.example.com/x"}
    completed: {status: [200], ref: /id}
    failed_retryable: {status: [200]}`, "execute_adapter.failed_retryable.status 200 is also listed in completed.status"},
	} {
		_, err := loadString(t, "- name: t\n  provider: p\n  provider_idempotency: none\n  retry: {max_attempts: 1, backoff: 1s}\n  execute_adapter:\n    "+tc.lines+"\n")
		if err == nil || !strings.Contains(err.Error(), `card "t": `+tc.want) {
			t.Errorf("%s\n got %v\nwant %s", tc.lines, err, tc.want)
		}
	}
	_, err := loadString(t, "- name: t\n  provider: p\n  provider_idempotency: none\n  retry: {max_attempts: 1, backoff: 1s}\n"+
		"  execute_endpoint: {signature: {header: X-Sig, secret_env: S}}\n")
	for _, want := range []string{"execute_endpoint needs an execute_adapter", "execute_endpoint.signature.namespace is required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}
