// Package helm_test checks the Helm chart in assay/ without a cluster: it
// lints it, renders it with the default and the production values, and
// validates every rendered object against the committed JSON schemas of
// its kind (schemas/), strictly: an unknown field is an error.
package helm_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

const chartDir = "assay"

// object is one rendered manifest.
type object struct {
	Source     string
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	raw map[string]any
}

func (o object) id() string { return o.Kind + "/" + o.Metadata.Name }

// valueSets are the value sets the chart is checked with: the defaults,
// and the production set in assay/values-production.yaml.
func valueSets(t *testing.T) map[string]map[string]any {
	b, err := os.ReadFile(chartDir + "/values-production.yaml")
	if err != nil {
		t.Fatal(err)
	}
	prod := map[string]any{}
	if err := yaml.Unmarshal(b, &prod); err != nil {
		t.Fatal(err)
	}
	return map[string]map[string]any{"default": dataStoreValues(), "production": prod}
}

// dataStoreValues are the least values the chart installs with: the data
// stores' URLs, which have no defaults (each carries its own password).
func dataStoreValues() map[string]any {
	return map[string]any{
		"postgres": map[string]any{
			"url":        "postgres://assay_app:app-pw@pg:5432/assay?sslmode=require",
			"migrateUrl": "postgres://assay_owner:owner-pw@pg:5432/assay?sslmode=require",
		},
		"clickhouse": map[string]any{
			"writerUrl":  "clickhouse://assay_writer:writer-pw@ch:9000/assay",
			"tracingUrl": "clickhouse://assay_tracing:tracing-pw@ch:9000/assay",
			"readerUrl":  "clickhouse://assay_reader:reader-pw@ch:9000/assay",
		},
	}
}

// render renders the chart as `helm template` would, with the Prometheus
// operator's ServiceMonitor among the cluster's API versions when
// monitoring is true.
func render(t *testing.T, vals map[string]any, monitoring bool) []object {
	t.Helper()
	objs, err := renderErr(t, vals, monitoring)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// renderErr is render that returns the chart's refusal (fail, required).
func renderErr(t *testing.T, vals map[string]any, monitoring bool) ([]object, error) {
	t.Helper()
	caps := chartutil.DefaultCapabilities.Copy()
	if monitoring {
		caps.APIVersions = append(caps.APIVersions, "monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor",
			"monitoring.coreos.com/v1/PrometheusRule")
	}
	return renderCaps(t, vals, caps)
}

// renderAt renders the chart for a cluster of the given Kubernetes version
// ("v1.30.0"), as `helm template --kube-version` would.
func renderAt(t *testing.T, vals map[string]any, kubeVersion string) []object {
	t.Helper()
	caps := chartutil.DefaultCapabilities.Copy()
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	caps.KubeVersion = *kv
	objs, err := renderCaps(t, vals, caps)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func renderCaps(t *testing.T, vals map[string]any, caps *chartutil.Capabilities) ([]object, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "assay", Namespace: "assay", IsInstall: true, Revision: 1}, caps)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		return nil, err
	}
	return objects(t, files), nil
}

// objects parses the rendered YAML files, in name order, into objects.
func objects(t *testing.T, files map[string]string) []object {
	t.Helper()
	var objs []object
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(files[name]) {
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if string(js) == "null" {
				continue
			}
			o := object{Source: name}
			if err := json.Unmarshal(js, &o); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := json.Unmarshal(js, &o.raw); err != nil {
				t.Fatal(err)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

func TestChartLints(t *testing.T) {
	for name, vals := range valueSets(t) {
		t.Run(name, func(t *testing.T) {
			linter := lint.All(chartDir, vals, "assay", false)
			for _, m := range linter.Messages {
				// INFO (e.g. "icon is recommended") is advice; warnings and errors fail.
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %s", m)
				}
			}
		})
	}
}

func compileSchemas(t *testing.T) map[string]*jsonschema.Schema {
	c := jsonschema.NewCompiler()
	out := map[string]*jsonschema.Schema{}
	for avk := range kinds {
		b, err := os.ReadFile(schemaFile(avk))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		url := "file:///" + schemaFile(avk)
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if out[avk], err = c.Compile(url); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestRenderedObjectsMatchTheirSchemas renders each value set, with and
// without the Prometheus operator, and validates every object.
func TestRenderedObjectsMatchTheirSchemas(t *testing.T) {
	schemas := compileSchemas(t)
	for name, vals := range valueSets(t) {
		for _, monitoring := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/monitoring=%v", name, monitoring), func(t *testing.T) {
				objs := render(t, vals, monitoring)
				seen := map[string]bool{}
				for _, o := range objs {
					if seen[o.id()] {
						t.Errorf("%s rendered twice", o.id())
					}
					seen[o.id()] = true
					s, ok := schemas[o.APIVersion+"/"+o.Kind]
					if !ok {
						t.Errorf("%s (%s): no schema for %s/%s: add it to kinds", o.id(), o.Source, o.APIVersion, o.Kind)
						continue
					}
					if err := s.Validate(o.raw); err != nil {
						t.Errorf("%s (%s): %v", o.id(), o.Source, err)
					}
				}
				if t.Failed() {
					return
				}
				checkShape(t, name, monitoring, objs)
			})
		}
	}
}

// checkShape checks what a production install needs of the chart beyond
// schema validity: the counts, probes, security contexts and policies below.
func checkShape(t *testing.T, set string, monitoring bool, objs []object) {
	count := map[string]int{}
	byID := map[string]object{}
	for _, o := range objs {
		count[o.Kind]++
		byID[o.id()] = o
	}
	services := []string{"gateway", "registry", "runtime", "tracing", "writer", "console"}
	for _, s := range services {
		d, ok := byID["Deployment/assay-"+s]
		if !ok {
			t.Errorf("no Deployment for %s", s)
			continue
		}
		c := dig(d.raw, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
		if got := dig(c, "readinessProbe", "httpGet", "path"); got != "/ready" {
			t.Errorf("%s readiness probe: %v", s, got)
		}
		if got := dig(c, "livenessProbe", "httpGet", "path"); got != "/health" {
			t.Errorf("%s liveness probe: %v", s, got)
		}
		if dig(c, "resources", "requests") == nil {
			t.Errorf("%s: no resource requests", s)
		}
		for _, k := range []string{"Service", "PodDisruptionBudget", "NetworkPolicy"} {
			if _, ok := byID[k+"/assay-"+s]; !ok {
				t.Errorf("no %s for %s", k, s)
			}
		}
		if _, ok := byID["ServiceMonitor/assay-"+s]; ok != monitoring {
			t.Errorf("ServiceMonitor for %s rendered=%v with the operator present=%v", s, ok, monitoring)
		}
	}
	for _, p := range []string{"otlp-grpc", "otlp-http"} {
		if _, ok := byID["Service/assay-"+p]; !ok {
			t.Errorf("no Service for %s", p)
		}
	}
	if got := env(byID["Deployment/assay-gateway"], "GATEWAY_CONSOLE_URL"); got != "http://assay-console:8085" {
		t.Errorf("GATEWAY_CONSOLE_URL = %q, want the console's Service", got)
	}
	// The runtime stores its invocation spans through tracing.
	if got := env(byID["Deployment/assay-runtime"], "RUNTIME_TRACING_URL"); got != "http://assay-tracing:8083" {
		t.Errorf("RUNTIME_TRACING_URL = %q, want the tracing Service", got)
	}
	if np := byID["NetworkPolicy/assay-console"]; np.raw != nil && dig(np.raw, "spec", "ingress").([]any)[0].(map[string]any)["from"] == nil {
		t.Error("the console's port is open beyond the release: it is reached through the gateway")
	}
	if set == "production" {
		for _, s := range []string{"tracing", "runtime"} {
			if _, ok := byID["HorizontalPodAutoscaler/assay-"+s]; !ok {
				t.Errorf("production: no HorizontalPodAutoscaler for %s", s)
			}
		}
		if _, ok := byID["Ingress/assay-gateway"]; !ok {
			t.Error("production: no Ingress")
		}
		if count["Secret"] != 0 {
			t.Error("production uses an existing Secret, yet the chart rendered one")
		}
		for _, s := range []string{"tracing", "writer"} {
			if got := env(byID["Deployment/assay-"+s], strings.ToUpper(s)+"_CLICKHOUSE_CLUSTER"); got != "assay" {
				t.Errorf("production: %s_CLICKHOUSE_CLUSTER = %q, want assay", strings.ToUpper(s), got)
			}
		}
		// The runtime declares no span stream (tracing stores its spans),
		// only EVALS.
		for _, s := range []string{"tracing", "writer"} {
			if got := env(byID["Deployment/assay-"+s], strings.ToUpper(s)+"_STREAM_REPLICAS"); got != "3" {
				t.Errorf("production: %s_STREAM_REPLICAS = %q, want 3", strings.ToUpper(s), got)
			}
		}
		if got := env(byID["Deployment/assay-runtime"], "RUNTIME_EVAL_REPLICAS"); got != "3" {
			t.Errorf("production: RUNTIME_EVAL_REPLICAS = %q, want 3", got)
		}
	} else if count["Secret"] != 6 {
		// The shared one (data-store URLs, NATS passwords), one per service
		// that holds secrets (gateway, registry, runtime, tracing) and the
		// NATS server's users.
		t.Errorf("default: %d Secrets, want 6", count["Secret"])
	}
}

func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// env is the value of a plain (not secret) variable of d's container.
func env(d object, name string) string {
	c := dig(d.raw, "spec", "template", "spec", "containers").([]any)[0]
	for _, e := range dig(c, "env").([]any) {
		if m := e.(map[string]any); m["name"] == name {
			v, _ := m["value"].(string)
			return v
		}
	}
	return ""
}

// envNames are the variable names each service's Deployment sets.
func envNames(t *testing.T, objs []object) map[string][]string {
	out := map[string][]string{}
	for _, o := range objs {
		if o.Kind != "Deployment" {
			continue
		}
		svc := strings.TrimPrefix(o.Metadata.Name, "assay-")
		c := dig(o.raw, "spec", "template", "spec", "containers").([]any)[0]
		for _, e := range dig(c, "env").([]any) {
			out[svc] = append(out[svc], e.(map[string]any)["name"].(string))
		}
		sort.Strings(out[svc])
	}
	return out
}

// TestSchemasRefuseWhatTheAPIServerWould guards the guard: the schemas must
// reject an unknown field, a misspelt one and a wrong type.
func TestSchemasRefuseWhatTheAPIServerWould(t *testing.T) {
	schemas := compileSchemas(t)
	objs := render(t, dataStoreValues(), true)
	var dep object
	for _, o := range objs {
		if o.Kind == "Deployment" {
			dep = o
		}
	}
	cases := map[string]func(spec map[string]any){
		"unknown field":  func(spec map[string]any) { spec["replicaz"] = 2 },
		"wrong type":     func(spec map[string]any) { spec["replicas"] = "two" },
		"nested unknown": func(spec map[string]any) { dig(spec, "template", "spec").(map[string]any)["containerz"] = []any{} },
		"missing required": func(spec map[string]any) {
			c := dig(spec, "template", "spec", "containers").([]any)[0].(map[string]any)
			delete(c, "name")
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			var raw map[string]any
			b, _ := json.Marshal(dep.raw)
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			mutate(raw["spec"].(map[string]any))
			if err := schemas["apps/v1/Deployment"].Validate(raw); err == nil {
				t.Errorf("%s: accepted", name)
			}
		})
	}
	if err := schemas["apps/v1/Deployment"].Validate(dep.raw); err != nil {
		t.Fatalf("the unmutated Deployment must pass: %v", err)
	}
}

// TestRuntimeCanSandboxCode: the runtime container, and only it, runs
// without the default seccomp and AppArmor profiles (which refuse the user
// namespace and the mounts of its code sandbox), still as non-root, with
// no capabilities, no privilege escalation and not privileged.
func TestRuntimeCanSandboxCode(t *testing.T) {
	for name, vals := range valueSets(t) {
		for _, o := range render(t, vals, false) {
			if o.Kind != "Deployment" {
				continue
			}
			pod := dig(o.raw, "spec", "template", "spec")
			c := dig(pod, "containers").([]any)[0]
			sc := dig(c, "securityContext").(map[string]any)
			seccomp, _ := dig(sc, "seccompProfile", "type").(string)
			apparmor, _ := dig(sc, "appArmorProfile", "type").(string)
			if o.Metadata.Name == "assay-runtime" {
				if seccomp != "Unconfined" || apparmor != "Unconfined" {
					t.Errorf("%s: runtime seccomp %q, AppArmor %q; the code sandbox needs Unconfined (values runtime.sandbox)", name, seccomp, apparmor)
				}
			} else if seccomp != "" || apparmor != "" {
				t.Errorf("%s: %s overrides the pod's profiles: seccomp %q, AppArmor %q", name, o.Metadata.Name, seccomp, apparmor)
			}
			if dig(pod, "securityContext", "runAsNonRoot") != true || dig(sc, "allowPrivilegeEscalation") != false || sc["privileged"] == true {
				t.Errorf("%s: %s: pod %v, container %v", name, o.Metadata.Name, dig(pod, "securityContext"), sc)
			}
			if caps, _ := dig(sc, "capabilities", "drop").([]any); len(caps) != 1 || caps[0] != "ALL" {
				t.Errorf("%s: %s keeps capabilities: %v", name, o.Metadata.Name, sc["capabilities"])
			}
		}
	}
}
