package deploy_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
	"github.com/prometheus/client_golang/prometheus"
)

// recorder is a Registerer that keeps what is registered on it.
type recorder struct{ cs []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error { r.cs = append(r.cs, c); return nil }
func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.cs = append(r.cs, cs...)
}
func (r *recorder) Unregister(prometheus.Collector) bool { return false }

var fqName = regexp.MustCompile(`fqName: "([a-zA-Z_:][a-zA-Z0-9_:]*)"`)

// served lists every series name Handoff's /metrics can carry: the
// recovery metrics by their descriptions, the HTTP metrics by a scrape.
func served(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	l := domain.NewLedger(storetest.New(t), domain.Cards{})
	rec := &recorder{}
	if _, err := api.NewRecovery(rec, l.Store); err != nil {
		t.Fatal(err)
	}
	descs := make(chan *prometheus.Desc, 100)
	for _, c := range rec.cs {
		c.Describe(descs)
	}
	close(descs)
	for d := range descs {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("unreadable description %s", d)
		}
		names[m[1]] = true
	}
	reg := prometheus.NewRegistry()
	e, err := api.New(api.Config{Ledger: l, Auth: auth.Chain{}, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		names[f.GetName()] = true
	}
	for n := range names { // histogram series
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			names[n+s] = true
		}
	}
	if !names["handoff_desk_items"] || !names["http_requests_total"] {
		t.Fatalf("the served names miss known series: %v", names)
	}
	return names
}

// seriesIn finds the metric names an expression refers to: identifiers that
// are neither functions, keywords, label names nor label values.
var ident = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)

func seriesIn(expr string) []string {
	// drop label matchers, strings, ranges and by/without clauses
	for _, re := range []*regexp.Regexp{regexp.MustCompile(`"[^"]*"`), regexp.MustCompile(`\{[^}]*\}`),
		regexp.MustCompile(`\[[^\]]*\]`), regexp.MustCompile(`\b(by|without)\s*\([^)]*\)`)} {
		expr = re.ReplaceAllString(expr, " ")
	}
	var out []string
	for _, m := range ident.FindAllStringIndex(expr, -1) {
		word := expr[m[0]:m[1]]
		rest := strings.TrimLeft(expr[m[1]:], " \n\t")
		if strings.HasPrefix(rest, "(") { // a function or an aggregation
			continue
		}
		switch word {
		case "and", "or", "unless", "on", "ignoring", "group_left", "group_right", "bool", "offset":
			continue
		}
		if strings.Contains(word, "_") {
			out = append(out, word)
		}
	}
	return out
}

// TestAlertRules: the rules file parses, every rule is complete, its
// expression's parentheses balance, and it refers only to served series.
func TestAlertRules(t *testing.T) {
	raw, err := os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.UnmarshalWithOptions(raw, &file, yaml.DisallowUnknownField()); err != nil {
		t.Fatal(err)
	}
	names := served(t)
	alerts := map[string]bool{}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Annotations["summary"] == "" || r.Labels["severity"] == "" {
				t.Errorf("incomplete rule %+v", r)
			}
			if _, err := time.ParseDuration(r.For); err != nil {
				t.Errorf("%s: for %q: %v", r.Alert, r.For, err)
			}
			if strings.Count(r.Expr, "(") != strings.Count(r.Expr, ")") || strings.Count(r.Expr, "{") != strings.Count(r.Expr, "}") {
				t.Errorf("%s: unbalanced expression %s", r.Alert, r.Expr)
			}
			series := seriesIn(r.Expr)
			if len(series) == 0 {
				t.Errorf("%s: refers to no series", r.Alert)
			}
			for _, s := range series {
				if !names[s] {
					t.Errorf("%s refers to %s, which /metrics does not serve", r.Alert, s)
				}
			}
			alerts[r.Alert] = true
		}
	}
	for _, want := range []string{"HandoffDeskItemWaitingOverAnHour", "HandoffNotificationsFailing", "HandoffHigh503Rate", "HandoffOutboxBacklog"} {
		if !alerts[want] {
			t.Errorf("no %s rule", want)
		}
	}
}

// TestDashboard: the Grafana dashboard parses and every panel's queries
// refer only to served series. The group commit's (handoff_db_*) are
// served by cmd/handoff, which this package cannot import: its
// TestDashboard_groupCommitSeries checks those against its collector.
func TestDashboard(t *testing.T) {
	raw, err := os.ReadFile("grafana/handoff.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.Title == "" || len(d.Panels) == 0 {
		t.Fatal("an empty dashboard")
	}
	names := served(t)
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			series := seriesIn(q.Expr)
			if len(series) == 0 {
				t.Errorf("panel %q: %s refers to no series", p.Title, q.Expr)
			}
			for _, s := range series {
				if !names[s] && !strings.HasPrefix(s, "handoff_db_") {
					t.Errorf("panel %q refers to %s, which /metrics does not serve", p.Title, s)
				}
			}
		}
	}
}

// TestSeriesIn keeps the checker honest: it finds misspelt series.
func TestSeriesIn(t *testing.T) {
	got := seriesIn(`histogram_quantile(0.9, sum by (le) (rate(handoff_time_to_resolve_secs_bucket{type="a_b"}[5m]))) > 3 or up_metric`)
	if strings.Join(got, ",") != "handoff_time_to_resolve_secs_bucket,up_metric" {
		t.Fatalf("seriesIn = %v", got)
	}
}
