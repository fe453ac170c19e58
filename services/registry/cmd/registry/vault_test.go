package main

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/config"
)

// TestVaultKeyRequiredOutsideDevelopment: the registry refuses to start
// without a vault key unless REGISTRY_DEV=true, and refuses a key that is
// not base64 of 32 bytes in any mode.
func TestVaultKeyRequiredOutsideDevelopment(t *testing.T) {
	good := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"no key", nil, "REGISTRY_VAULT_KEY is required"},
		{"no key in development", map[string]string{"REGISTRY_DEV": "true"}, ""},
		{"key", map[string]string{"REGISTRY_VAULT_KEY": good}, ""},
		{"unpadded key", map[string]string{"REGISTRY_VAULT_KEY": strings.TrimRight(good, "=")}, ""},
		{"short key", map[string]string{"REGISTRY_VAULT_KEY": base64.StdEncoding.EncodeToString([]byte("short"))}, "want 32"},
		{"not base64", map[string]string{"REGISTRY_VAULT_KEY": "not base64!"}, "not base64"},
		{"bad key in development", map[string]string{"REGISTRY_VAULT_KEY": "x", "REGISTRY_DEV": "true"}, "REGISTRY_VAULT_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("REGISTRY_TOKEN_FROM_GATEWAY", "t")
			t.Setenv("REGISTRY_TOKEN_TO_TRACING", "t")
			for _, k := range []string{"REGISTRY_VAULT_KEY", "REGISTRY_DEV"} {
				t.Setenv(k, "") // restored after the test
				os.Unsetenv(k)
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var cfg Config
			err := config.Load("REGISTRY", &cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}
