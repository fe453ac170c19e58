package helm_test

import (
	"encoding/base64"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// pairs are the service-to-service calls, caller first: each has a token
// of its own that only its two services hold.
var pairs = [][2]string{
	{"gateway", "registry"}, {"gateway", "runtime"}, {"gateway", "tracing"},
	{"runtime", "registry"}, {"runtime", "tracing"},
	{"tracing", "registry"}, {"registry", "tracing"},
}

var services = []string{"gateway", "registry", "runtime", "tracing", "writer", "console"}

// secretVar matches the variables that carry a platform secret: a token,
// the admin key, the vault key (and the shared internal token of before).
var secretVar = regexp.MustCompile(`_TOKEN(_|$)|ADMIN_KEY|VAULT_KEY`)

// ownSecrets are the secret variables svc must have, and the only ones:
// <SVC>_TOKEN_TO_<CALLEE> and <SVC>_TOKEN_FROM_<CALLER> for its pairs, with
// the pair they belong to, the admin key in the gateway and the vault key
// in the registry.
func ownSecrets(svc string) map[string]string {
	out := map[string]string{}
	P := strings.ToUpper(svc)
	for _, p := range pairs {
		if p[0] == svc {
			out[P+"_TOKEN_TO_"+strings.ToUpper(p[1])] = p[0] + "-" + p[1]
		}
		if p[1] == svc {
			out[P+"_TOKEN_FROM_"+strings.ToUpper(p[0])] = p[0] + "-" + p[1]
		}
	}
	switch svc {
	case "gateway":
		out["GATEWAY_ADMIN_KEY"] = "admin"
	case "registry":
		out["REGISTRY_VAULT_KEY"] = "vault"
	}
	return out
}

// checkOwnSecrets checks that each service's secret variables are exactly
// its own, and that value(svc, name) (what the variable is set to: a
// value, a Secret key, a Compose variable) is the same at both ends of a
// pair and differs between pairs and from the keys.
func checkOwnSecrets(t *testing.T, where string, env map[string][]string, value func(svc, name string) string) {
	t.Helper()
	byPair := map[string]string{}
	owner := map[string]string{}
	for _, svc := range services {
		want := ownSecrets(svc)
		var got []string
		for _, name := range env[svc] {
			if secretVar.MatchString(name) {
				got = append(got, name)
			}
		}
		sort.Strings(got)
		var wantNames []string
		for name := range want {
			wantNames = append(wantNames, name)
		}
		sort.Strings(wantNames)
		if strings.Join(got, " ") != strings.Join(wantNames, " ") {
			t.Errorf("%s: %s has secrets %v, want only its own %v", where, svc, got, wantNames)
			continue
		}
		for name, pair := range want {
			v := value(svc, name)
			if v == "" {
				t.Errorf("%s: %s: %s has no value", where, svc, name)
				continue
			}
			if prev, ok := byPair[pair]; ok && prev != v {
				t.Errorf("%s: the two ends of %s differ (%s of %s)", where, pair, name, svc)
			}
			byPair[pair] = v
		}
	}
	for pair, v := range byPair {
		if other, dup := owner[v]; dup {
			t.Errorf("%s: %s and %s share one secret", where, pair, other)
		}
		owner[v] = pair
	}
}

// TestChartGivesEachServiceOnlyItsSecrets: in the rendered chart each
// Deployment reads only its own secrets, from a Secret of its own (or the
// shared one of the data-store URLs), and each pair's two ends read the
// same token, which no other pair shares.
func TestChartGivesEachServiceOnlyItsSecrets(t *testing.T) {
	objs := render(t, dataStoreValues(), false)
	secrets := map[string]map[string]any{}
	for _, o := range objs {
		if o.Kind == "Secret" {
			secrets[o.Metadata.Name], _ = o.raw["data"].(map[string]any)
		}
	}
	refs := map[string]map[string][2]string{} // svc → variable → (Secret, key)
	for _, o := range objs {
		if o.Kind != "Deployment" {
			continue
		}
		svc := strings.TrimPrefix(o.Metadata.Name, "assay-")
		refs[svc] = map[string][2]string{}
		c := dig(o.raw, "spec", "template", "spec", "containers").([]any)[0]
		for _, e := range dig(c, "env").([]any) {
			m := e.(map[string]any)
			if ref, ok := dig(m, "valueFrom", "secretKeyRef").(map[string]any); ok {
				refs[svc][m["name"].(string)] = [2]string{ref["name"].(string), ref["key"].(string)}
			}
		}
		for _, v := range dig(o.raw, "spec", "template", "spec", "volumes").([]any) {
			if dig(v, "secret") != nil {
				t.Errorf("%s mounts a Secret volume: %v", svc, v)
			}
		}
	}
	checkOwnSecrets(t, "chart", envNames(t, objs), func(svc, name string) string {
		ref, ok := refs[svc][name]
		if !ok {
			t.Errorf("chart: %s: %s is not read from a Secret", svc, name)
			return ""
		}
		if ref[0] != "assay-"+svc+"-secrets" {
			t.Errorf("chart: %s reads %s from Secret %s, not its own", svc, name, ref[0])
		}
		v, _ := secrets[ref[0]][ref[1]].(string)
		return v
	})
	// The service's own Secret holds nothing beyond what it reads.
	for svc, vars := range refs {
		data := secrets["assay-"+svc+"-secrets"]
		used := map[string]bool{}
		for _, ref := range vars {
			if ref[0] == "assay-"+svc+"-secrets" {
				used[ref[1]] = true
			}
		}
		for key := range data {
			if !used[key] {
				t.Errorf("chart: Secret assay-%s-secrets holds %s, which %s does not read", svc, key, svc)
			}
		}
	}
	if v, _ := secrets["assay-registry-secrets"]["vault-key"].(string); v != "" {
		// The variable's value (the Secret's data decoded) is itself
		// base64 of 32 bytes: 44 characters.
		if raw, err := base64.StdEncoding.DecodeString(v); err != nil || len(raw) != 44 {
			t.Errorf("chart: the generated vault key is not base64 of 32 bytes: %d characters, %v", len(raw), err)
		}
	}
}

// TestComposeGivesEachServiceOnlyItsSecrets: in docker-compose.yml each
// service's secrets are its own, each pair's two ends take the same
// variable, and no secret has a default.
func TestComposeGivesEachServiceOnlyItsSecrets(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `json:"environment"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatal(err)
	}
	env := map[string][]string{}
	for _, svc := range services {
		for name := range compose.Services[svc].Environment {
			env[svc] = append(env[svc], name)
		}
	}
	ref := regexp.MustCompile(`^\$\{([A-Z0-9_]+)(:\?[^}]*)?\}$`)
	checkOwnSecrets(t, "compose", env, func(svc, name string) string {
		v := compose.Services[svc].Environment[name]
		m := ref.FindStringSubmatch(v)
		if m == nil || m[2] == "" {
			t.Errorf("compose: %s: %s = %q, want ${VAR:?message}: required, no default", svc, name, v)
			return ""
		}
		return m[1]
	})
}

// TestPlatformGivesEachServiceOnlyItsSecrets: what scripts/platform.sh
// (make up) starts each service with holds only that service's secrets,
// each pair's two ends get the same generated token, and every variable
// carries the service's own prefix.
func TestPlatformGivesEachServiceOnlyItsSecrets(t *testing.T) {
	run := t.TempDir()
	env := map[string][]string{}
	values := map[string]map[string]string{}
	for _, svc := range services {
		cmd := exec.Command("bash", "../../scripts/platform.sh", "env", svc)
		cmd.Env = append(os.Environ(), "ASSAY_RUN_DIR="+run, "ASSAY_ADMIN_KEY=", "ASSAY_VAULT_KEY=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("platform.sh env %s: %v", svc, err)
		}
		values[svc] = map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line == "" {
				continue
			}
			name, value, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("platform.sh env %s: %q is not K=V", svc, line)
			}
			if !strings.HasPrefix(name, strings.ToUpper(svc)+"_") {
				t.Errorf("platform: %s gets %s, another service's variable", svc, name)
			}
			env[svc] = append(env[svc], name)
			values[svc][name] = value
		}
	}
	checkOwnSecrets(t, "platform", env, func(svc, name string) string { return values[svc][name] })
}
