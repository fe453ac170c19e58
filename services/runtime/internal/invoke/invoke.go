// Package invoke is the runtime's use case: it resolves what a call names
// (a handler key, references to a stored revision, or an inline revision),
// runs the handler (prompts through an LLM provider, built-in evaluators,
// the LLM judge, custom code, hooks, the mock), records the invocation or
// annotation trace of what ran, and answers with the envelope of the
// compatible platform's services runtime (Response).
package invoke

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpstatus"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/runtime/internal/codebox"
	"github.com/assayhq/assay/services/runtime/internal/egress"
	"github.com/assayhq/assay/services/runtime/internal/evaluators"
	"github.com/assayhq/assay/services/runtime/internal/llm"
)

// Lookup names a stored revision: Family is application, evaluator or
// workflow; References are keyed as in the request (application,
// application_variant, application_revision, environment, ...).
type Lookup struct {
	Family     string
	References map[string]EntityRef
	Key        string // environment key
	Resolve    bool   // expand embeds
}

// Revisions finds stored revisions in the caller's project. No match is
// (nil, nil); a reference the registry refuses is errs.Unprocessable.
type Revisions interface {
	Revision(ctx context.Context, sc scope.Scope, q Lookup) (*Revision, error)
}

// Secrets returns a project's provider keys and custom providers, cached;
// Forget drops the project's entry, after a provider refused a key, so a
// key just replaced in the vault is read at the next call.
type Secrets interface {
	Secrets(ctx context.Context, sc scope.Scope) (llm.Secrets, error)
	Forget(project uuid.UUID)
}

// Recorder stores the spans of one invocation durably (the SPANS stream).
type Recorder interface {
	Record(ctx context.Context, sc scope.Scope, spans []Span) error
}

// Span is one span of what the runtime ran, before normalisation.
type Span struct {
	TraceID, SpanID, ParentID string
	Name, Type                string
	Start, End                time.Time
	Err                       error
	Ag                        map[string]any // the ag subtree: data, meta, metrics, session
	References                map[string]EntityRef
	Links                     map[string]Link
}

// ModelCache is the project's model-call cache (content-addressed: the
// key is llm.Client.CacheKey's), shared by the runtime's replicas.
type ModelCache interface {
	Lookup(ctx context.Context, sc scope.Scope, key string) (llm.Response, bool, error)
	Store(ctx context.Context, sc scope.Scope, key string, res llm.Response) error
}

// Service runs invocations.
type Service struct {
	Revisions Revisions
	Secrets   Secrets
	LLM       *llm.Client
	Recorder  Recorder
	Hooks     *egress.Client // hook applications and HTTPS handlers (30 s, 1 MB)
	Eval      evaluators.Env // built-in evaluators (webhooks: 10 s, 1 MB)
	Code      codebox.Limits
	Provider  string // URI provider answered with (svc)
	Log       *slog.Logger
	// Cache answers the model calls of evaluation cells (Call.Eval) that
	// were made before; nil: every call is made.
	Cache ModelCache
	// Prices prices what a cached answer saved and what a call made cost
	// (nil: nothing is counted).
	Prices *spanmodel.Prices
	// RateLimitWait is how long an evaluation cell's model call queues on
	// a provider's 429 before it fails (llm.Request.RateLimitWait).
	RateLimitWait time.Duration

	flight singleflight.Group // identical cacheable model calls in flight (coalesce)
}

// EvalOptions are an evaluation cell's: its repeat index, whether its
// model calls may be answered from the cache, and who hears that they
// wait on a provider's rate limit.
type EvalOptions struct {
	Cache  bool
	Repeat int
	OnWait func(provider string, until time.Time)
}

// ModelCalls counts an invocation's model calls: those made to a
// provider, those answered from the cache, and what the cached ones
// would have cost (USD, by the price table), and what the calls made
// cost (USD, by the price table; a run's budget adds these up).
type ModelCalls struct {
	Made      int     `json:"made"`
	Cached    int     `json:"cached"`
	CostSaved float64 `json:"cost_saved"`
	Cost      float64 `json:"cost,omitempty"`
}

// Call is one invocation.
type Call struct {
	Scope scope.Scope
	Key   string // the handler of the route (/services/<key>/v0/...); "" at the root
	Req   Request
	// Parent is the caller's W3C trace context (traceparent): the
	// invocation's root span joins that trace under that span.
	Parent Link
	// Stream, when set, receives completion and chat tokens as they
	// arrive; a handler that cannot stream refuses the call (406).
	Stream func(delta string) error
	// TraceID, when set (32 hex), is the invocation's trace id, and its
	// span ids are derived from it (SpanID): an evaluation cell executed
	// again after a crash rewrites the same spans, which the span store
	// replaces, instead of adding a second trace. Empty: random ids.
	TraceID string
	// Eval, for an evaluation cell: its model calls may be answered from
	// the model-call cache, and queue on a provider's 429. nil for a direct
	// invocation (the playground, an SDK, production traffic), which is
	// never answered from the cache: its caller asked the model now.
	Eval *EvalOptions
}

// Outcome is an invocation's answer: Response carries the status (and the
// HTTP status); Err is the cause of a failed one, for logs.
type Outcome struct {
	Response Response
	Err      error
	// Traced says a trace of the call was recorded: false for a call
	// refused before its handler ran (bad envelope, unknown handler or
	// revision), whose trace id names nothing.
	Traced bool
	// ModelCalls counts the call's model calls.
	ModelCalls ModelCalls
}

// run is one handler's execution state.
type run struct {
	s        *Service
	call     *Call
	handler  Handler
	rev      *Revision
	params   map[string]any
	inputs   map[string]any
	children []Span // model calls, filled by the handler
	calls    ModelCalls
	traceID  string
	rootID   string
}

// Invoke resolves, runs and records call. It never returns an error: a
// failure is an Outcome whose status says what went wrong, as the wire
// envelope does.
func (s *Service) Invoke(ctx context.Context, call Call) Outcome {
	start := time.Now()
	r := &run{s: s, call: &call, traceID: call.Parent.TraceID, rootID: randomHex(8)}
	switch {
	case call.TraceID != "":
		r.traceID, r.rootID = call.TraceID, SpanID(call.TraceID, 0)
	case r.traceID == "":
		r.traceID = randomHex(16)
	}
	session := call.Req.SessionID
	if session == "" {
		session = randomHex(16)
	}
	resp := Response{Version: Version, TraceID: r.traceID, SpanID: r.rootID, SessionID: session}

	outputs, err := r.execute(ctx)
	end := time.Now()
	if err == nil {
		resp.Status = RunStatus{Code: 200, Message: "Success"}
		resp.Data = &RunOutputs{Outputs: outputs}
	} else {
		resp.Status = statusOf(err)
	}
	// A call refused before anything ran (bad envelope, unknown handler,
	// missing revision, 406) leaves no trace: nothing was invoked.
	traced := false
	if r.handler.Key != "" && !isRefusal(err) {
		if rerr := r.record(ctx, start, end, session, outputs, err); rerr != nil && s.Log != nil {
			s.Log.Error("invocation trace not stored", "trace_id", r.traceID, "err", rerr)
		} else {
			traced = rerr == nil
		}
	}
	return Outcome{Response: resp, Err: err, Traced: traced, ModelCalls: r.calls}
}

// refusal marks errors raised before the handler ran.
type refusal struct{ error }

func (r refusal) Unwrap() error { return r.error }

func isRefusal(err error) bool {
	_, ok := err.(refusal)
	return ok
}

// execute resolves the handler, revision and parameters, then runs.
func (r *run) execute(ctx context.Context) (any, error) {
	if err := r.resolve(ctx); err != nil {
		return nil, refusal{err}
	}
	h, ok := handlers[r.handler.Key]
	if !ok {
		if evaluators.Has(r.handler.Key) {
			h = handlerFunc{run: builtinEvaluator}
		} else {
			return nil, refusal{errs.Message(errs.NotFound, "runtime.unknown_handler",
				fmt.Sprintf("no handler %q on this runtime", r.handler.Key), map[string]any{"key": r.handler.Key})}
		}
	}
	if r.call.Stream != nil && !h.stream {
		return nil, refusal{errs.Message(errs.NotAcceptable, "runtime.not_streamable",
			fmt.Sprintf("handler %q answers application/json only", r.handler.Key), map[string]any{"key": r.handler.Key})}
	}
	return h.run(ctx, r)
}

// resolve settles the handler, the revision and the parameters.
func (r *run) resolve(ctx context.Context) error {
	req := &r.call.Req
	r.inputs = req.Data.Inputs
	if w, ok := r.inputs["inputs"].(map[string]any); ok && len(r.inputs) == 1 {
		r.inputs = w // a {"inputs": {...}} wrapper
	}
	if r.inputs == nil {
		r.inputs = map[string]any{}
	}
	if len(req.References) > 0 {
		q, err := lookup(req)
		if err != nil {
			return err
		}
		rev, err := r.s.Revisions.Revision(ctx, r.call.Scope, q)
		if err != nil {
			return err
		}
		if rev == nil {
			return errs.Message(errs.NotFound, "runtime.revision_not_found",
				"no "+q.Family+" revision matches the references in this project", map[string]any{"references": req.References})
		}
		r.rev = rev
	} else if req.Data.Revision != nil {
		r.rev = &Revision{ID: req.Data.Revision.ID, Data: req.Data.Revision.Data}
	}

	uri := ""
	if r.rev != nil {
		uri = r.rev.Data.URI
	}
	switch {
	case r.call.Key != "":
		r.handler = Handler{Kind: kindOf(r.call.Key), Key: r.call.Key, Version: "v0"}
	case strings.HasPrefix(uri, "https://") || strings.HasPrefix(uri, "http://"):
		// A custom handler at a URL: called like a hook.
		r.handler = Handler{Kind: "custom", Key: "hook", Version: "v0"}
		if r.rev.Data.URL == "" {
			rev := *r.rev // a copy: stored revisions are shared by concurrent calls
			rev.Data.URL = uri
			r.rev = &rev
		}
	case uri != "":
		h, err := ParseURI(uri)
		if err != nil {
			return err
		}
		r.handler = h
	default:
		return errs.Message(errs.Unprocessable, "runtime.no_handler",
			"name what to run: references to a stored revision, or data.revision.data.uri", nil)
	}

	r.params = req.Data.Parameters
	if r.params == nil && r.rev != nil {
		r.params = r.rev.Data.Parameters
	}
	return nil
}

// lookup reads the family, references and environment key of a request.
func lookup(req *Request) (Lookup, error) {
	q := Lookup{References: map[string]EntityRef{}, Resolve: req.Flags.Resolve == nil || *req.Flags.Resolve}
	for _, fam := range []string{"application", "evaluator", "workflow"} {
		for _, k := range []string{fam, fam + "_variant", fam + "_revision"} {
			if ref, ok := req.References[k]; ok {
				q.Family = fam
				q.References[k] = ref
			}
		}
		if q.Family != "" {
			break
		}
	}
	for _, k := range []string{"environment", "environment_variant", "environment_revision"} {
		if ref, ok := req.References[k]; ok {
			q.References[k] = ref
		}
	}
	if req.Selector != nil {
		q.Key = req.Selector.Key
	}
	if q.Family == "" {
		if len(q.References) == 0 {
			return q, errs.Message(errs.Unprocessable, "runtime.no_revision_reference",
				"references name no application, evaluator, workflow or environment", map[string]any{"references": req.References})
		}
		q.Family = "application" // an environment and a key: what is deployed there
	}
	for k, ref := range q.References {
		if ref.ID == "" && ref.Slug == "" && ref.Version == "" {
			return q, errs.Field("needs an id, a slug or a version", nil, "body", "references", k)
		}
	}
	return q, nil
}

// kindOf is builtin for the runtime's built-in keys, custom for the rest.
func kindOf(key string) string {
	switch key {
	case "hook", "code", "mock", "feedback":
		return "custom"
	}
	return "builtin"
}

// statusOf is the envelope status of a failure; the HTTP status follows
// pkg/httpstatus's one mapping of kinds.
func statusOf(err error) RunStatus {
	e := errs.From(err)
	code := httpstatus.Of(e.Kind)
	msg := e.Msg
	if e.Kind == errs.Internal {
		msg = "An unexpected error occurred while running the handler."
	}
	return RunStatus{Code: code, Type: e.Code, Message: msg}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Inspection describes what a call would run, without running it.
type Inspection struct {
	Version    string               `json:"version"`
	Status     RunStatus            `json:"status"`
	Revision   InlineRevision       `json:"revision"`
	References map[string]EntityRef `json:"references,omitempty"`
	Stream     bool                 `json:"stream"` // the handler can stream tokens
}

// Inspect resolves call as Invoke does and describes the handler, the
// revision and the parameters it would run with.
func (s *Service) Inspect(ctx context.Context, call Call) (Inspection, error) {
	r := &run{s: s, call: &call}
	if err := r.resolve(ctx); err != nil {
		return Inspection{}, err
	}
	h, ok := handlers[r.handler.Key]
	if !ok && !evaluators.Has(r.handler.Key) {
		return Inspection{}, errs.Message(errs.NotFound, "runtime.unknown_handler",
			fmt.Sprintf("no handler %q on this runtime", r.handler.Key), map[string]any{"key": r.handler.Key})
	}
	in := Inspection{Version: Version, Status: RunStatus{Code: 200, Message: "Success"}, References: r.references(), Stream: h.stream}
	if r.rev != nil {
		in.Revision = InlineRevision{ID: r.rev.ID, Data: r.rev.Data}
	}
	in.Revision.Data.URI = r.handler.URI(s.provider())
	in.Revision.Data.Parameters = r.params
	return in, nil
}
