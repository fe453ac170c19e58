package httpapi

import (
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/vaultwire"
	"github.com/assayhq/assay/services/registry/internal/secrets"
	"github.com/assayhq/assay/services/registry/internal/wire"
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
	out := make([]wire.Secret, len(ss))
	for i, s := range ss {
		out[i] = wire.PublicSecret(s)
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
	return c.JSON(http.StatusOK, wire.PublicSecret(s))
}

func (a secretAPI) get(rq *req) error {
	c, sc := rq.c, rq.sc
	s, err := a.svc.Get(c.Request().Context(), sc, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.PublicSecret(s))
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
	return c.JSON(http.StatusOK, wire.PublicSecret(s))
}

func (a secretAPI) remove(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	if err := a.svc.Delete(c.Request().Context(), sc, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// reveal answers the runtime the project's secrets decrypted, and only
// the runtime: another caller's token (the gateway's, tracing's) is
// answered as unknown, so a leaked token of another pair reveals no
// provider key. The gateway routes nothing under /internal; as a second
// lock, a request the gateway forwarded (its proxy always sets
// X-Forwarded-Host) is answered as unknown. X-Forwarded-For alone is not
// refused: sidecar proxies between services add it.
func (a secretAPI) reveal(c echo.Context) error {
	if c.Request().Header.Get("X-Forwarded-Host") != "" || scope.CallerFrom(c.Request().Context()) != "runtime" {
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
	out := wire.Vault(rs)
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, out)
}
