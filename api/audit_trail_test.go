package api_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// newAuditHarness is the contract harness with the people the audit routes
// tell apart: every role, and a person the role map gave none.
func newAuditHarness(t *testing.T) *harness {
	t.Helper()
	st := storetest.New(t)
	x := &harness{t: t, store: st, tokens: auth.NewTokens(st), reg: prometheus.NewRegistry(), readyFn: st.Ping}
	x.tok = x.token("campaigns", "n8n")
	x.other = x.token("other", "zapier")
	chain := auth.Chain{Tokens: x.tokens, People: people{
		"vera":   person("vera@example.com", domain.RoleViewer),
		"alice":  person("alice@example.com", domain.RoleOperator),
		"aud":    person("aud@example.com", domain.RoleAuditor),
		"adam":   person("adam@example.com", domain.RoleAdmin),
		"nobody": {Kind: domain.ActorPerson, Name: "nobody@example.com", Email: "nobody@example.com"},
	}}
	e, err := api.New(api.Config{Ledger: domain.NewLedger(st, contractCards()), Auth: chain,
		Logger: slog.New(slog.DiscardHandler), Registry: x.reg})
	if err != nil {
		t.Fatal(err)
	}
	x.h = e
	return x
}

func items(r map[string]any) []map[string]any {
	var out []map[string]any
	for _, it := range r["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func TestContract_AuditList(t *testing.T) {
	x := newAuditHarness(t)
	op, tok := x.claimed("k1")
	x.do("POST", opPath(op, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	x.do("POST", "/v1/operations", x.other, map[string]any{"key": "k1", "type": "crm.task.create", "content": map[string]any{}}).ok(201)
	download(x, "/v1/audit/export", "aud") // a system event

	full := items(x.do("GET", "/v1/audit", "vera", nil).ok(200))
	// The harness's two tokens came first, each with its token_created.
	if len(full) < 2 || full[0]["action"] != "token_created" || full[1]["action"] != "token_created" {
		t.Fatalf("the tokens' creation is not on record: %v", full)
	}
	all := full[2:]
	// The operation's registration (with its claim: one event), its begin,
	// the other namespace's registration, the export.
	if len(all) != 4 || all[0]["stream"] != op["id"] || all[0]["seq"] != float64(1) || all[3]["stream"] != "system" {
		t.Fatalf("a viewer sees the whole trail in write order: %v", all)
	}
	if all[0]["hash"] == "" || all[1]["prev_hash"] != all[0]["hash"] || all[0]["namespace"] != "campaigns" {
		t.Fatalf("chain fields: %v", all[:2])
	}
	if _, has := all[0]["client_addr"]; has {
		t.Fatal("the list shows client addresses")
	}
	mine := items(x.do("GET", "/v1/audit", x.other, nil).ok(200))
	if len(mine) != 1 || mine[0]["namespace"] != "other" {
		t.Fatalf("a workflow token sees its namespace's operations only: %v", mine)
	}
	if got := items(x.do("GET", "/v1/audit?action=began&operation_id="+op["id"].(string), "alice", nil).ok(200)); len(got) != 1 {
		t.Fatalf("filters: %v", got)
	}
	if got := items(x.do("GET", "/v1/audit?actor=aud@example.com&from=2000-01-01T00:00:00Z", "vera", nil).ok(200)); len(got) != 1 || got[0]["action"] != "audit_exported" {
		t.Fatalf("actor filter: %v", got)
	}
	page := x.do("GET", "/v1/audit?limit=2", "vera", nil).ok(200)
	next := x.do("GET", "/v1/audit?limit=2&cursor="+url.QueryEscape(page["next_cursor"].(string)), "vera", nil).ok(200)
	if len(items(page)) != 2 || items(next)[0]["id"] != full[2]["id"] {
		t.Fatalf("pages: %v then %v", page, next)
	}
	for _, q := range []string{"?limit=0", "?from=yesterday", "?stream=system", "?action=a&action=b", "?cursor=nope",
		"?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z"} {
		x.do("GET", "/v1/audit"+q, "vera", nil).problem(400, "validation_failed")
	}
	x.do("GET", "/v1/audit", "nobody", nil).problem(403, "forbidden")
}

func TestContract_AuditExport(t *testing.T) {
	x := newAuditHarness(t)
	x.unknownOutcome("k1")
	for _, who := range []string{"vera", "alice", "nobody", x.tok} {
		x.do("GET", "/v1/audit/export", who, nil).problem(403, "forbidden")
	}
	x.do("GET", "/v1/audit/export?format=xml", "aud", nil).problem(400, "validation_failed")
	x.do("GET", "/v1/audit/export?since=1", "aud", nil).problem(400, "validation_failed")

	r := download(x, "/v1/audit/export", "aud")
	if r.code != 200 || r.header.Get("Content-Type") != "application/x-ndjson" ||
		!strings.HasPrefix(r.header.Get("Content-Disposition"), `attachment; filename="handoff-audit-`) {
		t.Fatalf("JSONL export: %d %v", r.code, r.header)
	}
	lines := strings.Split(strings.TrimSpace(string(r.raw)), "\n")
	// The harness's two token_created events, the operation's three
	// (registered and claimed, began, settled), the export.
	if len(lines) != 6 || !strings.Contains(lines[5], `"action":"audit_exported"`) || !strings.Contains(lines[5], `"email":"aud@example.com"`) {
		t.Fatalf("the export is itself the last event: %s", r.raw)
	}
	verifyExport(t, r.raw)

	c := download(x, "/v1/audit/export?format=csv&namespace=campaigns&from=2000-01-01T00:00:00Z", "adam")
	if c.code != 200 || !strings.HasPrefix(c.header.Get("Content-Type"), "text/csv") || !bytes.HasPrefix(c.raw, []byte("\uFEFFid,stream,seq")) {
		t.Fatalf("CSV export: %d %v %.40q", c.code, c.header, c.raw)
	}
	verifyExport(t, c.raw)
	evs, _, err := x.store.ListAudit(context.Background(), domain.AuditSelect{AuditQuery: domain.AuditQuery{Action: domain.ActionAuditExported}})
	if err != nil || len(evs) != 2 || !strings.Contains(string(evs[1].Detail), `"format":"csv"`) || evs[1].Actor.Email != "adam@example.com" {
		t.Fatalf("each export is audited: %+v %v", evs, err)
	}
}

// download is a GET whose body is kept as it came: the harness's do would
// read JSON Lines as one JSON document.
func download(x *harness, path, bearer string) *reply {
	x.t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	w := httptest.NewRecorder()
	x.h.ServeHTTP(w, req)
	return &reply{t: x.t, code: w.Code, header: w.Header(), raw: w.Body.Bytes()}
}

func verifyExport(t *testing.T, raw []byte) {
	t.Helper()
	rep, err := audit.VerifyEvents(&audit.Verifier{RefName: "line"}, func(fn func(domain.AuditEvent, int64) error) error {
		_, err := audit.DecodeExport(bytes.NewReader(raw), fn)
		return err
	}, nil)
	if err != nil || !rep.OK() {
		t.Fatalf("the export does not verify: %v %v", err, rep.Breaks)
	}
}
