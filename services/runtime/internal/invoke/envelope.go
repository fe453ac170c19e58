package invoke

import (
	"encoding/json"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
)

// Version is the envelope version the runtime answers with (the compatible
// platform's).
const Version = "2025.07.14"

// Request is the invoke envelope of the compatible platform's services
// runtime.
type Request struct {
	Version    string               `json:"version,omitempty"`
	Flags      RunFlags             `json:"flags,omitempty"`
	References map[string]EntityRef `json:"references,omitempty"`
	Links      map[string]Link      `json:"links,omitempty"`
	Selector   *Selector            `json:"selector,omitempty"`
	SessionID  string               `json:"session_id,omitempty"`
	Data       CallData             `json:"data"`
}

// RunFlags are the request's switches; Resolve defaults to true.
type RunFlags struct {
	Stream  *bool `json:"stream,omitempty"`
	Trim    *bool `json:"trim,omitempty"`
	Force   *bool `json:"force,omitempty"`
	Resolve *bool `json:"resolve,omitempty"`
}

// Selector picks a deployment: the environment key.
type Selector struct {
	Key string `json:"key,omitempty"`
}

// EntityRef names an entity by id, slug or version.
type EntityRef struct {
	ID      string `json:"id,omitempty"`
	Slug    string `json:"slug,omitempty"`
	Version string `json:"version,omitempty"`
}

// Link points at a span of another trace.
type Link struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
}

// CallData is what the handler reads.
type CallData struct {
	Revision   *InlineRevision `json:"revision,omitempty"`
	Parameters map[string]any  `json:"parameters,omitempty"`
	Inputs     map[string]any  `json:"inputs,omitempty"`
	Testcase   map[string]any  `json:"testcase,omitempty"`
	Trace      map[string]any  `json:"trace,omitempty"`
	Outputs    any             `json:"outputs,omitempty"`
}

// RevisionData is a revision's data: the part the runtime reads.
type RevisionData struct {
	URI        string            `json:"uri,omitempty"`
	URL        string            `json:"url,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Parameters map[string]any    `json:"parameters,omitempty"`
	Schemas    map[string]any    `json:"schemas,omitempty"`
	// ModelCache false opts the revision's model calls out of the
	// model-call cache in evaluation runs (absent: cached).
	ModelCache *bool `json:"model_cache,omitempty" doc:"false: in evaluation runs, this revision's model calls are never answered from the model-call cache."`
}

// InlineRevision is a revision sent in the request (data.revision).
type InlineRevision struct {
	ID   string       `json:"id,omitempty"`
	Data RevisionData `json:"data"`
}

// Revision is a stored revision as the registry returns it, with the
// references of what it was retrieved through.
type Revision struct {
	ID      string         `json:"id"`
	Slug    string         `json:"slug,omitempty"`
	Version string         `json:"version,omitempty"`
	Flags   map[string]any `json:"flags,omitempty"`
	Data    RevisionData   `json:"data"`

	Raw        json.RawMessage      `json:"-"` // as the registry answered it, given to hooks
	References map[string]EntityRef `json:"-"` // retrieval_info.references: artifact, variant, revision, environment*
}

// RunStatus is the envelope's status object; Code is also the HTTP status.
type RunStatus struct {
	Code       int    `json:"code"`
	Message    string `json:"message,omitempty"`
	Type       string `json:"type,omitempty"`
	Stacktrace string `json:"stacktrace,omitempty"`
}

// Response is the batch answer.
type Response struct {
	Version   string      `json:"version,omitempty"` // absent from an error, as in the compatible platform
	Status    RunStatus   `json:"status"`
	TraceID   string      `json:"trace_id,omitempty"`
	SpanID    string      `json:"span_id,omitempty"`
	SessionID string      `json:"session_id,omitempty"`
	Data      *RunOutputs `json:"data,omitempty"`
}

// RunOutputs carries the handler's outputs.
type RunOutputs struct {
	Outputs any `json:"outputs"`
}

// Handler names a runtime handler: the key of its URI.
type Handler struct {
	Kind    string // builtin or custom
	Key     string // completion, chat, auto_exact_match, hook, ...
	Version string // v0
}

// ParseURI reads "<provider>:<kind>:<key>:<version>" where provider is svc
// or agenta (the compatible platform's clients send their own).
func ParseURI(uri string) (Handler, error) {
	p := strings.Split(uri, ":")
	if len(p) != 4 || (p[0] != "svc" && p[0] != "agenta") || (p[1] != "builtin" && p[1] != "custom") || p[2] == "" || p[3] == "" {
		return Handler{}, errs.Field("is not a handler URI (svc:builtin|custom:<key>:v<n>)", uri, "body", "data", "revision", "data", "uri")
	}
	return Handler{Kind: p[1], Key: p[2], Version: p[3]}, nil
}

// URI is h's URI with provider.
func (h Handler) URI(provider string) string {
	return provider + ":" + h.Kind + ":" + h.Key + ":" + h.Version
}
