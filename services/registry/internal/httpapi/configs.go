package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// configAPI serves POST /variants/configs/fetch, the configuration fetch
// of the compatible platform's SDK 0.27 to 0.95 (still in the field; the
// newer SDKs call /applications/revisions/retrieve). The rules are
// workflows.FetchConfig's, on the retrieve's own lookups.
type configAPI struct {
	wf *workflows.Service
}

func (a configAPI) route(e *echo.Echo) {
	e.POST("/variants/configs/fetch", handle(false, a.fetch))
}

// configRefIn is a legacy reference: {slug?, version?, id?}, unset fields
// null or absent. The SDK sends version as a number; a numeric string is
// taken too.
type configRefIn struct {
	Slug    *string         `json:"slug"`
	Version json.RawMessage `json:"version"`
	ID      *string         `json:"id"`
}

func (r *configRefIn) bind(key string) (*workflows.ConfigRef, error) {
	if r == nil {
		return nil, nil
	}
	out := &workflows.ConfigRef{Slug: r.Slug}
	if r.ID != nil {
		id, err := uuid.Parse(*r.ID)
		if err != nil {
			return nil, errs.Field("Input should be a valid UUID", *r.ID, "body", key, "id")
		}
		out.ID = &id
	}
	if v := bytes.Trim(bytes.TrimSpace(r.Version), `"`); len(v) > 0 && string(v) != "null" {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 0 {
			return nil, errs.Field("Input should be a valid version (a whole number)", string(r.Version), "body", key, "version")
		}
		out.Version = &n
	}
	return out, nil
}

// configRefOut is a reference in the answer.
type configRefOut struct {
	ID            uuid.UUID `json:"id"`
	Slug          string    `json:"slug"`
	Version       *int      `json:"version,omitempty"`
	CommitMessage *string   `json:"commit_message"`
}

// configOut is the legacy fetch's answer; service_ref is always null and
// environment_ref/environment_lifecycle are null unless the configuration
// was read through an environment.
type configOut struct {
	Params               json.RawMessage            `json:"params"`
	URL                  *string                    `json:"url,omitempty"`
	ApplicationRef       configAppRef               `json:"application_ref"`
	ServiceRef           *configRefOut              `json:"service_ref"`
	VariantRef           configRefOut               `json:"variant_ref"`
	EnvironmentRef       *configRefOut              `json:"environment_ref"`
	ApplicationLifecycle *workflows.ConfigLifecycle `json:"application_lifecycle"`
	VariantLifecycle     workflows.ConfigLifecycle  `json:"variant_lifecycle"`
	EnvironmentLifecycle *workflows.ConfigLifecycle `json:"environment_lifecycle"`
}

type configAppRef struct {
	ID   uuid.UUID `json:"id"`
	Slug string    `json:"slug"`
}

func (a configAPI) fetch(rq *req) error {
	var in struct {
		Variant     *configRefIn `json:"variant_ref"`
		Environment *configRefIn `json:"environment_ref"`
		Application *configRefIn `json:"application_ref"`
	}
	if err := decodeAt(renderJSON(rq.b.Map()), &in, "body"); err != nil {
		return err
	}
	var f workflows.ConfigFetch
	var err error
	if f.Variant, err = in.Variant.bind("variant_ref"); err != nil {
		return err
	}
	if f.Environment, err = in.Environment.bind("environment_ref"); err != nil {
		return err
	}
	if f.Application, err = in.Application.bind("application_ref"); err != nil {
		return err
	}
	c, err := a.wf.FetchConfig(rq.ctx, rq.sc, f)
	if err != nil {
		return err
	}
	r := c.Revision
	v := r.Version
	out := configOut{
		Params:           c.Parameters(),
		ApplicationRef:   configAppRef{ID: r.ArtifactID, Slug: r.ArtifactSlug},
		VariantRef:       configRefOut{ID: r.VariantID, Slug: r.VariantSlug, Version: &v, CommitMessage: r.Message},
		VariantLifecycle: workflows.LifecycleOf(r.Lifecycle, r.Author),
	}
	if u := c.URL(); u != "" {
		out.URL = &u
	}
	if c.Application != nil {
		l := workflows.LifecycleOf(c.Application.Lifecycle, nil)
		out.ApplicationLifecycle = &l
	}
	if e := c.Environment; e != nil {
		ev := e.Version
		out.EnvironmentRef = &configRefOut{ID: e.ArtifactID, Slug: e.ArtifactSlug, Version: &ev, CommitMessage: e.Message}
		l := workflows.LifecycleOf(e.Lifecycle, e.Author)
		out.EnvironmentLifecycle = &l
	}
	return send(rq.c, renderJSON(out))
}
