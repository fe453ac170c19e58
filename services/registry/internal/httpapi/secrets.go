package httpapi

import (
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/vaultwire"
	"github.com/assayhq/assay/services/registry/internal/secrets"
)

// secretAPI serves the project vault (/secrets, the compatible platform's
// shapes) and the runtime's internal read of it.
type secretAPI struct{ svc *secrets.Service }

func (a secretAPI) route(e *echo.Echo) {
	e.GET("/secrets", stream(false, a.list))
	e.POST("/secrets", stream(false, a.create))
	e.GET("/secrets/:id", stream(false, a.get)) // the id, or the slug
	e.PUT("/secrets/:id", stream(true, a.update))
	e.DELETE("/secrets/:id", stream(true, a.remove))
	e.GET(vaultwire.Path, a.reveal)
}

// secret is a secret as every public route renders it: never its key nor
// its extra headers, which secrets.Secret does not even hold.
type secret struct {
	ID        uuid.UUID    `json:"id"`
	Kind      secrets.Kind `json:"kind" doc:"provider_key or custom_provider."`
	Header    secretHeader `json:"header"`
	Data      secretData   `json:"data"`
	Slug      string       `json:"slug" doc:"Unique in the project; llm_config.connection names it."`
	CreatedAt time.Time    `json:"created_at"`
	UpdatedAt *time.Time   `json:"updated_at"`
}

type secretHeader struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// secretData is what a secret shows of its data; the key is never in it.
type secretData struct {
	Kind         string         `json:"kind" doc:"The provider family (openai, anthropic, ...) or custom provider kind (custom, azure, ...)."`
	Provider     secretProvider `json:"provider"`
	Models       []secretModel  `json:"models,omitempty"`
	ProviderSlug string         `json:"provider_slug,omitempty" doc:"Custom providers: the prefix of their models' names (the secret's slug unless given)."`
}

type secretProvider struct {
	URL     string `json:"url,omitempty"`
	Version string `json:"version,omitempty"`
}

type secretModel struct {
	Slug string `json:"slug"`
}

func toSecret(s secrets.Secret) secret {
	out := secret{ID: s.ID, Kind: s.Kind, Header: secretHeader{Name: s.Header.Name, Description: s.Header.Description},
		Data: secretData{Kind: s.Data.Kind, Provider: secretProvider{URL: s.Data.Provider.URL, Version: s.Data.Provider.Version},
			ProviderSlug: s.Data.ProviderSlug},
		Slug: s.Slug, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	for _, m := range s.Data.Models {
		out.Data.Models = append(out.Data.Models, secretModel{Slug: m.Slug})
	}
	return out
}

// readSecretBody reads at most one byte over the vault's body limit, so
// secrets.Decode can refuse a longer body without it being read whole.
func readSecretBody(c echo.Context) (secrets.Input, error) {
	raw, err := io.ReadAll(io.LimitReader(c.Request().Body, secrets.MaxBodyBytes+1))
	if err != nil {
		return secrets.Input{}, err
	}
	return secrets.Decode(raw)
}

func (a secretAPI) list(rq *req) error {
	c, sc := rq.c, rq.sc
	ss, err := a.svc.List(c.Request().Context(), sc)
	if err != nil {
		return err
	}
	out := make([]secret, len(ss))
	for i, s := range ss {
		out[i] = toSecret(s)
	}
	return c.JSON(http.StatusOK, out)
}

func (a secretAPI) create(rq *req) error {
	c, sc := rq.c, rq.sc
	in, err := readSecretBody(c)
	if err != nil {
		return err
	}
	s, err := a.svc.Create(c.Request().Context(), sc, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSecret(s))
}

func (a secretAPI) get(rq *req) error {
	c, sc := rq.c, rq.sc
	s, err := a.svc.Get(c.Request().Context(), sc, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSecret(s))
}

func (a secretAPI) update(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	in, err := readSecretBody(c)
	if err != nil {
		return err
	}
	s, err := a.svc.Update(c.Request().Context(), sc, id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSecret(s))
}

func (a secretAPI) remove(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	if err := a.svc.Delete(c.Request().Context(), sc, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// reveal answers the runtime the project's secrets decrypted. The gateway
// routes nothing under /internal; as a second lock, a request the gateway
// forwarded (its proxy always sets X-Forwarded-Host) is answered as
// unknown. X-Forwarded-For alone is not refused: sidecar proxies between
// services add it.
func (a secretAPI) reveal(c echo.Context) error {
	if c.Request().Header.Get("X-Forwarded-Host") != "" {
		return errs.New(errs.NotFound, "registry.not_found", "Not Found")
	}
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	rs, err := a.svc.Reveal(c.Request().Context(), sc)
	if err != nil {
		return err
	}
	out := vaultwire.Secrets{ProviderKeys: []vaultwire.ProviderKey{}, CustomProviders: []vaultwire.CustomProvider{}}
	for _, r := range rs {
		if r.Kind == secrets.KindProviderKey {
			out.ProviderKeys = append(out.ProviderKeys, vaultwire.ProviderKey{Slug: r.Slug, Kind: r.Data.Kind, Key: r.Key})
			continue
		}
		cp := vaultwire.CustomProvider{Slug: r.Slug, Kind: r.Data.Kind, URL: r.Data.Provider.URL,
			Version: r.Data.Provider.Version, Key: r.Key, Headers: r.Extras}
		for _, m := range r.Data.Models {
			cp.Models = append(cp.Models, m.Slug)
		}
		out.CustomProviders = append(out.CustomProviders, cp)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, out)
}
