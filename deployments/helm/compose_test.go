package helm_test

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestComposeInStepWithChart: docker-compose.yml runs the same images and
// sets the same variables, service by service, as the chart with its
// default values, so a variable added to one cannot be forgotten in the
// other.
func TestComposeInStepWithChart(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image       string            `json:"image"`
			Environment map[string]string `json:"environment"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatal(err)
	}
	objs := render(t, dataStoreValues(), false)
	chartEnv := envNames(t, objs)
	images := map[string]string{}
	for _, o := range objs {
		if o.Kind == "Deployment" {
			c := dig(o.raw, "spec", "template", "spec", "containers").([]any)[0]
			images[strings.TrimPrefix(o.Metadata.Name, "assay-")] = dig(c, "image").(string)
		}
	}
	if len(chartEnv) != 6 {
		t.Fatalf("chart renders %d services, want the six", len(chartEnv))
	}
	for svc, want := range chartEnv {
		cs, ok := compose.Services[svc]
		if !ok {
			t.Errorf("compose has no service %s", svc)
			continue
		}
		if got := interpolateDefaults(cs.Image); got != images[svc] {
			t.Errorf("%s image: compose %q, chart %q", svc, got, images[svc])
		}
		var got []string
		for k := range cs.Environment {
			got = append(got, k)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s variables differ:\n  compose only: %v\n  chart only:   %v", svc, minus(got, want), minus(want, got))
		}
		for _, k := range got {
			if !strings.HasPrefix(k, strings.ToUpper(svc)+"_") {
				t.Errorf("%s: %s does not carry the service's prefix", svc, k)
			}
		}
	}
}

var compoVar = regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`)

// interpolateDefaults replaces ${VAR:-default} by its default, as Compose
// does with VAR unset.
func interpolateDefaults(s string) string { return compoVar.ReplaceAllString(s, "$1") }

func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}
