package helm_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/dotenv"
	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

const composeFile = "../../docker-compose.yml"

// composeSecrets runs scripts/compose-secrets.sh into an empty .env, as a
// newcomer would before `docker compose up`, and returns what it wrote.
// The environment holds only PATH: the script leaves alone a variable the
// environment already sets, and the test's environment must not hide one
// the script forgets.
func composeSecrets(t *testing.T) map[string]string {
	t.Helper()
	envFile := filepath.Join(t.TempDir(), ".env")
	cmd := exec.Command("bash", "../../scripts/compose-secrets.sh")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "ASSAY_ENV_FILE=" + envFile}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compose-secrets.sh: %v\n%s", err, out)
	}
	env, err := dotenv.Read(envFile)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// loadComposeContent loads content as docker-compose.yml with the compose
// specification's own loader (compose-go, what `docker compose` runs): it
// refuses a key set twice in one mapping, a field the specification does
// not know, a reference to a missing service and a required variable
// (${VAR:?...}) that env does not set. A lenient YAML parser accepts the
// first two.
func loadComposeContent(content []byte, env map[string]string) (*types.Project, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return nil, err
	}
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, "docker-compose.yml"), Content: content}},
		// A copy: the loader adds COMPOSE_PROJECT_NAME to the map it is given.
		Environment: without(env, ""),
	}, func(o *loader.Options) { o.SetProjectName("assay", true) })
}

// loadCompose loads docker-compose.yml with the secrets compose-secrets.sh
// generates, and returns the project and those secrets.
func loadCompose(t *testing.T) (*types.Project, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	env := composeSecrets(t)
	p, err := loadComposeContent(b, env)
	if err != nil {
		t.Fatalf("docker-compose.yml does not load with the compose specification's loader: %v", err)
	}
	return p, env
}

// TestComposeFileLoads: docker-compose.yml loads as `docker compose` loads
// it, given only the .env scripts/compose-secrets.sh writes.
// Every variable the script generates is one the file uses, so the two
// cannot drift apart in either direction.
func TestComposeFileLoads(t *testing.T) {
	p, env := loadCompose(t)
	if len(p.Services) == 0 {
		t.Fatal("docker-compose.yml loads with no service")
	}
	b, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	for k := range env {
		if !strings.Contains(string(b), "${"+k+":") {
			t.Errorf("compose-secrets.sh generates %s, which docker-compose.yml does not use", k)
		}
	}
}

// TestComposeLoaderRefusesWhatDockerComposeWould guards the guard: the
// loader above refuses a duplicate key, an unknown field and an unset
// required variable, so TestComposeFileLoads can fail.
func TestComposeLoaderRefusesWhatDockerComposeWould(t *testing.T) {
	b, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	env := composeSecrets(t)
	const anchor = "      GATEWAY_ADDR: 0.0.0.0:8080\n"
	if !strings.Contains(string(b), anchor) {
		t.Fatalf("docker-compose.yml has no %q to edit", anchor)
	}
	cases := map[string]struct {
		content string
		env     map[string]string
		want    string
	}{
		"duplicate key": {strings.Replace(string(b), anchor, anchor+anchor, 1), env, "GATEWAY_ADDR"},
		"unknown field": {strings.Replace(string(b), "    environment:\n"+anchor, "    environmnet:\n"+anchor, 1), env, "environmnet"},
		"unset secret":  {string(b), without(env, "ASSAY_VAULT_KEY"), "ASSAY_VAULT_KEY"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := loadComposeContent([]byte(c.content), c.env)
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("the refusal does not name %s: %v", c.want, err)
			}
		})
	}
}

func without(m map[string]string, key string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// composeOnlyServices are the services docker-compose.yml runs and the
// chart does not, each with why.
var composeOnlyServices = map[string]string{
	"postgres":   "the chart connects to an operated PostgreSQL (postgres.url), it does not run one",
	"clickhouse": "the chart connects to an operated ClickHouse (clickhouse.*Url), it does not run one",
	"nats":       "the chart connects to an operated NATS JetStream (nats.url), it does not run one",
}

// TestComposeInStepWithChart: docker-compose.yml runs the same services
// and images as the chart with its default values, and gives each the same
// variables, taking the same of them from secrets, so a variable added to
// one cannot be forgotten in the other.
func TestComposeInStepWithChart(t *testing.T) {
	p, secrets := loadCompose(t)
	objs := render(t, dataStoreValues(), false)
	chartEnv := envNames(t, objs)
	chartSecret := map[string][]string{}
	images := map[string]string{}
	for _, o := range objs {
		if o.Kind != "Deployment" {
			continue
		}
		svc := strings.TrimPrefix(o.Metadata.Name, "assay-")
		c := dig(o.raw, "spec", "template", "spec", "containers").([]any)[0]
		images[svc] = dig(c, "image").(string)
		for _, e := range dig(c, "env").([]any) {
			e := e.(map[string]any)
			if dig(e, "valueFrom", "secretKeyRef") != nil {
				chartSecret[svc] = append(chartSecret[svc], e["name"].(string))
			}
		}
		sort.Strings(chartSecret[svc])
	}
	if len(chartEnv) != 6 {
		t.Fatalf("chart renders %d services, want the six", len(chartEnv))
	}
	for svc := range p.Services {
		if _, ok := chartEnv[svc]; !ok && composeOnlyServices[svc] == "" {
			t.Errorf("compose runs %s, the chart does not", svc)
		}
	}
	for svc, want := range chartEnv {
		cs, ok := p.Services[svc]
		if !ok {
			t.Errorf("compose has no service %s", svc)
			continue
		}
		if cs.Image != images[svc] {
			t.Errorf("%s image: compose %q, chart %q", svc, cs.Image, images[svc])
		}
		var got, gotSecret []string
		for k, v := range cs.Environment {
			got = append(got, k)
			if v != nil && carriesSecret(*v, secrets) {
				gotSecret = append(gotSecret, k)
			}
		}
		sort.Strings(got)
		sort.Strings(gotSecret)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s variables differ:\n  compose only: %v\n  chart only:   %v", svc, minus(got, want), minus(want, got))
		}
		if strings.Join(gotSecret, " ") != strings.Join(chartSecret[svc], " ") {
			t.Errorf("%s variables from secrets differ:\n  compose only: %v\n  chart only:   %v", svc, minus(gotSecret, chartSecret[svc]), minus(chartSecret[svc], gotSecret))
		}
		for _, k := range got {
			if !strings.HasPrefix(k, strings.ToUpper(svc)+"_") {
				t.Errorf("%s: %s does not carry the service's prefix", svc, k)
			}
		}
	}
}

// carriesSecret reports whether v holds one of the generated secrets.
func carriesSecret(v string, secrets map[string]string) bool {
	for _, s := range secrets {
		if s != "" && strings.Contains(v, s) {
			return true
		}
	}
	return false
}

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
