package wire

import (
	"github.com/google/uuid"

	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// InitialMessage is the message of the revision POST /<plural>/revisions
// creates.
const InitialMessage = "Initial revision"

// RevisionIn is what the revision create and commit bodies of the
// testset, environment and query families share.
type RevisionIn struct {
	Header     versioned.Header
	Message    *string // commits only
	Slug       *string
	ArtifactID *uuid.UUID // <key>_id or artifact_id, when read
	VariantID  *uuid.UUID // <key>_variant_id or variant_id
}

// Revision reads, in this order (the first field error wins), the header,
// the message when commit, the slug, the artifact id when withArtifact,
// and the variant id.
func (b *Body) Revision(key string, commit, withArtifact bool) RevisionIn {
	r := RevisionIn{Header: b.Header()}
	if commit {
		r.Message = b.Str("message")
	}
	r.Slug = b.Slug("slug")
	if withArtifact {
		r.ArtifactID = b.ID(key+"_id", "artifact_id")
	}
	r.VariantID = b.ID(key+"_variant_id", "variant_id")
	return r
}

// SlugOr is the slug sent, else "".
func (r RevisionIn) SlugOr() string {
	if r.Slug == nil {
		return ""
	}
	return *r.Slug
}

// TestsetCommit reads a testset commit (the object in): data or delta,
// exclusive, on the variant or on testset_revision_id.
func TestsetCommit(in *Body) (testsets.Commit, testsets.Payload, error) {
	r := in.Revision("testset", true, true)
	cm := testsets.Commit{Header: r.Header, Message: r.Message, Slug: r.SlugOr(), VariantID: r.VariantID}
	cm.BaseRevisionID = in.ID("testset_revision_id", "revision_id")
	data, delta := in.Sub("data"), in.Value("delta")
	if err := ErrOf(in); err != nil {
		return cm, testsets.Payload{}, err
	}
	hasDelta := !IsNull(delta)
	switch {
	case data != nil && hasDelta:
		return cm, testsets.Payload{}, versioned.Invalid("Provide either data or delta for a commit, not both.")
	case data == nil && !hasDelta:
		return cm, testsets.Payload{}, versioned.Invalid("Provide either data or delta for a commit.")
	}
	if r.ArtifactID != nil {
		cm.ArtifactID = *r.ArtifactID
	}
	p := testsets.Payload{Loc: in.Loc()}
	if hasDelta {
		p.Delta = delta
	} else {
		p.Data = data.Map()
	}
	return cm, p, nil
}

// EnvironmentCommit reads an environment commit (the object in, sent
// under key): data or delta, exclusive, on environment_variant_id.
func EnvironmentCommit(in *Body, key string) (environments.Commit, error) {
	var err error
	r := in.Revision("environment", true, true)
	cm := environments.Commit{Header: r.Header, Message: r.Message, Slug: r.SlugOr()}
	cm.Header.Flags = nil
	if err := ErrOf(in); err != nil {
		return cm, err
	}
	data, delta := in.Value("data"), in.Value("delta")
	switch {
	case !IsNull(data) && !IsNull(delta):
		return cm, versioned.Invalid("Provide either data or delta for a commit, not both.")
	case IsNull(data) && IsNull(delta):
		return cm, versioned.Invalid("Provide either data or delta for a commit.")
	}
	if r.VariantID == nil {
		return cm, FieldMissing("body", key, "environment_variant_id")
	}
	// The compatible platform needs environment_id too and answers {count:0} without
	// it; the variant names its artifact, so we derive it instead.
	if r.ArtifactID != nil {
		cm.ArtifactID = *r.ArtifactID
	}
	cm.VariantID = *r.VariantID
	if !IsNull(data) {
		cm.Data, err = environments.ParseData(data, "body", key, "data")
	} else {
		cm.Delta, err = environments.ParseDelta(delta, "body", key, "delta")
	}
	return cm, err
}

// QueryCommit reads a query commit (the object in, sent under key): the
// data is optional; the flags are the query family's.
func QueryCommit(in *Body, key string) (versioned.Revision, error) {
	var err error
	r := in.Revision("query", true, false)
	rev := versioned.Revision{Header: r.Header, Message: r.Message, Slug: r.SlugOr()}
	rev.Flags = queries.EmptyFlags(rev.Flags)
	if err := ErrOf(in); err != nil {
		return rev, err
	}
	if r.VariantID == nil {
		return rev, versioned.Invalid(key + ".query_variant_id is required.")
	}
	rev.VariantID = *r.VariantID
	if raw := in.Value("data"); !IsNull(raw) {
		rev.Data, err = queries.ParseData(raw, "body", key, "data")
	}
	return rev, err
}

// WorkflowIDs reads the variant and artifact ids of a workflow-family
// commit under any of their names (key's, the workflow alias', the
// generic one).
func WorkflowIDs(in *Body, key string) (variant, artifact *uuid.UUID) {
	return in.ID(key+"_variant_id", "workflow_variant_id", "variant_id"), in.ID(key+"_id", "workflow_id", "artifact_id")
}

// WorkflowCommit reads a commit of entity key of the workflow family (the
// object in, at loc): data and delta are exclusive; data is decoded and
// validated against the model (the caller checks its parameters), the
// delta's shape is checked.
func WorkflowCommit(in *Body, key string, loc []any) (workflows.CommitInput, error) {
	ci := workflows.CommitInput{Key: key, Header: in.Header(), Message: in.Str("message"), Loc: loc}
	ci.Header.Flags = nil // revision flags are inferred from data, never sent
	slug := in.Slug("slug")
	v, _ := WorkflowIDs(in, key)
	ci.BaseRevisionID = in.ID("base_revision_id")
	if err := ErrOf(in); err != nil {
		return ci, err
	}
	if slug != nil {
		ci.Slug = *slug
	}
	if v == nil {
		return ci, versioned.Invalid(key + "_revision." + key + "_variant_id is required.")
	}
	ci.VariantID = *v
	data, delta := in.Value("data"), in.Value("delta")
	if !IsNull(data) && !IsNull(delta) {
		return ci, versioned.Invalid("Provide either data or delta for a commit, not both.")
	}
	if !IsNull(data) {
		d, err := workflows.Decode(data)
		if err != nil || d == nil {
			return ci, FieldInvalid("Input should be a valid dictionary", data, append(loc, "data")...)
		}
		if err := workflows.Validate(d, append(loc, "data")...); err != nil {
			return ci, err
		}
		ci.Data = d
	}
	if !IsNull(delta) {
		d, err := workflows.ParseDelta(delta, append(loc, "delta")...)
		if err != nil {
			return ci, err
		}
		ci.Delta = d
	}
	return ci, nil
}
