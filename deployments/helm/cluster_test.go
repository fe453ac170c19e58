package helm_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// compiled holds the schemas, compiled once per test binary.
var compiled struct {
	once    sync.Once
	schemas map[string]*jsonschema.Schema
}

// validate checks every object against the schema of its kind, as the API
// server would decode it.
func validate(t *testing.T, where string, objs []object) {
	t.Helper()
	compiled.once.Do(func() { compiled.schemas = compileSchemas(t) })
	schemas := compiled.schemas
	if schemas == nil {
		t.Fatal("the schemas did not compile")
	}
	for _, o := range objs {
		s, ok := schemas[o.APIVersion+"/"+o.Kind]
		if !ok {
			t.Errorf("%s: %s: no schema for %s/%s", where, o.id(), o.APIVersion, o.Kind)
			continue
		}
		if err := s.Validate(o.raw); err != nil {
			t.Errorf("%s: %s: %v", where, o.id(), err)
		}
	}
}

func deployments(objs []object) map[string]object {
	out := map[string]object{}
	for _, o := range objs {
		if o.Kind == "Deployment" {
			out[strings.TrimPrefix(o.Metadata.Name, "assay-")] = o
		}
	}
	return out
}

func container(d object) map[string]any {
	return dig(d.raw, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)
}

// envEntry is the variable name of d's container, and its position (-1: absent).
func envEntry(d object, name string) (map[string]any, int) {
	for i, e := range dig(container(d), "env").([]any) {
		if m := e.(map[string]any); m["name"] == name {
			return m, i
		}
	}
	return nil, -1
}

// TestPreStopSleepsWhereTheClusterCan: on Kubernetes 1.30 and later the
// pods get a preStop sleep of shutdownDelaySeconds (the kubelet waits
// while Services and load balancers drop the terminating pod, then sends
// SIGTERM) and the app's own delay is 0, so the wait is not paid twice; on
// older clusters (the chart supports 1.25) there is no hook and the app
// keeps serving with /ready 503 for the delay after SIGTERM. Either way the
// kill deadline comes after the wait and the drain.
func TestPreStopSleepsWhereTheClusterCan(t *testing.T) {
	// the last minor without the sleep action, the first with it (with a
	// provider's suffix, as GKE and EKS report it), a later one
	for _, kv := range []string{"v1.29.9", "v1.30.4-gke.1348000", "v1.31.2"} {
		for _, delay := range []int{0, 30} {
			where := fmt.Sprintf("%s delay %d", kv, delay)
			vals := dataStoreValues()
			vals["shutdownDelaySeconds"] = delay
			objs := renderAt(t, vals, kv)
			validate(t, where, objs)
			// A sleep of 0 seconds is refused before Kubernetes 1.32: no hook then.
			sleeps := !strings.HasPrefix(kv, "v1.29") && delay > 0
			ds := deployments(objs)
			if len(ds) != 6 {
				t.Fatalf("%s: %d Deployments, want the six", where, len(ds))
			}
			for svc, d := range ds {
				preStop, _ := dig(container(d), "lifecycle", "preStop", "sleep", "seconds").(float64)
				appDelay, err := time.ParseDuration(env(d, strings.ToUpper(svc)+"_SHUTDOWN_DELAY"))
				if err != nil {
					t.Errorf("%s: %s: %v", where, svc, err)
				}
				if sleeps {
					if int(preStop) != delay || appDelay != 0 {
						t.Errorf("%s: %s: preStop sleep %v s and app delay %s, want %d s and 0s", where, svc, preStop, appDelay, delay)
					}
				} else if dig(container(d), "lifecycle") != nil || appDelay != time.Duration(delay)*time.Second {
					t.Errorf("%s: %s: lifecycle %v and app delay %s, want no hook and %d s", where, svc, dig(container(d), "lifecycle"), appDelay, delay)
				}
				grace, _ := dig(d.raw, "spec", "template", "spec", "terminationGracePeriodSeconds").(float64)
				if need := time.Duration(preStop)*time.Second + appDelay + httpShutdownTimeout; time.Duration(grace)*time.Second <= need {
					t.Errorf("%s: %s: terminationGracePeriodSeconds %v, not above the wait and the drain (%s)", where, svc, grace, need)
				}
			}
		}
	}
}

// TestPodExtras: pod annotations, extra variables, envFrom sources,
// volumes and mounts, each global and per service (the service's added to
// or winning over the global ones), and a topology spread over nodes and
// zones by default that a service may replace.
func TestPodExtras(t *testing.T) {
	vals := dataStoreValues()
	vals["podAnnotations"] = map[string]any{"example.com/team": "evals", "example.com/shared": "global", "example.com/weight": 3}
	vals["extraEnv"] = []any{map[string]any{"name": "TZ", "value": "UTC"}}
	vals["extraEnvFrom"] = []any{map[string]any{"configMapRef": map[string]any{"name": "proxy-settings"}}}
	vals["extraVolumes"] = []any{map[string]any{"name": "ca", "configMap": map[string]any{"name": "ca-bundle"}}}
	vals["extraVolumeMounts"] = []any{map[string]any{"name": "ca", "mountPath": "/etc/ssl/custom", "readOnly": true}}
	vals["gateway"] = map[string]any{
		"podAnnotations": map[string]any{"example.com/shared": "gateway", "example.com/only": "gateway"},
		"extraEnv":       []any{map[string]any{"name": "GATEWAY_LOG_LEVEL_EXTRA", "value": "1"}},
	}
	vals["registry"] = map[string]any{"extraEnvFrom": []any{map[string]any{"secretRef": map[string]any{"name": "registry-extra"}}}}
	vals["tracing"] = map[string]any{
		"extraVolumes":      []any{map[string]any{"name": "prices", "configMap": map[string]any{"name": "model-prices"}}},
		"extraVolumeMounts": []any{map[string]any{"name": "prices", "mountPath": "/etc/assay/prices"}},
	}
	vals["writer"] = map[string]any{"topologySpreadConstraints": []any{map[string]any{
		"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}}}
	objs := render(t, vals, true)
	validate(t, "extras", objs)
	ds := deployments(objs)
	if len(ds) != 6 {
		t.Fatalf("%d Deployments, want the six", len(ds))
	}
	for svc, d := range ds {
		ann, _ := dig(d.raw, "spec", "template", "metadata", "annotations").(map[string]any)
		wantShared := "global"
		if svc == "gateway" {
			wantShared = "gateway"
			if ann["example.com/only"] != "gateway" {
				t.Errorf("gateway: pod annotations %v lack its own", ann)
			}
		} else if _, ok := ann["example.com/only"]; ok {
			t.Errorf("%s carries the gateway's pod annotation", svc)
		}
		if ann["example.com/team"] != "evals" || ann["example.com/shared"] != wantShared {
			t.Errorf("%s: pod annotations %v, want team=evals and shared=%s", svc, ann, wantShared)
		}
		if _, ok := ann["checksum/secret"]; !ok {
			t.Errorf("%s: the extra annotations replaced checksum/secret", svc)
		}
		if e, _ := envEntry(d, "TZ"); e == nil || e["value"] != "UTC" {
			t.Errorf("%s: no TZ from extraEnv", svc)
		}
		if _, i := envEntry(d, "GATEWAY_LOG_LEVEL_EXTRA"); (i >= 0) != (svc == "gateway") {
			t.Errorf("%s: gateway.extraEnv present=%v", svc, i >= 0)
		}
		envFrom := fmt.Sprint(dig(container(d), "envFrom"))
		if !strings.Contains(envFrom, "proxy-settings") || strings.Contains(envFrom, "registry-extra") != (svc == "registry") {
			t.Errorf("%s: envFrom %s", svc, envFrom)
		}
		vols := fmt.Sprint(dig(d.raw, "spec", "template", "spec", "volumes"))
		mounts := fmt.Sprint(dig(container(d), "volumeMounts"))
		for _, want := range []string{"tmp", "ca-bundle"} {
			if !strings.Contains(vols, want) {
				t.Errorf("%s: volumes %s lack %s", svc, vols, want)
			}
		}
		for _, want := range []string{"/tmp", "/etc/ssl/custom"} {
			if !strings.Contains(mounts, want) {
				t.Errorf("%s: mounts %s lack %s", svc, mounts, want)
			}
		}
		if strings.Contains(vols, "model-prices") != (svc == "tracing") || strings.Contains(mounts, "/etc/assay/prices") != (svc == "tracing") {
			t.Errorf("%s: tracing's own volume: volumes %s, mounts %s", svc, vols, mounts)
		}

		tsc, _ := dig(d.raw, "spec", "template", "spec", "topologySpreadConstraints").([]any)
		keys := map[string]map[string]any{}
		for _, c := range tsc {
			c := c.(map[string]any)
			keys[c["topologyKey"].(string)] = c
			sel := dig(c, "labelSelector", "matchLabels").(map[string]any)
			if sel["app.kubernetes.io/component"] != svc || sel["app.kubernetes.io/instance"] != "assay" {
				t.Errorf("%s: spread %v does not select the service's own pods", svc, c)
			}
		}
		if svc == "writer" {
			if len(tsc) != 1 || dig(keys["topology.kubernetes.io/zone"], "whenUnsatisfiable") != "DoNotSchedule" {
				t.Errorf("writer: spread %v, want its own", tsc)
			}
			continue
		}
		for _, k := range []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone"} {
			if c := keys[k]; c == nil || c["whenUnsatisfiable"] != "ScheduleAnyway" {
				t.Errorf("%s: no ScheduleAnyway spread over %s: %v", svc, k, tsc)
			}
		}
	}
}

// TestEveryStatelessServiceAutoscales: each of the six services offers a
// HorizontalPodAutoscaler in the chart's values (off by default), on CPU
// and optionally memory; the Deployment then leaves replicas to it and
// keeps its PodDisruptionBudget.
func TestEveryStatelessServiceAutoscales(t *testing.T) {
	b, err := os.ReadFile(chartDir + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defaults := map[string]any{}
	if err := yaml.Unmarshal(b, &defaults); err != nil {
		t.Fatal(err)
	}
	for _, svc := range services {
		a, _ := dig(defaults, svc, "autoscaling").(map[string]any)
		_, memory := a["targetMemoryUtilizationPercentage"]
		if a == nil || a["enabled"] != false || a["targetCPUUtilizationPercentage"] == nil || !memory {
			t.Errorf("values.yaml: %s.autoscaling is %v, want it offered (enabled: false, a CPU and a memory target)", svc, a)
		}
	}
	vals := dataStoreValues()
	for _, svc := range services {
		vals[svc] = map[string]any{"autoscaling": map[string]any{"enabled": true, "minReplicas": 3, "maxReplicas": 9, "targetCPUUtilizationPercentage": 60, "targetMemoryUtilizationPercentage": 80}}
	}
	objs := render(t, vals, false)
	validate(t, "autoscaled", objs)
	byID := map[string]object{}
	for _, o := range objs {
		byID[o.id()] = o
	}
	for _, svc := range services {
		hpa, ok := byID["HorizontalPodAutoscaler/assay-"+svc]
		if !ok {
			t.Errorf("%s: no HorizontalPodAutoscaler", svc)
			continue
		}
		if dig(hpa.raw, "spec", "scaleTargetRef", "name") != "assay-"+svc || dig(hpa.raw, "spec", "minReplicas") != 3.0 || dig(hpa.raw, "spec", "maxReplicas") != 9.0 {
			t.Errorf("%s: HPA spec %v", svc, dig(hpa.raw, "spec"))
		}
		if m := fmt.Sprint(dig(hpa.raw, "spec", "metrics")); !strings.Contains(m, "name:cpu") || !strings.Contains(m, "name:memory") || !strings.Contains(m, "averageUtilization:80") {
			t.Errorf("%s: HPA metrics %s, want CPU and memory", svc, m)
		}
		if r := dig(byID["Deployment/assay-"+svc].raw, "spec", "replicas"); r != nil {
			t.Errorf("%s: the Deployment sets replicas %v under an HPA", svc, r)
		}
		if _, ok := byID["PodDisruptionBudget/assay-"+svc]; !ok {
			t.Errorf("%s: no PodDisruptionBudget", svc)
		}
	}
	for _, o := range render(t, dataStoreValues(), false) {
		if o.Kind == "HorizontalPodAutoscaler" {
			t.Errorf("defaults: %s rendered; autoscaling is off by default", o.id())
		}
	}
}

// externalStoreValues point the chart at PostgreSQL, ClickHouse and NATS
// run elsewhere, every password in a Secret the operator (or a database
// operator) keeps: the chart reads them, it never holds them.
func externalStoreValues() map[string]any {
	pw := func(name, key string) map[string]any { return map[string]any{"name": name, "key": key} }
	return map[string]any{
		"postgres": map[string]any{
			"host": "pg-rw.db.svc", "port": 5432, "database": "assay", "params": "sslmode=require",
			"roles": map[string]any{
				"app":   map[string]any{"user": "assay_app", "passwordSecret": pw("pg-app", "password")},
				"owner": map[string]any{"user": "assay_owner", "passwordSecret": pw("pg-owner", "password")},
			},
		},
		"clickhouse": map[string]any{
			"host": "ch.db.svc", "port": 9440, "database": "assay", "params": "secure=true",
			"users": map[string]any{
				"writer":  map[string]any{"user": "assay_writer", "passwordSecret": pw("ch-users", "writer")},
				"tracing": map[string]any{"user": "assay_tracing", "passwordSecret": pw("ch-users", "tracing")},
				"reader":  map[string]any{"user": "assay_reader", "passwordSecret": pw("ch-users", "reader")},
			},
		},
		"nats": map[string]any{
			"url": "nats://nats.messaging.svc:4222",
			"passwordSecrets": map[string]any{
				"registry": pw("nats-users", "registry"), "runtime": pw("nats-users", "runtime"),
				"tracing": pw("nats-users", "tracing"), "writer": pw("nats-users", "writer"),
			},
		},
	}
}

// TestExternalDataStoresFromExistingSecrets: with external endpoints and
// each credential named by Secret and key, the chart runs no data store of
// its own, every service reads its credentials from those Secrets
// (secretKeyRef; a URL is assembled by Kubernetes from the endpoint and
// the password variable defined before it), and no Secret of the chart
// holds or generates any of them.
func TestExternalDataStoresFromExistingSecrets(t *testing.T) {
	files, objs := renderIn(t, externalStoreValues(), newCluster())
	validate(t, "external", objs)
	for _, o := range objs {
		switch o.Kind {
		case "Deployment":
			if _, ok := dataStoreVars[strings.TrimPrefix(o.Metadata.Name, "assay-")]; !ok {
				t.Errorf("%s: not one of the services", o.id())
			}
		case "Service", "Secret", "PodDisruptionBudget", "NetworkPolicy":
		default:
			t.Errorf("%s rendered: the chart runs no data store", o.id())
		}
	}
	// password variable of each URL, and the Secret and key it comes from
	urlVars := map[string]struct{ pwVar, secret, key, url string }{
		"postgres-url":          {"ASSAY_PG_APP_PASSWORD", "pg-app", "password", "postgres://assay_app:$(ASSAY_PG_APP_PASSWORD)@pg-rw.db.svc:5432/assay?sslmode=require"},
		"postgres-migrate-url":  {"ASSAY_PG_OWNER_PASSWORD", "pg-owner", "password", "postgres://assay_owner:$(ASSAY_PG_OWNER_PASSWORD)@pg-rw.db.svc:5432/assay?sslmode=require"},
		"clickhouse-writer-url": {"ASSAY_CH_WRITER_PASSWORD", "ch-users", "writer", "clickhouse://assay_writer:$(ASSAY_CH_WRITER_PASSWORD)@ch.db.svc:9440/assay?secure=true"},
		"clickhouse-tracing-url": {"ASSAY_CH_TRACING_PASSWORD", "ch-users", "tracing",
			"clickhouse://assay_tracing:$(ASSAY_CH_TRACING_PASSWORD)@ch.db.svc:9440/assay?secure=true"},
		"clickhouse-reader-url": {"ASSAY_CH_READER_PASSWORD", "ch-users", "reader", "clickhouse://assay_reader:$(ASSAY_CH_READER_PASSWORD)@ch.db.svc:9440/assay?secure=true"},
	}
	ds := deployments(objs)
	for svc, vars := range dataStoreVars {
		d, ok := ds[svc]
		if !ok {
			t.Errorf("no Deployment for %s", svc)
			continue
		}
		for name, key := range vars {
			e, at := envEntry(d, name)
			if e == nil {
				t.Errorf("%s: no %s", svc, name)
				continue
			}
			if strings.HasPrefix(key, "nats-") {
				ref, _ := dig(e, "valueFrom", "secretKeyRef").(map[string]any)
				if ref["name"] != "nats-users" || ref["key"] != svc {
					t.Errorf("%s: %s from %v, want Secret nats-users key %s", svc, name, ref, svc)
				}
				continue
			}
			want := urlVars[key]
			if e["value"] != want.url {
				t.Errorf("%s: %s = %v, want %s", svc, name, e["value"], want.url)
			}
			// Kubernetes expands $(VAR) only from variables defined earlier.
			pw, pwAt := envEntry(d, want.pwVar)
			ref, _ := dig(pw, "valueFrom", "secretKeyRef").(map[string]any)
			if pwAt < 0 || pwAt > at || ref["name"] != want.secret || ref["key"] != want.key {
				t.Errorf("%s: %s (at %d) from %v (at %d), want Secret %s key %s before %s", svc, want.pwVar, pwAt, ref, pwAt, want.secret, want.key, name)
			}
		}
	}
	for _, o := range objs {
		if o.Kind != "Secret" {
			continue
		}
		if o.Metadata.Name == "assay-secrets" || o.Metadata.Name == "assay-nats-auth" {
			t.Errorf("Secret %s rendered: every credential it would hold comes from an existing Secret", o.Metadata.Name)
		}
		for k := range dig(o.raw, "data").(map[string]any) {
			if strings.Contains(k, "postgres") || strings.Contains(k, "clickhouse") || strings.HasPrefix(k, "nats-") {
				t.Errorf("Secret %s holds %s, which comes from an existing Secret", o.Metadata.Name, k)
			}
		}
	}
	if notes := files["assay/templates/NOTES.txt"]; strings.Contains(notes, "nats-auth") {
		t.Errorf("NOTES.txt names a nats-auth Secret the chart does not render:\n%s", notes)
	}

	// With secrets.existingSecret too, NOTES lists no key of the shared
	// Secret: there is none left to bring.
	vals := withValues(externalStoreValues(), map[string]any{"secrets": map[string]any{"existingSecret": "gitops"}})
	files, objs = renderIn(t, vals, newCluster())
	validate(t, "external+existingSecret", objs)
	if notes := files["assay/templates/NOTES.txt"]; regexp.MustCompile(`postgres-url|clickhouse-|nats-\w+-password|\n\s*gitops: `).MatchString(notes) {
		t.Errorf("NOTES.txt asks for keys that come from the named Secrets:\n%s", notes)
	}

	// What the chart refuses, naming the value at fault.
	for name, c := range map[string]struct {
		mutate func(v map[string]any)
		want   string
	}{
		"a URL as well as a host": {func(v map[string]any) {
			v["postgres"].(map[string]any)["url"] = "postgres://assay_app:pw@pg:5432/assay"
		}, "postgres.url"},
		"no password Secret": {func(v map[string]any) {
			dig(v, "postgres", "roles", "owner").(map[string]any)["passwordSecret"] = map[string]any{"name": "", "key": "password"}
		}, "postgres.roles.owner.passwordSecret"},
		"no key": {func(v map[string]any) {
			dig(v, "clickhouse", "users", "reader").(map[string]any)["passwordSecret"] = map[string]any{"name": "ch-users", "key": ""}
		}, "clickhouse.users.reader.passwordSecret"},
		"the superuser": {func(v map[string]any) {
			dig(v, "postgres", "roles", "app").(map[string]any)["user"] = "postgres"
		}, "postgres.roles.app.user"},
		"ClickHouse's default user": {func(v map[string]any) {
			dig(v, "clickhouse", "users", "writer").(map[string]any)["user"] = "default"
		}, "clickhouse.users.writer.user"},
		"a password Secret without a host": {func(v map[string]any) {
			delete(v["clickhouse"].(map[string]any), "host")
		}, "clickhouse.users.writer.passwordSecret is used only with clickhouse.host"},
		"NATS password given twice": {func(v map[string]any) {
			v["nats"].(map[string]any)["passwords"] = map[string]any{"writer": "inline-password"}
		}, "nats.passwords.writer"},
	} {
		v := externalStoreValues()
		c.mutate(v)
		_, err := renderErr(t, v, false)
		if err == nil {
			t.Errorf("%s: rendered", name)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: the refusal does not name %s: %v", name, c.want, err)
		}
	}
}

// TestImagesAreWhatMakeImagesBuilds: `make images` tags each service's
// image with the name the chart (and docker-compose.yml) pulls by default,
// and with other IMAGE_REPOSITORY_PREFIX and IMAGE_TAG the name the chart
// gives for the matching image values; a service's own image values win.
// The build passes the version and revision the Dockerfile's OCI labels
// carry.
func TestImagesAreWhatMakeImagesBuilds(t *testing.T) {
	makeTags := func(args ...string) map[string]string {
		t.Helper()
		cmd := exec.Command("make", append([]string{"-s", "-n", "images", "CONTAINER_ENGINE=docker"}, args...)...)
		cmd.Dir = "../.."
		// the Makefile's defaults, whatever the environment sets
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "IMAGE_") && !strings.HasPrefix(kv, "CONTAINER_ENGINE=") && !strings.HasPrefix(kv, "MAKEFLAGS=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n images: %v\n%s", err, out)
		}
		tags := map[string]string{}
		build := regexp.MustCompile(`docker build .*--build-arg SERVICE=(\w+) .*-t (\S+) `)
		for _, line := range strings.Split(string(out), "\n") {
			if m := build.FindStringSubmatch(line); m != nil {
				tags[m[1]] = m[2]
				for _, arg := range []string{"--build-arg VERSION=", "--build-arg REVISION=", "-f deployments/Dockerfile"} {
					if !strings.Contains(line, arg) {
						t.Errorf("make images builds %s without %s: %s", m[1], arg, line)
					}
				}
			}
		}
		if len(tags) != len(services) {
			t.Fatalf("make -n images builds %v, want the six services:\n%s", tags, out)
		}
		return tags
	}
	chartImages := func(vals map[string]any) map[string]string {
		out := map[string]string{}
		for svc, d := range deployments(render(t, vals, false)) {
			out[svc] = container(d)["image"].(string)
		}
		return out
	}

	built, chart := makeTags(), chartImages(dataStoreValues())
	for _, svc := range services {
		if built[svc] != chart[svc] {
			t.Errorf("%s: make images tags %q, the chart pulls %q", svc, built[svc], chart[svc])
		}
	}
	built = makeTags("IMAGE_REPOSITORY_PREFIX=registry.example.com/team/assay-", "IMAGE_TAG=1.2.3")
	chart = chartImages(withValues(dataStoreValues(), map[string]any{"image": map[string]any{"registry": "registry.example.com/team", "tag": "1.2.3"}}))
	for _, svc := range services {
		if built[svc] != chart[svc] || built[svc] != "registry.example.com/team/assay-"+svc+":1.2.3" {
			t.Errorf("%s: make images tags %q, the chart pulls %q", svc, built[svc], chart[svc])
		}
	}

	chart = chartImages(withValues(dataStoreValues(), map[string]any{
		"gateway":  map[string]any{"image": map[string]any{"repository": "mirror.example.com/gw", "tag": "patched"}},
		"registry": map[string]any{"image": map[string]any{"tag": "0.1.1"}},
	}))
	if chart["gateway"] != "mirror.example.com/gw:patched" || chart["registry"] != "ghcr.io/assayhq/assay-registry:0.1.1" || chart["runtime"] != "ghcr.io/assayhq/assay-runtime:0.1.0" {
		t.Errorf("per-service images: %v", chart)
	}

	// docker compose build labels its images with the version they are
	// tagged with (both the same, uninterpolated, expression).
	cb, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image string `json:"image"`
			Build struct {
				Args map[string]string `json:"args"`
			} `json:"build"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(cb, &compose); err != nil {
		t.Fatal(err)
	}
	for _, svc := range services {
		cs := compose.Services[svc]
		_, tag, _ := strings.Cut(strings.TrimPrefix(cs.Image, "ghcr.io/"), ":")
		if tag == "" || cs.Build.Args["VERSION"] != tag {
			t.Errorf("compose %s: image %s built with VERSION %q, want %q", svc, cs.Image, cs.Build.Args["VERSION"], tag)
		}
	}

	df, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"org.opencontainers.image.source=", "org.opencontainers.image.revision=\"${REVISION}\"", "org.opencontainers.image.version=\"${VERSION}\""} {
		if !strings.Contains(string(df), label) {
			t.Errorf("deployments/Dockerfile has no OCI label %s", label)
		}
	}
}
