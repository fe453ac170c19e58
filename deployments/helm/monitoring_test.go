package helm_test

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

const (
	rulesFile     = chartDir + "/files/prometheus/assay-rules.yaml"
	dashboardFile = chartDir + "/files/dashboards/assay.json"
	// metricNamesFile is what the services export, written from their real
	// /metrics by services/tracing/cmd/tracing's TestMetricsOnlyOnMetricsPorts.
	metricNamesFile = "testdata/metric-names.txt"
)

// TestAlertRulesAreValid checks the rules as `promtool check rules` does
// (scripts/check-alert-rules.sh runs promtool itself where it is
// installed): the file parses, every expression is PromQL, every template
// of a label or annotation parses, no field is unknown. And the alerts an
// operator needs on ingest, the writer, evaluations and errors are there.
func TestAlertRulesAreValid(t *testing.T) {
	groups, errs := rulefmt.ParseFile(rulesFile, false, model.UTF8Validation)
	for _, err := range errs {
		t.Error(err)
	}
	if groups == nil {
		t.Fatal("no rule groups")
	}
	var alerts []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			if r.Labels["severity"] == "" {
				t.Errorf("%s: no severity label", r.Alert)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: a summary and a description tell the one paged what is wrong", r.Alert)
			}
		}
	}
	for _, want := range []string{"AssayIngestRefused", "AssaySpanBacklogOld", "AssayWriterLagging", "AssayDeadLetters",
		"AssayEvaluationJobsWaiting", "AssayHigh5xxRate"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s", want)
		}
	}
}

// TestMonitoringNamesExportedMetrics: every series an alert or a dashboard
// panel selects is one the services export, so no alert waits silently on
// a name that never comes.
func TestMonitoringNamesExportedMetrics(t *testing.T) {
	exported := map[string]bool{}
	b, err := os.ReadFile(metricNamesFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			exported[l] = true
		}
	}
	if len(exported) == 0 {
		t.Fatalf("%s lists no metric", metricNamesFile)
	}
	check := func(where, expr string) {
		t.Helper()
		e, err := parser.ParseExpr(expr)
		if err != nil {
			t.Errorf("%s: %v\n%s", where, err, expr)
			return
		}
		n := 0
		parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
			if vs, ok := node.(*parser.VectorSelector); ok {
				n++
				if !exported[vs.Name] {
					t.Errorf("%s selects %q, which no service exports (%s)", where, vs.Name, metricNamesFile)
				}
			}
			return nil
		})
		if n == 0 {
			t.Errorf("%s selects no series: %s", where, expr)
		}
	}

	groups, errs := rulefmt.ParseFile(rulesFile, false, model.UTF8Validation)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			check("alert "+r.Alert, r.Expr)
		}
	}

	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	b, err = os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	panels := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		panels++
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			check("panel "+p.Title, tg.Expr)
		}
	}
	if panels < 10 {
		t.Errorf("the dashboard has %d panels", panels)
	}
	// label_values(<metric>, <label>): Grafana's, not PromQL.
	labelValues := regexp.MustCompile(`^label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)`)
	for _, v := range dash.Templating.List {
		if m := labelValues.FindStringSubmatch(v.Definition); m != nil && !exported[m[1]] {
			t.Errorf("dashboard variable %s reads %q, which no service exports", v.Name, m[1])
		}
	}
}

// TestMonitoringRendered: the PrometheusRule and the dashboard's ConfigMap
// are rendered only when enabled (the rule only where the operator's CRD
// is), carry the files unchanged and match their schemas; every service's
// metrics port is declared, scraped, and open to the scrapers alone.
func TestMonitoringRendered(t *testing.T) {
	schemas := compileSchemas(t)
	on := dataStoreValues()
	on["prometheusRule"] = map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}}
	on["grafanaDashboard"] = map[string]any{"enabled": true, "annotations": map[string]any{"grafana_folder": "Assay"}}
	on["networkPolicy"] = map[string]any{"enabled": true, "metricsFrom": []any{
		map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}}}

	kinds := func(objs []object) map[string]object {
		out := map[string]object{}
		for _, o := range objs {
			out[o.Kind] = o
		}
		return out
	}
	if k := kinds(render(t, dataStoreValues(), true)); k["PrometheusRule"].raw != nil || k["ConfigMap"].raw != nil {
		t.Error("the defaults render a PrometheusRule or a dashboard: they are opt-in")
	}
	if k := kinds(render(t, on, false)); k["PrometheusRule"].raw != nil {
		t.Error("a PrometheusRule rendered without the operator's CRD")
	}

	objs := render(t, on, true)
	for _, o := range objs {
		if s, ok := schemas[o.APIVersion+"/"+o.Kind]; !ok {
			t.Errorf("%s: no schema for %s/%s", o.id(), o.APIVersion, o.Kind)
		} else if err := s.Validate(o.raw); err != nil {
			t.Errorf("%s: %v", o.id(), err)
		}
	}
	k := kinds(objs)
	rule := k["PrometheusRule"]
	if rule.raw == nil {
		t.Fatal("no PrometheusRule")
	}
	if dig(rule.raw, "metadata", "labels", "release") != "kube-prometheus-stack" {
		t.Error("the PrometheusRule lacks the labels of values prometheusRule.labels")
	}
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dig(rule.raw, "spec", "groups"), file["groups"]) {
		t.Errorf("the PrometheusRule's groups differ from %s", rulesFile)
	}
	cm := k["ConfigMap"]
	if cm.raw == nil {
		t.Fatal("no dashboard ConfigMap")
	}
	if dig(cm.raw, "metadata", "labels", "grafana_dashboard") != "1" || dig(cm.raw, "metadata", "annotations", "grafana_folder") != "Assay" {
		t.Errorf("the dashboard ConfigMap's labels or annotations: %v", dig(cm.raw, "metadata"))
	}
	b, err = os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := dig(cm.raw, "data", "assay.json").(string); strings.TrimSpace(got) != strings.TrimSpace(string(b)) {
		t.Errorf("the ConfigMap's assay.json differs from %s", dashboardFile)
	}

	ports := map[string]float64{"gateway": 8086, "registry": 8087, "runtime": 8088, "tracing": 8089, "writer": 8090, "console": 8091}
	byID := map[string]object{}
	for _, o := range objs {
		byID[o.id()] = o
	}
	for s, port := range ports {
		d := byID["Deployment/assay-"+s]
		c := dig(d.raw, "spec", "template", "spec", "containers").([]any)[0]
		if !hasPort(dig(c, "ports"), "metrics", "containerPort", port) {
			t.Errorf("%s: no container port metrics %v", s, port)
		}
		if got := env(d, strings.ToUpper(s)+"_METRICS_ADDR"); got != "0.0.0.0:"+jsonNum(port) {
			t.Errorf("%s_METRICS_ADDR = %q", strings.ToUpper(s), got)
		}
		if !hasPort(dig(byID["Service/assay-"+s].raw, "spec", "ports"), "metrics", "port", port) {
			t.Errorf("%s: the Service has no port metrics %v", s, port)
		}
		eps, _ := dig(byID["ServiceMonitor/assay-"+s].raw, "spec", "endpoints").([]any)
		if len(eps) != 1 || dig(eps[0], "port") != "metrics" || dig(eps[0], "path") != "/metrics" {
			t.Errorf("%s: the ServiceMonitor scrapes %v, want the metrics port", s, eps)
		}
		// The configured scrapers (metricsFrom) reach the metrics port and
		// no other; the API ports stay as they were.
		for _, r := range dig(byID["NetworkPolicy/assay-"+s].raw, "spec", "ingress").([]any) {
			fromScrapers := strings.Contains(toJSON(t, dig(r, "from")), "monitoring")
			if fromScrapers && toJSON(t, dig(r, "ports")) != `[{"port":"metrics","protocol":"TCP"}]` {
				t.Errorf("%s: the scrapers may reach %s", s, toJSON(t, dig(r, "ports")))
			}
			if strings.Contains(toJSON(t, dig(r, "ports")), `"metrics"`) && !fromScrapers {
				t.Errorf("%s: the metrics port is open to %s", s, toJSON(t, dig(r, "from")))
			}
		}
	}
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

func hasPort(ports any, name, field string, number float64) bool {
	list, _ := ports.([]any)
	for _, p := range list {
		if dig(p, "name") == name && dig(p, field) == number {
			return true
		}
	}
	return false
}

func toJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
