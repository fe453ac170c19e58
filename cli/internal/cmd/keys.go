package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/assayhq/assay/cli/internal/api"
	"github.com/assayhq/assay/cli/internal/api/gen"
	"github.com/assayhq/assay/cli/internal/output"
)

type apiKey struct {
	ID        string     `json:"id"`
	Prefix    string     `json:"prefix"`
	Name      *string    `json:"name,omitempty"`
	ProjectID string     `json:"project_id"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Key       string     `json:"key,omitempty"`
}

func keyRow(k apiKey) []string {
	name, exp := "", ""
	if k.Name != nil {
		name = *k.Name
	}
	if k.ExpiresAt != nil {
		exp = k.ExpiresAt.Format(time.RFC3339)
	}
	return []string{k.ID, name, k.Prefix, k.CreatedAt.Format(time.RFC3339), exp}
}

var keyHeader = []string{"id", "name", "prefix", "created_at", "expires_at"}

func (a *app) keysCmd() *cobra.Command {
	keys := group("keys", "List, create and revoke the project's API keys")
	keys.AddCommand(&cobra.Command{
		Use: "list", Short: "List the project's active keys (prefixes only)", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			var out struct {
				APIKeys []apiKey `json:"api_keys"`
			}
			if err := cl.JSON(c.Context(), "GET", "/api/keys", nil, &out); err != nil {
				return err
			}
			t := output.Table{Header: keyHeader, Raw: out.APIKeys}
			for _, k := range out.APIKeys {
				t.Rows = append(t.Rows, keyRow(k))
			}
			return a.write(t)
		},
	})
	var name string
	var expires time.Duration
	create := &cobra.Command{
		Use: "create", Short: "Create a key; the secret is printed once", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			var key gen.CreateKeyRequestAPIKey
			if name != "" {
				key.Name = gen.NewOptNilString(name)
			}
			if expires > 0 {
				key.ExpiresAt = gen.NewOptNilDateTime(time.Now().Add(expires).UTC().Truncate(time.Second))
			}
			req := gen.CreateKeyRequest{APIKey: gen.NewOptCreateKeyRequestAPIKey(key)}
			var out struct {
				APIKey apiKey `json:"api_key"`
			}
			if err := cl.JSON(c.Context(), "POST", "/api/keys", &req, &out); err != nil {
				return err
			}
			return a.write(output.Table{Header: append(keyHeader, "key"), Rows: [][]string{append(keyRow(out.APIKey), out.APIKey.Key)}, Raw: out.APIKey})
		},
	}
	create.Flags().StringVar(&name, "name", "", "a name for the key")
	create.Flags().DurationVar(&expires, "expires-in", 0, "expire the key after this long (e.g. 720h)")
	keys.AddCommand(create)
	keys.AddCommand(&cobra.Command{
		Use: "revoke ID", Short: "Revoke a key; it stops working at once", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.client()
			if err != nil {
				return err
			}
			if err := cl.JSON(c.Context(), "DELETE", "/api/keys/"+pathEscape(args[0]), nil, nil); err != nil {
				if api.CodeOf(err) == api.ExitNotFound {
					return api.NotFound("no key %s in this project", args[0])
				}
				return err
			}
			fmt.Fprintf(a.stdout, "Revoked %s\n", args[0])
			return nil
		},
	})
	return keys
}
