package helm_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// httpShutdownTimeout is the services' default *_HTTP_SHUTDOWN_TIMEOUT
// (pkg/httpx.Config): the longest an in-flight request drains.
const httpShutdownTimeout = 20 * time.Second

// TestPodsOutliveTheirDrain: on SIGTERM a service keeps serving with /ready
// 503 for *_SHUTDOWN_DELAY (values shutdownDelaySeconds), then drains for up
// to the HTTP shutdown timeout. The kubelet's SIGKILL
// (terminationGracePeriodSeconds) and docker stop's (stop_grace_period)
// must come after both, or requests are cut mid-drain.
func TestPodsOutliveTheirDrain(t *testing.T) {
	for _, delay := range []int{5, 30} {
		vals := dataStoreValues()
		vals["shutdownDelaySeconds"] = delay
		deployments := 0
		for _, o := range render(t, vals, false) {
			if o.Kind != "Deployment" {
				continue
			}
			deployments++
			svc := strings.ToUpper(strings.TrimPrefix(o.Metadata.Name, "assay-"))
			if got, want := env(o, svc+"_SHUTDOWN_DELAY"), fmt.Sprintf("%ds", delay); got != want {
				t.Errorf("delay %d: %s_SHUTDOWN_DELAY = %q, want %q", delay, svc, got, want)
			}
			grace, _ := dig(o.raw, "spec", "template", "spec", "terminationGracePeriodSeconds").(float64)
			if need := time.Duration(delay)*time.Second + httpShutdownTimeout; time.Duration(grace)*time.Second <= need {
				t.Errorf("delay %d: %s terminationGracePeriodSeconds %v, not above the delay and the drain (%s)", delay, o.Metadata.Name, grace, need)
			}
		}
		if deployments != 6 {
			t.Fatalf("delay %d: %d Deployments rendered, want the six", delay, deployments)
		}
	}

	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image           string            `json:"image"`
			StopGracePeriod string            `json:"stop_grace_period"`
			Environment     map[string]string `json:"environment"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatal(err)
	}
	for name, s := range compose.Services {
		if !strings.Contains(s.Image, "/assay-") {
			continue // the data stores
		}
		delay, err := time.ParseDuration(s.Environment[strings.ToUpper(name)+"_SHUTDOWN_DELAY"])
		if err != nil {
			t.Errorf("compose %s: %s_SHUTDOWN_DELAY: %v", name, strings.ToUpper(name), err)
		}
		grace, err := time.ParseDuration(s.StopGracePeriod)
		if err != nil || grace <= delay+httpShutdownTimeout {
			t.Errorf("compose %s: stop_grace_period %q (%v), not above the delay and the drain (%s)", name, s.StopGracePeriod, err, delay+httpShutdownTimeout)
		}
	}
}
