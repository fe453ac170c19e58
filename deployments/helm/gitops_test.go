package helm_test

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// cluster is what Helm's lookup sees: the Secrets of a namespace, held by
// client-go's fake dynamic client. An empty cluster is what `helm
// template` (and so every GitOps tool that renders with it) sees.
type cluster struct {
	client *dynamicfake.FakeDynamicClient
}

func newCluster(secrets ...map[string]any) cluster {
	objs := make([]runtime.Object, 0, len(secrets))
	for _, s := range secrets {
		objs = append(objs, &unstructured.Unstructured{Object: s})
	}
	return cluster{dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), objs...)}
}

func (c cluster) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false, err
	}
	return c.client.Resource(gv.WithResource(strings.ToLower(kind) + "s")), true, nil
}

// renderIn renders the chart as `helm install`/`helm upgrade` would against
// the cluster c (lookup answers from it), returning the rendered files and
// their objects.
func renderIn(t *testing.T, vals map[string]any, c cluster) (map[string]string, []object) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "assay", Namespace: "assay", IsInstall: true, Revision: 1}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.RenderWithClientProvider(ch, rv, c)
	if err != nil {
		t.Fatal(err)
	}
	return files, objects(t, files)
}

// withValues is base with the top-level keys of extra laid over it.
func withValues(base map[string]any, extra map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// secretData is each rendered Secret's data, by name.
func secretData(objs []object) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, o := range objs {
		if o.Kind == "Secret" {
			out[o.Metadata.Name], _ = o.raw["data"].(map[string]any)
		}
	}
	return out
}

// generatedKeys are the keys the chart generates when no value names them:
// Secret name → keys.
func generatedKeys() map[string][]string {
	out := map[string][]string{
		"assay-secrets": {"nats-registry-password", "nats-runtime-password", "nats-tracing-password", "nats-writer-password"},
	}
	for _, p := range pairs {
		out["assay-"+p[0]+"-secrets"] = append(out["assay-"+p[0]+"-secrets"], "token-to-"+p[1])
		out["assay-"+p[1]+"-secrets"] = append(out["assay-"+p[1]+"-secrets"], "token-from-"+p[0])
	}
	out["assay-gateway-secrets"] = append(out["assay-gateway-secrets"], "admin-key")
	out["assay-registry-secrets"] = append(out["assay-registry-secrets"], "vault-key")
	return out
}

// TestExistingSecretRendersAlike: with secrets.existingSecret (what GitOps
// users render with, since `helm template` cannot look anything up) two
// renders agree byte for byte, the chart generates no secret at all, and
// every Deployment reads its secrets from the existing Secrets only.
func TestExistingSecretRendersAlike(t *testing.T) {
	vals := withValues(dataStoreValues(), map[string]any{"secrets": map[string]any{"existingSecret": "gitops"}})
	first, objs := renderIn(t, vals, newCluster())
	second, _ := renderIn(t, vals, newCluster())
	for name, body := range first {
		if second[name] != body {
			t.Errorf("%s differs between two renders with secrets.existingSecret", name)
		}
	}
	for _, o := range objs {
		if o.Kind == "Secret" {
			t.Errorf("the chart renders Secret %s although secrets.existingSecret is set", o.Metadata.Name)
		}
	}
	allowed := map[string]bool{"gitops": true}
	for _, svc := range services {
		allowed["gitops-"+svc] = true
	}
	read := 0
	readKeys := map[string]map[string]bool{} // Secret → keys some Deployment reads
	for _, o := range objs {
		if o.Kind != "Deployment" {
			continue
		}
		svc := strings.TrimPrefix(o.Metadata.Name, "assay-")
		c := dig(o.raw, "spec", "template", "spec", "containers").([]any)[0]
		for _, e := range dig(c, "env").([]any) {
			ref, ok := dig(e, "valueFrom", "secretKeyRef").(map[string]any)
			if !ok {
				continue
			}
			read++
			name := ref["name"].(string)
			if readKeys[name] == nil {
				readKeys[name] = map[string]bool{}
			}
			readKeys[name][ref["key"].(string)] = true
			if !allowed[name] || (name != "gitops" && name != "gitops-"+svc) {
				t.Errorf("%s reads %s from Secret %s, not gitops or gitops-%s", svc, ref["key"], name, svc)
			}
		}
	}
	if read == 0 {
		t.Fatal("no Deployment reads a Secret")
	}
	// NOTES.txt tells the operator which keys each Secret must hold:
	// exactly the keys the Deployments read, no more, none missing.
	listed := map[string]map[string]bool{}
	for _, line := range strings.Split(first["assay/templates/NOTES.txt"], "\n") {
		name, keys, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok || !allowed[name] {
			continue
		}
		listed[name] = map[string]bool{}
		for _, k := range strings.Split(keys, ", ") {
			listed[name][k] = true
		}
	}
	for name, keys := range readKeys {
		for k := range keys {
			if !listed[name][k] {
				t.Errorf("NOTES.txt does not list %s in Secret %s, which a Deployment reads", k, name)
			}
		}
	}
	for name, keys := range listed {
		for k := range keys {
			if !readKeys[name][k] {
				t.Errorf("NOTES.txt lists %s in Secret %s, which no Deployment reads", k, name)
			}
		}
	}
	if len(listed) != 5 {
		t.Errorf("NOTES.txt lists the keys of %d Secrets, want 5 (the shared one and the gateway's, registry's, runtime's, tracing's):\n%s", len(listed), first["assay/templates/NOTES.txt"])
	}
}

// TestTemplateGeneratesEachRender: without secrets.existingSecret and
// without a cluster to look in (`helm template`), every generated key is
// there and is new on each render; this is why GitOps users must set
// secrets.existingSecret (deployments/README.md). The one values map
// rendered twice also shows that what a render generates stays in that
// render (the chart computes its secrets once per render).
func TestTemplateGeneratesEachRender(t *testing.T) {
	vals := dataStoreValues()
	_, a := renderIn(t, vals, newCluster())
	_, b := renderIn(t, vals, newCluster())
	// Helm stores the values it was given with the release (helm get
	// values): a generated secret must never end up there.
	if _, leaked := vals["__assaySecretValues"]; leaked {
		t.Error("the generated secrets were written into the given values")
	}
	da, db := secretData(a), secretData(b)
	for secret, keys := range generatedKeys() {
		for _, key := range keys {
			va, _ := da[secret][key].(string)
			vb, _ := db[secret][key].(string)
			if va == "" || vb == "" {
				t.Errorf("%s: %s is not generated", secret, key)
			} else if va == vb {
				t.Errorf("%s: %s is the same in two renders without a cluster: not generated", secret, key)
			}
		}
	}
}

// TestUpgradeKeepsGeneratedSecrets: a second render against the cluster
// the first one installed (`helm upgrade`: lookup finds the release's
// Secrets) keeps every generated key, so the manifests, the pods'
// checksum/secret annotation included, are the same.
func TestUpgradeKeepsGeneratedSecrets(t *testing.T) {
	first, objs := renderIn(t, dataStoreValues(), newCluster())
	var installed []map[string]any
	for _, o := range objs {
		if o.Kind == "Secret" {
			s := o.raw
			s["metadata"].(map[string]any)["namespace"] = "assay"
			installed = append(installed, s)
		}
	}
	second, _ := renderIn(t, dataStoreValues(), newCluster(installed...))
	for name, body := range first {
		if second[name] != body {
			t.Errorf("%s differs on upgrade:\n--- install\n%s\n--- upgrade\n%s", name, body, second[name])
		}
	}
}

// TestUpgradeCarriesOverSharedKeys: an upgrade from the chart version with
// one shared Secret (admin-key and vault-key in <release>-secrets) keeps
// both keys in the services' own Secrets.
func TestUpgradeCarriesOverSharedKeys(t *testing.T) {
	old := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "assay-secrets", "namespace": "assay"},
		"data":     map[string]any{"admin-key": "b2xkLWFkbWluLWtleS0xMjM0NTY3OA==", "vault-key": "b2xkLXZhdWx0LWtleQ=="},
	}
	_, objs := renderIn(t, dataStoreValues(), newCluster(old))
	d := secretData(objs)
	if got := d["assay-gateway-secrets"]["admin-key"]; got != "b2xkLWFkbWluLWtleS0xMjM0NTY3OA==" {
		t.Errorf("admin-key = %v, want the old shared Secret's", got)
	}
	if got := d["assay-registry-secrets"]["vault-key"]; got != "b2xkLXZhdWx0LWtleQ==" {
		t.Errorf("vault-key = %v, want the old shared Secret's", got)
	}
}
