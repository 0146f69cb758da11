package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"golang.org/x/crypto/bcrypt"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/auth/oidctest"
	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// No container runtime runs where these tests run, so docker-compose.yml
// and deploy/dex/config.yaml are proved here: read and checked against the
// documentation and each other, and their topology started natively.

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Profiles    []string          `yaml:"profiles"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	DependsOn map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
}

type dexConfig struct {
	Issuer          string      `yaml:"issuer"`
	StaticClients   []dexClient `yaml:"staticClients"`
	StaticPasswords []dexUser   `yaml:"staticPasswords"`
}

type dexClient struct {
	ID           string   `yaml:"id"`
	Secret       string   `yaml:"secret"`
	RedirectURIs []string `yaml:"redirectURIs"`
}

type dexUser struct {
	Email  string   `yaml:"email"`
	Hash   string   `yaml:"hash"`
	Groups []string `yaml:"groups"`
}

func readYAML(t *testing.T, path string, v any) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(raw)
}

func readCompose(t *testing.T) (composeFile, string) {
	var c composeFile
	raw := readYAML(t, "../docker-compose.yml", &c)
	if len(c.Services) == 0 {
		t.Fatal("docker-compose.yml has no services")
	}
	return c, raw
}

// interpolate resolves compose's ${NAME:-default} to its default, as
// `docker compose up` does when NAME is not set. A reference without a
// default would make the file depend on the caller's environment.
func interpolate(t *testing.T, v string) string {
	t.Helper()
	return regexp.MustCompile(`\$\{([A-Z0-9_]+)(:-([^}]*))?\}`).ReplaceAllStringFunc(v, func(ref string) string {
		m := regexp.MustCompile(`\$\{([A-Z0-9_]+)(:-([^}]*))?\}`).FindStringSubmatch(ref)
		if m[2] == "" {
			t.Errorf("%s has no default: `docker compose up` would need it set", ref)
		}
		return m[3]
	})
}

// readmeVariables are the HANDOFF_* names in the configuration reference's table.
func readmeVariables(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile("../docs/reference/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Variables\n")
	if !ok {
		t.Fatal("docs/reference/configuration.md has no Variables section")
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	names := map[string]bool{}
	for line := range strings.SplitSeq(section, "\n") {
		if cells := strings.Split(line, "|"); len(cells) > 2 && strings.HasPrefix(line, "|") {
			for _, n := range regexp.MustCompile(`HANDOFF_[A-Z0-9_]+`).FindAllString(cells[1], -1) {
				names[n] = true
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("found only %d variables in the configuration reference's table", len(names))
	}
	return names
}

func TestCompose_File(t *testing.T) {
	compose, raw := readCompose(t)
	var dex dexConfig
	readYAML(t, "../deploy/dex/config.yaml", &dex)

	// Every service is either checked itself or waits for what it needs.
	for name, s := range compose.Services {
		health := s.Healthcheck != nil && len(s.Healthcheck.Test) > 0
		waits := len(s.DependsOn) > 0
		for dep, d := range s.DependsOn {
			if _, ok := compose.Services[dep]; !ok {
				t.Errorf("%s depends on %s, which is not a service", name, dep)
			}
			if d.Condition != "service_healthy" && d.Condition != "service_completed_successfully" {
				waits = false
			}
		}
		if !health && !waits {
			t.Errorf("service %s has neither a healthcheck nor a dependency condition on every dependency", name)
		}
		for dep, d := range s.DependsOn {
			if d.Condition == "service_healthy" && compose.Services[dep].Healthcheck == nil {
				t.Errorf("%s waits for %s to be healthy, which has no healthcheck", name, dep)
			}
		}
	}

	// Images are pinned: built here, or a version tag (never latest).
	for name, s := range compose.Services {
		if s.Build != nil {
			continue
		}
		_, tag, ok := strings.Cut(s.Image[strings.LastIndex(s.Image, "/")+1:], ":")
		if !ok || tag == "latest" || !regexp.MustCompile(`\d`).MatchString(tag) {
			t.Errorf("service %s: image %q is not pinned to a version", name, s.Image)
		}
	}
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(string(dockerfile), -1) {
		if !strings.Contains(m[1], ":") || strings.HasSuffix(m[1], ":latest") {
			t.Errorf("Dockerfile: base image %q is not pinned", m[1])
		}
	}

	// Only the documented variables configure Handoff.
	known := readmeVariables(t)
	for _, n := range regexp.MustCompile(`HANDOFF_[A-Z0-9_]+`).FindAllString(raw+string(dockerfile), -1) {
		if !known[n] {
			t.Errorf("%s is used in docker-compose.yml or the Dockerfile but is not in docs/reference/configuration.md", n)
		}
	}

	// Every replica signs people in through Dex with the same client.
	replicas := 0
	for name, s := range compose.Services {
		env := s.Environment
		if env["HANDOFF_OIDC_ISSUER"] == "" {
			if env["HANDOFF_ADDR"] != "" {
				t.Errorf("%s serves without OIDC", name)
			}
			continue
		}
		replicas++
		if env["HANDOFF_OIDC_ISSUER"] != dex.Issuer {
			t.Errorf("%s: HANDOFF_OIDC_ISSUER %q, Dex's issuer %q", name, env["HANDOFF_OIDC_ISSUER"], dex.Issuer)
		}
		if !strings.HasPrefix(env["HANDOFF_DATABASE_URL"], "postgres://") || !strings.Contains(env["HANDOFF_DATABASE_URL"], "@postgres:5432/") ||
			compose.Services[name].DependsOn["postgres"].Condition != "service_healthy" {
			t.Errorf("%s does not use the postgres service once it is healthy", name)
		}
		if !strings.HasPrefix(env["HANDOFF_ADDR"], "0.0.0.0:") {
			t.Errorf("%s: HANDOFF_ADDR %q should listen on every interface inside its container", name, env["HANDOFF_ADDR"])
		}
		i := slices.IndexFunc(dex.StaticClients, func(c dexClient) bool {
			return c.ID == env["HANDOFF_OIDC_CLIENT_ID"]
		})
		if i < 0 {
			t.Errorf("%s: Dex has no client %q", name, env["HANDOFF_OIDC_CLIENT_ID"])
			continue
		}
		client := dex.StaticClients[i]
		if client.Secret != env["HANDOFF_OIDC_CLIENT_SECRET"] {
			t.Errorf("%s: the client secret differs from Dex's", name)
		}
		if want := interpolate(t, env["HANDOFF_PUBLIC_URL"]) + "/auth/callback"; !slices.Contains(client.RedirectURIs, want) {
			t.Errorf("%s: Dex's redirect URIs %v lack HANDOFF_PUBLIC_URL + /auth/callback = %s", name, client.RedirectURIs, want)
		}
		// Every other redirect URI is a published port: the ha balancer's.
		for _, uri := range client.RedirectURIs {
			u, _ := url.Parse(uri)
			published := false
			for _, s := range compose.Services {
				published = published || slices.ContainsFunc(s.Ports, func(p string) bool { return strings.HasPrefix(p, u.Port()+":") })
			}
			if u.Path != "/auth/callback" || !published {
				t.Errorf("Dex redirect URI %s is not /auth/callback on a published port", uri)
			}
		}

		// Every mapped group is held by someone, and the four people get
		// the roles the Compose guide lists.
		roles, err := auth.ParseRoleMap(env["HANDOFF_ROLE_MAP"])
		if err != nil {
			t.Fatalf("%s: HANDOFF_ROLE_MAP: %v", name, err)
		}
		for group := range roles {
			if !slices.ContainsFunc(dex.StaticPasswords, func(p dexUser) bool {
				return slices.Contains(p.Groups, group)
			}) {
				t.Errorf("%s: group %q of HANDOFF_ROLE_MAP is held by no Dex user", name, group)
			}
		}
		want := map[string]domain.Role{"ann@example.com": domain.RoleOperator, "ben@example.com": domain.RoleApprover,
			"ada@example.com": domain.RoleAuditor, "root@example.com": domain.RoleAdmin}
		for _, p := range dex.StaticPasswords {
			if role, ok := roles.RoleFor(p.Groups); !ok || role != want[p.Email] {
				t.Errorf("%s signs in as %q, want %q", p.Email, role, want[p.Email])
			}
			delete(want, p.Email)
			if bcrypt.CompareHashAndPassword([]byte(p.Hash), []byte("password")) != nil {
				t.Errorf("%s's password is not the documented \"password\"", p.Email)
			}
		}
		if len(want) > 0 {
			t.Errorf("Dex lacks the people %v", want)
		}
	}
	if replicas < 2 {
		t.Errorf("found %d handoff replicas, want the default one and the ha profile's", replicas)
	}

	// Prometheus scrapes every replica and loads deploy/prometheus/alerts.yml;
	// the balancer sends to every replica.
	var prom struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, "../deploy/prometheus/prometheus.yml", &prom)
	if !strings.Contains(raw, "./deploy/prometheus:/etc/prometheus:ro") ||
		!slices.ContainsFunc(prom.RuleFiles, func(glob string) bool { ok, _ := filepath.Match(glob, "/etc/prometheus/alerts.yml"); return ok }) {
		t.Errorf("Prometheus does not load deploy/prometheus/alerts.yml: rule_files %v", prom.RuleFiles)
	}
	var targets []string
	for _, sc := range prom.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			targets = append(targets, st.Targets...)
		}
	}
	caddy, err := os.ReadFile("../deploy/caddy/Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range compose.Services {
		if s.Environment["HANDOFF_OIDC_ISSUER"] == "" {
			continue
		}
		if !slices.Contains(targets, name+":8080") {
			t.Errorf("Prometheus does not scrape %s: %v", name, targets)
		}
		if !regexp.MustCompile(`reverse_proxy[^{\n]*\s` + regexp.QuoteMeta(name) + `:8080[\s{]`).Match(caddy) {
			t.Errorf("the Caddyfile does not balance to %s", name)
		}
	}
	if raw, err := os.ReadFile("../deploy/prometheus/alerts.yml"); err == nil {
		var rules struct {
			Groups []any `yaml:"groups"`
		}
		if err := yaml.Unmarshal(raw, &rules); err != nil || len(rules.Groups) == 0 {
			t.Errorf("deploy/prometheus/alerts.yml has no rule groups: %v", err)
		}
	}
}

// composeEnv is a service's environment from docker-compose.yml, as
// `docker compose up` would pass it.
func composeEnv(t *testing.T, c composeFile, service string) map[string]string {
	t.Helper()
	s, ok := c.Services[service]
	if !ok {
		t.Fatalf("docker-compose.yml has no service %s", service)
	}
	env := map[string]string{}
	for k, v := range s.Environment {
		env[k] = interpolate(t, v)
	}
	return env
}

// TestCompose_Topology starts docker-compose.yml's topology without
// containers: PostgreSQL, the two replicas with their environment from the
// file (hosts substituted for loopback), and an OIDC provider standing in
// for Dex with Dex's client and people. A workflow drives an operation to
// unknown_outcome through replica 2; Ann signs in on replica 1 and decides
// it, through either replica.
func TestCompose_Topology(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("needs PostgreSQL: set " + storetest.EnvPostgres)
	}
	compose, _ := readCompose(t)
	var dex dexConfig
	readYAML(t, "../deploy/dex/config.yaml", &dex)
	idp := oidctest.Start(t)
	// The provider knows Handoff by the client in Dex's config.
	idp.ClientID, idp.ClientSecret = dex.StaticClients[0].ID, dex.StaticClients[0].Secret
	db := storetest.URL(t)
	addrs := []string{freeAddr(t, "127.0.0.1"), freeAddr(t, "127.0.0.1")}
	var replicas []*server
	var logs []*syncBuffer
	for i, name := range []string{"handoff", "handoff-2"} {
		env := composeEnv(t, compose, name)
		subst := map[string]string{
			"HANDOFF_DATABASE_URL":       db,
			"HANDOFF_ADDR":               addrs[i],
			"HANDOFF_PUBLIC_URL":         "http://" + addrs[0],
			"HANDOFF_OIDC_ISSUER":        idp.Issuer(),
			"HANDOFF_OIDC_CLIENT_ID":     env["HANDOFF_OIDC_CLIENT_ID"],
			"HANDOFF_OIDC_CLIENT_SECRET": env["HANDOFF_OIDC_CLIENT_SECRET"],
		}
		if !strings.Contains(env["HANDOFF_DATABASE_URL"], "@postgres:") || !strings.Contains(env["HANDOFF_OIDC_ISSUER"], "dex") ||
			!strings.HasSuffix(env["HANDOFF_ADDR"], ":8080") || env["HANDOFF_PUBLIC_URL"] != "http://localhost:8080" {
			t.Fatalf("%s's environment is not the expected shape to substitute: %v", name, env)
		}
		for k, v := range subst {
			env[k] = v
		}
		r, _, log := launchCmd(t, env)
		replicas, logs = append(replicas, r), append(logs, log)
	}
	one, two := replicas[0], replicas[1]

	// A workflow on replica 2 calls the provider, which times out after
	// the call: only a person can say what happened.
	wf := client.New(two.URL, two.createToken(t, "shop", "checkout"))
	op, err := wf.Do(context.Background(), client.Request{Key: "order_77:charge", Type: "payment.charge",
		Content: map[string]any{"customer": "c_1042", "amount_cents": 4200, "currency": "EUR"}},
		func(context.Context, client.Claim) (client.Result, error) {
			return client.Result{}, errors.New("read timeout")
		})
	if op.State != "unknown_outcome" || err == nil {
		t.Fatalf("the workflow's operation: %+v %v", op, err)
	}

	// Ann, from Dex's config, signs in on replica 1.
	annGroups := dex.StaticPasswords[slices.IndexFunc(dex.StaticPasswords, func(p dexUser) bool {
		return p.Email == "ann@example.com"
	})].Groups
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	step := func(method, target string, form url.Values) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, target, strings.NewReader(form.Encode()))
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, target, err)
		}
		resp.Body.Close()
		return resp
	}
	idp.Next(oidctest.Person{Subject: "ann", Email: "ann@example.com", Name: "Ann", Groups: annGroups})
	toProvider := step("GET", one.URL+"/auth/start?next=/desk/queue", nil)
	toCallback := step("GET", toProvider.Header.Get("Location"), nil)
	if cb := toCallback.Header.Get("Location"); !strings.HasPrefix(cb, one.URL+"/auth/callback?") {
		t.Fatalf("the provider sent the browser to %q, want replica 1's callback", cb)
	} else if done := step("GET", cb, nil); done.StatusCode != http.StatusSeeOther || done.Header.Get("Location") != "/desk/queue" {
		t.Fatalf("callback: %d %s", done.StatusCode, done.Header.Get("Location"))
	}
	// The session is in the database: replica 2 knows Ann too.
	for _, r := range replicas {
		if q := step("GET", r.URL+"/desk/queue", nil); q.StatusCode != http.StatusOK {
			t.Fatalf("%s's desk with Ann's session: %d", r.URL, q.StatusCode)
		}
	}
	current, err := wf.Get(context.Background(), op.ID)
	if err != nil {
		t.Fatal(err)
	}
	decide := url.Values{"action": {"confirm_executed"}, "result_ref": {"ch_3PzL"}, "reason": {"The charge is in the payments dashboard"},
		"expected_version": {strconv.FormatInt(current.Version, 10)}}
	if r := step("POST", two.URL+"/desk/operations/"+op.ID+"/resolve", decide); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("Ann's decision on replica 2: %d", r.StatusCode)
	}

	// Both replicas say so, and the trail names Ann as Dex's person.
	for _, r := range replicas {
		got, err := client.New(r.URL, two.createToken(t, "shop", "reader")).Get(context.Background(), op.ID)
		if err != nil || got.State != "completed" || got.Result.Ref != "ch_3PzL" {
			t.Fatalf("%s: %+v %v", r.URL, got, err)
		}
	}
	s, err := store.Connect(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	events, err := s.Timeline(context.Background(), op.ID)
	if err != nil || len(events) == 0 {
		t.Fatalf("timeline: %v %v", events, err)
	}
	if e := events[len(events)-1]; e.Actor.Email != "ann@example.com" || e.Actor.Issuer != idp.Issuer() || e.Actor.Role != domain.RoleOperator {
		t.Fatalf("the decision's actor: %+v", e.Actor)
	}

	// HANDOFF_LOG_FORMAT=json: every line a replica wrote is a JSON record.
	for i, log := range logs {
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		for _, line := range lines {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["level"] == nil || rec["msg"] == nil || rec["time"] == nil {
				t.Errorf("replica %d wrote a line that is not a JSON log record: %q", i+1, line)
			}
		}
		if len(lines) < 3 {
			t.Errorf("replica %d logged %d lines", i+1, len(lines))
		}
	}
}

// launch runs `handoff serve` with exactly env (and no other HANDOFF_*
// variable of the test's own environment) and waits until it is ready.
func launch(t *testing.T, env map[string]string) *server {
	t.Helper()
	s, _, _ := launchCmd(t, env)
	return s
}

// launchCmd is launch that also gives the process and its log.
func launchCmd(t *testing.T, env map[string]string) (*server, *exec.Cmd, *syncBuffer) {
	t.Helper()
	bin := handoffBinary(t)
	var list []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HANDOFF_") {
			list = append(list, kv)
		}
	}
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	s := &server{URL: "http://" + env["HANDOFF_ADDR"], env: list, bin: bin}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve")
	cmd.Env = list
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s log:\n%s", s.URL, logs.String())
		}
	})
	waitReady(t, s.URL, logs)
	return s, cmd, logs
}

// waitReady polls /readyz until it answers 200.
func waitReady(t *testing.T, base string, logs *syncBuffer) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not become ready: %v\n%s", base, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
