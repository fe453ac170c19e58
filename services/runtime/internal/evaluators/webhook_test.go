package evaluators

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/runtime/internal/egress"
)

// webhookServer answers each POST with status and body and keeps the
// payload it received.
type webhookServer struct {
	*httptest.Server
	mu      sync.Mutex
	status  int
	body    string
	delay   time.Duration
	payload map[string]any
}

func newWebhookServer(t testing.TB) *webhookServer {
	s := &webhookServer{status: 200}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.payload = nil
		_ = json.Unmarshal(b, &s.payload)
		status, body, delay := s.status, s.body, s.delay
		s.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *webhookServer) answer(status int, body string) {
	s.mu.Lock()
	s.status, s.body = status, body
	s.mu.Unlock()
}

func whKind(t *testing.T, err error, kind errs.Kind, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want kind %d", kind)
	}
	e := errs.From(err)
	if e.Kind != kind {
		t.Fatalf("error %v has kind %d; want %d", err, e.Kind, kind)
	}
	for _, f := range fragments {
		if !strings.Contains(e.Msg, f) {
			t.Errorf("message %q lacks %q", e.Msg, f)
		}
	}
}

func TestWebhookAnswers(t *testing.T) {
	srv := newWebhookServer(t)
	env := Env{Egress: egress.New(egress.Config{AllowPrivate: true})}
	cases := []struct {
		name      string
		threshold any
		status    int
		body      string
		want      map[string]any
		kind      errs.Kind
		fragments []string
	}{
		{name: "score over the default threshold", body: "0.8", want: map[string]any{"score": 0.8, "success": true}},
		{name: "score under", body: "0.2", want: map[string]any{"score": 0.2, "success": false}},
		{name: "score at the threshold", body: "0.5", want: map[string]any{"score": 0.5, "success": true}},
		{name: "own threshold", threshold: 0.9, body: "0.8", want: map[string]any{"score": 0.8, "success": false}},
		{name: "integer score", body: "1", want: map[string]any{"score": 1.0, "success": true}},
		{name: "true", body: "true", want: map[string]any{"score": 1.0, "success": true}},
		{name: "false", body: "false", want: map[string]any{"score": 0.0, "success": false}},
		{name: "object as is", body: `{"score": 0.3, "success": true, "why": {"n": 2}}`, want: map[string]any{"score": 0.3, "success": true, "why": map[string]any{"n": 2.0}}},
		{name: "numeric string", body: `"0.7"`, want: map[string]any{"score": 0.7, "success": true}},
		{name: "boolean string", body: `"false"`, want: map[string]any{"score": 0.0, "success": false}},
		{name: "other string", body: `"great"`, kind: errs.FailedDependency, fragments: []string{"a string", "number"}},
		{name: "null", body: `null`, kind: errs.FailedDependency, fragments: []string{"null"}},
		{name: "array", body: `[1]`, kind: errs.FailedDependency, fragments: []string{"array"}},
		{name: "not JSON", body: `score: 1`, kind: errs.FailedDependency, fragments: []string{"not JSON"}},
		{name: "two values", body: `1 2`, kind: errs.FailedDependency, fragments: []string{"not JSON"}},
		{name: "500", status: 500, body: "oops", kind: errs.FailedDependency, fragments: []string{"HTTP 500"}},
		{name: "201 is not 200", status: 201, body: "1", kind: errs.FailedDependency, fragments: []string{"HTTP 201"}},
		{name: "integer threshold refused", threshold: 1, body: "1", kind: errs.Unprocessable, fragments: []string{"threshold", "float"}},
		{name: "json.Number integer refused", threshold: json.Number("1"), body: "1", kind: errs.Unprocessable, fragments: []string{"float"}},
		{name: "json.Number float", threshold: json.Number("1.0"), body: "1", want: map[string]any{"score": 1.0, "success": true}},
		{name: "threshold zero", threshold: 0.0, body: "1", kind: errs.Unprocessable, fragments: []string{"(0, 1]"}},
		{name: "threshold over one", threshold: 1.5, body: "1", kind: errs.Unprocessable, fragments: []string{"(0, 1]"}},
		{name: "threshold string", threshold: "0.5", body: "1", kind: errs.Unprocessable, fragments: []string{"number"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status := c.status
			if status == 0 {
				status = 200
			}
			srv.answer(status, c.body)
			params := map[string]any{"webhook_url": srv.URL + "/score"}
			if c.threshold != nil {
				params["threshold"] = c.threshold
			}
			got, err := webhook(context.Background(), env, Request{Key: "auto_webhook_test", Parameters: params,
				Inputs: map[string]any{"country": "France", "correct_answer": "Paris"}, Outputs: "Paris"})
			if c.want == nil {
				whKind(t, err, c.kind, c.fragments...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v; want %#v", got, c.want)
			}
		})
	}
}

func TestWebhookPayload(t *testing.T) {
	srv := newWebhookServer(t)
	srv.answer(200, "1")
	env := Env{Egress: egress.New(egress.Config{AllowPrivate: true})}
	cases := []struct {
		outputs any
		want    any
	}{
		{"Paris", "Paris"},
		// A dict is sent as Python's json.dumps writes it.
		{map[string]any{"b": []any{1.0, 2.5, true, nil}, "a": "é\"x"}, `{"a": "\u00e9\"x", "b": [1, 2.5, true, null]}`},
		{[]any{"x", 1.0}, []any{"x", 1.0}},
		{0.5, 0.5},
		{nil, nil},
	}
	for _, c := range cases {
		inputs := map[string]any{"q": "capital?", "correct_answer": "Paris", "testcase_id": "t1"}
		if _, err := webhook(context.Background(), env, Request{Parameters: map[string]any{"webhook_url": srv.URL}, Inputs: inputs, Outputs: c.outputs}); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"inputs": inputs, "output": c.want}
		if !reflect.DeepEqual(srv.payload, want) {
			t.Fatalf("payload %#v; want %#v", srv.payload, want)
		}
	}
	// No inputs is an empty object, not null.
	if _, err := webhook(context.Background(), env, Request{Parameters: map[string]any{"webhook_url": srv.URL}}); err != nil {
		t.Fatal(err)
	}
	if in, ok := srv.payload["inputs"].(map[string]any); !ok || len(in) != 0 {
		t.Fatalf("inputs %#v", srv.payload["inputs"])
	}
}

func TestWebhookRefusals(t *testing.T) {
	srv := newWebhookServer(t)
	strict := Env{Egress: egress.New(egress.Config{})}
	for _, u := range []any{nil, "", 3, srv.URL, strings.Replace(srv.URL, "http:", "https:", 1), "https://169.254.169.254/latest/meta-data/", "https://u:p@example.com/"} {
		params := map[string]any{}
		if u != nil {
			params["webhook_url"] = u
		}
		_, err := webhook(context.Background(), strict, Request{Parameters: params})
		whKind(t, err, errs.Unprocessable, "webhook_url")
		if d, ok := errs.From(err).Detail.([]errs.FieldError); !ok || !reflect.DeepEqual(d[0].Loc, []any{"parameters", "webhook_url"}) {
			t.Fatalf("detail %#v", errs.From(err).Detail)
		}
	}
	_, err := webhook(context.Background(), Env{}, Request{Parameters: map[string]any{"webhook_url": "https://example.com"}})
	whKind(t, err, errs.Internal)
}

func TestWebhookLimits(t *testing.T) {
	srv := newWebhookServer(t)
	env := Env{Egress: egress.New(egress.Config{AllowPrivate: true, Timeout: 200 * time.Millisecond, MaxBytes: 100})}
	srv.answer(200, `{"score": 1, "pad": "`+strings.Repeat("x", 200)+`"}`)
	_, err := webhook(context.Background(), env, Request{Parameters: map[string]any{"webhook_url": srv.URL}})
	whKind(t, err, errs.FailedDependency, "100 bytes")

	srv.mu.Lock()
	srv.delay = 5 * time.Second
	srv.mu.Unlock()
	_, err = webhook(context.Background(), env, Request{Parameters: map[string]any{"webhook_url": srv.URL}})
	whKind(t, err, errs.Timeout)
}

func TestPyDumps(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{map[string]any{}, "{}"},
		{map[string]any{"z": map[string]any{"y": []any{}}, "a": 1e20, "m": -0.25, "e": "😀\n"}, `{"a": 1e+20, "e": "\ud83d\ude00\n", "m": -0.25, "z": {"y": []}}`},
		{map[string]any{"n": json.Number("12"), "i": 7, "s": []string{"a"}}, `{"i": 7, "n": 12, "s": ["a"]}`},
	} {
		if got := pyDumps(c.in); got != c.want {
			t.Errorf("pyDumps(%v) = %s; want %s", c.in, got, c.want)
		}
	}
}

func BenchmarkWebhook(b *testing.B) {
	srv := newWebhookServer(b)
	srv.answer(200, "0.9")
	env := Env{Egress: egress.New(egress.Config{AllowPrivate: true})}
	req := Request{Parameters: map[string]any{"webhook_url": srv.URL}, Inputs: map[string]any{"country": "France", "correct_answer": "Paris"},
		Outputs: map[string]any{"answer": "Paris", "confidence": 0.9}}
	for b.Loop() {
		if _, err := webhook(context.Background(), env, req); err != nil {
			b.Fatal(err)
		}
	}
}
