package platformtest_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
)

// TestEachPairHasItsOwnToken runs the platform with one token per
// caller-callee pair and sends every pair's token to every service that
// checks one: only the pair's callee admits it. A token taken from one
// service (the runtime's token for the registry, say) opens no other
// service, as it did when all services shared one internal token.
func TestEachPairHasItsOwnToken(t *testing.T) {
	p := platformtest.Start(t)
	// One cheap scoped route per callee: anything but 401 means admitted.
	callees := map[string]struct{ method, url, body string }{
		"registry": {"POST", p.Registry.URL + "/simple/testsets/query", "{}"},
		"tracing":  {"POST", p.Tracing.URL + "/spans/query", "{}"},
		"runtime":  {"GET", p.Runtime.URL + "/services/health", ""},
	}
	project := scope.Scope{ProjectID: uuid.New()}
	client := &http.Client{Timeout: 30 * time.Second}
	status := func(t *testing.T, callee, token string) int {
		c := callees[callee]
		req, err := http.NewRequest(c.method, c.url, bytes.NewReader([]byte(c.body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		scope.Set(req.Header, token, project)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode
	}
	for _, pair := range platformtest.Pairs {
		caller, owner := pair[0], pair[1]
		token := platformtest.PairToken(caller, owner)
		for callee := range callees {
			got := status(t, callee, token)
			switch {
			case callee == owner && got == http.StatusUnauthorized:
				t.Errorf("%s refused the %s→%s token: %d", callee, caller, owner, got)
			case callee != owner && got != http.StatusUnauthorized:
				t.Errorf("%s admitted the %s→%s token (meant for another pair): %d, want 401", callee, caller, owner, got)
			}
		}
	}
	for callee := range callees {
		if got := status(t, callee, "no-such-token-0123456789"); got != http.StatusUnauthorized {
			t.Errorf("%s admitted an unknown token: %d", callee, got)
		}
	}
}
