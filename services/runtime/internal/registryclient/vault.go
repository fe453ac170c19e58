package registryclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
	"github.com/assayhq/assay/pkg/vaultwire"
	"github.com/assayhq/assay/services/runtime/internal/llm"
)

// maxVault bounds a vault answer: the registry's per-project limits keep a
// vault far under it.
const maxVault = 64 << 20

// Secrets implements vault.Source: GET the project's vault, decrypted. A
// registry that does not answer, or answers 502-504, is errs.Unavailable;
// any other failure errs.Internal.
func (c *Client) Secrets(ctx context.Context, sc scope.Scope) (llm.Secrets, error) {
	status, body, err := c.c.Get(ctx, sc, vaultwire.Path, maxVault)
	var se *svcclient.StatusError
	switch err := svcclient.Check(http.MethodGet+" "+vaultwire.Path, status, body, err); {
	case err == nil:
	case !errors.As(err, &se) || se.Status == http.StatusBadGateway || se.Status == http.StatusServiceUnavailable || se.Status == http.StatusGatewayTimeout:
		return llm.Secrets{}, errUnavailable(err)
	default:
		return llm.Secrets{}, &errs.Error{Kind: errs.Internal, Code: "runtime.vault", Msg: "The project's secrets could not be read.", Err: err}
	}
	var v vaultwire.Secrets
	if err := json.Unmarshal(body, &v); err != nil {
		return llm.Secrets{}, &errs.Error{Kind: errs.Internal, Code: "runtime.vault", Msg: "The project's secrets could not be read.",
			Err: fmt.Errorf("decode vault answer: %w", err)}
	}
	return toSecrets(v), nil
}

func errUnavailable(cause error) error {
	return &errs.Error{Kind: errs.Unavailable, Code: "runtime.vault_unavailable",
		Msg: "The registry is unavailable: the project's provider keys could not be read.", Err: cause}
}

func toSecrets(v vaultwire.Secrets) llm.Secrets {
	var s llm.Secrets
	for _, k := range v.ProviderKeys {
		s.Keys = append(s.Keys, llm.ProviderKey{Slug: k.Slug, Kind: k.Kind, Key: k.Key})
	}
	for _, p := range v.CustomProviders {
		s.Custom = append(s.Custom, llm.CustomProvider{Slug: p.Slug, Kind: p.Kind, URL: p.URL, Version: p.Version,
			Key: p.Key, Headers: p.Headers, Models: p.Models})
	}
	return s
}
