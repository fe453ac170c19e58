package helm_test

import (
	"encoding/base64"
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// dataStoreVars are each service's data-store variables that carry a
// credential, and the key of the chart's Secret each must come from: every
// service gets its own, and no other.
var dataStoreVars = map[string]map[string]string{
	"gateway":  {"GATEWAY_POSTGRES_URL": "postgres-url", "GATEWAY_POSTGRES_MIGRATE_URL": "postgres-migrate-url"},
	"registry": {"REGISTRY_POSTGRES_URL": "postgres-url", "REGISTRY_POSTGRES_MIGRATE_URL": "postgres-migrate-url", "REGISTRY_NATS_PASSWORD": "nats-registry-password"},
	"runtime":  {"RUNTIME_NATS_PASSWORD": "nats-runtime-password"},
	"tracing": {"TRACING_POSTGRES_URL": "postgres-url", "TRACING_CLICKHOUSE_URL": "clickhouse-tracing-url",
		"TRACING_CLICKHOUSE_READ_URL": "clickhouse-reader-url", "TRACING_NATS_PASSWORD": "nats-tracing-password"},
	"writer":  {"WRITER_CLICKHOUSE_URL": "clickhouse-writer-url", "WRITER_NATS_PASSWORD": "nats-writer-password"},
	"console": {},
}

var credentialVar = regexp.MustCompile(`_(POSTGRES_URL|POSTGRES_MIGRATE_URL|CLICKHOUSE_URL|CLICKHOUSE_READ_URL|NATS_PASSWORD)$`)

// TestChartDataStoresCarryCredentials: the chart signs every service in to
// PostgreSQL, ClickHouse and NATS with a credential of its own role from the
// Secret, and refuses to render without them or with a superuser.
func TestChartDataStoresCarryCredentials(t *testing.T) {
	for name, mutate := range map[string]func(v map[string]any){
		"no URLs":                  func(v map[string]any) { delete(v, "postgres"); delete(v, "clickhouse") },
		"no migration URL":         func(v map[string]any) { delete(v["postgres"].(map[string]any), "migrateUrl") },
		"a URL without a password": func(v map[string]any) { v["postgres"].(map[string]any)["url"] = "postgres://assay_app@pg:5432/assay" },
		"the PostgreSQL superuser": func(v map[string]any) { v["postgres"].(map[string]any)["url"] = "postgres://postgres:pw@pg:5432/assay" },
		"ClickHouse's default user": func(v map[string]any) {
			v["clickhouse"].(map[string]any)["writerUrl"] = "clickhouse://default:pw@ch:9000/assay"
		},
		"no reader URL": func(v map[string]any) { delete(v["clickhouse"].(map[string]any), "readerUrl") },
	} {
		v := dataStoreValues()
		mutate(v)
		if _, err := renderErr(t, v, false); err == nil {
			t.Errorf("%s: the chart rendered", name)
		}
	}

	objs := render(t, dataStoreValues(), false)
	secrets := map[string]map[string]string{}
	for _, o := range objs {
		if o.Kind != "Secret" {
			continue
		}
		secrets[o.Metadata.Name] = map[string]string{}
		for k, v := range dig(o.raw, "data").(map[string]any) {
			b, err := base64.StdEncoding.DecodeString(v.(string))
			if err != nil {
				t.Fatal(err)
			}
			secrets[o.Metadata.Name][k] = string(b)
		}
	}
	main := secrets["assay-secrets"]
	for _, o := range objs {
		if o.Kind != "Deployment" {
			continue
		}
		svc := strings.TrimPrefix(o.Metadata.Name, "assay-")
		want := dataStoreVars[svc]
		got := map[string]string{}
		c := dig(o.raw, "spec", "template", "spec", "containers").([]any)[0]
		for _, e := range dig(c, "env").([]any) {
			m := e.(map[string]any)
			n := m["name"].(string)
			if !credentialVar.MatchString(n) {
				continue
			}
			ref, _ := dig(m, "valueFrom", "secretKeyRef", "key").(string)
			if ref == "" {
				t.Errorf("%s: %s is a plain value, not from the Secret", svc, n)
				continue
			}
			got[n] = ref
		}
		for n, key := range want {
			if got[n] != key {
				t.Errorf("%s: %s from Secret key %q, want %q", svc, n, got[n], key)
			}
		}
		for n := range got {
			if _, ok := want[n]; !ok {
				t.Errorf("%s gets %s, which is not its own", svc, n)
			}
		}
		if _, nats := want[strings.ToUpper(svc)+"_NATS_PASSWORD"]; nats && env(o, strings.ToUpper(svc)+"_NATS_USER") != svc {
			t.Errorf("%s: NATS user %q, want %q", svc, env(o, strings.ToUpper(svc)+"_NATS_USER"), svc)
		}
	}
	for _, key := range []string{"postgres-url", "postgres-migrate-url", "clickhouse-writer-url", "clickhouse-tracing-url", "clickhouse-reader-url"} {
		if !regexp.MustCompile(`^[a-z]+://[^:/@]+:[^@]+@`).MatchString(main[key]) {
			t.Errorf("Secret %s = %q carries no password", key, main[key])
		}
	}

	// The NATS server's users: the repo's auth.conf (the chart's copy is the
	// same file) with the passwords the services get.
	repo, err := os.ReadFile("../nats/auth.conf")
	if err != nil {
		t.Fatal(err)
	}
	copyOf, err := os.ReadFile(chartDir + "/files/nats-auth.conf")
	if err != nil {
		t.Fatal(err)
	}
	if string(repo) != string(copyOf) {
		t.Error("helm/assay/files/nats-auth.conf differs from deployments/nats/auth.conf: copy it")
	}
	conf := secrets["assay-nats-auth"]["auth.conf"]
	want := string(repo)
	for _, svc := range []string{"registry", "runtime", "tracing", "writer"} {
		pw := main["nats-"+svc+"-password"]
		if len(pw) < 32 {
			t.Errorf("the generated NATS password of %s is %d characters", svc, len(pw))
		}
		want = strings.ReplaceAll(want, "$"+strings.ToUpper(svc)+"_NATS_PASSWORD", `"`+pw+`"`)
	}
	if conf != want {
		t.Errorf("Secret assay-nats-auth's auth.conf is not deployments/nats/auth.conf with the services' passwords:\n%s", conf)
	}
}

// TestComposeDataStoresHaveNoDefaultPasswords: docker-compose.yml has no
// default or hard-coded data-store password, signs the services in as their
// own roles and users (never postgres or default), and runs NATS with the
// services' users.
func TestComposeDataStoresHaveNoDefaultPasswords(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, m := range regexp.MustCompile(`\$\{(ASSAY_[A-Z_]*PASSWORD[A-Z_]*)(:?[-?])?([^}]*)\}`).FindAllStringSubmatch(text, -1) {
		if m[2] != ":?" {
			t.Errorf("${%s%s%s}: a password must be required (:?), with no default", m[1], m[2], m[3])
		}
	}
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `json:"environment"`
			Entrypoint  []string          `json:"entrypoint"`
			Volumes     []string          `json:"volumes"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatal(err)
	}
	url := regexp.MustCompile(`^(postgres|clickhouse)://([^:/@]+):\$\{ASSAY_[A-Z_]+:\?[^}]*\}@`)
	for svc, want := range dataStoreVars {
		env := compose.Services[svc].Environment
		for n := range env {
			if credentialVar.MatchString(n) {
				if _, ok := want[n]; !ok {
					t.Errorf("%s gets %s, which is not its own", svc, n)
				}
			}
		}
		for n := range want {
			v, ok := env[n]
			switch {
			case !ok:
				t.Errorf("%s: no %s", svc, n)
			case strings.HasSuffix(n, "_NATS_PASSWORD"):
				if !regexp.MustCompile(`^\$\{ASSAY_NATS_[A-Z]+_PASSWORD:\?`).MatchString(v) {
					t.Errorf("%s: %s = %q, want a required password", svc, n, v)
				}
				if env[strings.TrimSuffix(n, "_PASSWORD")+"_USER"] != svc {
					t.Errorf("%s: %s_USER is not %s", svc, strings.TrimSuffix(n, "_PASSWORD"), svc)
				}
			default:
				m := url.FindStringSubmatch(v)
				if m == nil {
					t.Errorf("%s: %s = %q carries no required password", svc, n, v)
				} else if m[2] == "postgres" || m[2] == "default" {
					t.Errorf("%s: %s signs in as the superuser %s", svc, n, m[2])
				}
			}
		}
	}
	if _, ok := compose.Services["clickhouse"].Environment["CLICKHOUSE_SKIP_USER_SETUP"]; ok {
		t.Error("ClickHouse keeps its passwordless default user open to the network (CLICKHOUSE_SKIP_USER_SETUP)")
	}
	nats := compose.Services["nats"]
	if !strings.Contains(strings.Join(nats.Entrypoint, " "), `include "assay/auth.conf"`) || !strings.Contains(strings.Join(nats.Volumes, " "), "deployments/nats/auth.conf:/tmp/assay/auth.conf") {
		t.Error("NATS runs without the services' users (deployments/nats/auth.conf)")
	}
	for _, svc := range []string{"registry", "runtime", "tracing", "writer"} {
		if !strings.HasPrefix(nats.Environment[strings.ToUpper(svc)+"_NATS_PASSWORD"], "${ASSAY_NATS_"+strings.ToUpper(svc)+"_PASSWORD:?") {
			t.Errorf("NATS does not get %s's password", svc)
		}
	}
}
