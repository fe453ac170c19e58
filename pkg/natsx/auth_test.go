package natsx_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/assayhq/assay/pkg/evaljob"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/natstest"
)

const authConf = "../../deployments/nats/auth.conf"

var natsUsers = []string{"registry", "runtime", "tracing", "writer"}

// authServer starts an embedded JetStream server with conf (the users of
// deployments/nats/auth.conf) and returns its URL and the users' passwords.
func authServer(t *testing.T, conf string) (string, map[string]string) {
	t.Helper()
	pw := map[string]string{}
	for _, u := range natsUsers {
		pw[u] = u + "-secret-" + strings.Repeat("x", 20)
		t.Setenv(strings.ToUpper(u)+"_NATS_PASSWORD", pw[u])
	}
	opts, err := server.ProcessConfigFile(conf)
	require.NoError(t, err)
	opts.Host, opts.Port = "127.0.0.1", server.RANDOM_PORT
	opts.JetStream, opts.StoreDir, opts.JetStreamMaxStore = true, t.TempDir(), natstest.MaxStore
	opts.NoLog, opts.NoSigs = true, true
	srv, err := server.NewServer(opts)
	require.NoError(t, err)
	go srv.Start()
	require.True(t, srv.ReadyForConnections(10*time.Second))
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv.ClientURL(), pw
}

// client is one service's connection.
type client struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func connectAs(t *testing.T, url, user, password string) *client {
	t.Helper()
	c := &client{}
	nc, err := nats.Connect(url, nats.UserInfo(user, password))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	c.nc = nc
	c.js, err = jetstream.New(nc)
	require.NoError(t, err)
	return c
}

// refused publishes to subject and reports whether the server refused it.
// The server answers a refused subject with -ERR before the PONG of the
// Flush that follows, and the client records it (LastError) as it reads it.
func (c *client) refused(t *testing.T, subject string) bool {
	t.Helper()
	require.NoError(t, c.nc.Publish(subject, []byte("x")))
	require.NoError(t, c.nc.Flush())
	return violation(c.nc.LastError(), subject)
}

// subscribeRefused subscribes to subject and reports whether the server
// refused it.
func (c *client) subscribeRefused(t *testing.T, subject string) bool {
	t.Helper()
	sub, err := c.nc.SubscribeSync(subject)
	require.NoError(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	require.NoError(t, c.nc.Flush())
	return violation(c.nc.LastError(), subject)
}

func violation(err error, subject string) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "permissions violation") && strings.Contains(err.Error(), `"`+subject+`"`)
}

// TestAuthConfigPermissions starts NATS with deployments/nats/auth.conf,
// replays what each service does (the same stream, consumer and bucket
// calls as its code), with no permission refused, and shows what a service
// must not do is refused: an unauthenticated or wrongly authenticated
// client, a writer or registry publishing span batches, tracing or the
// writer publishing evaluation jobs, anyone reading another service's
// subjects or deleting a stream.
func TestAuthConfigPermissions(t *testing.T) {
	url, pw := authServer(t, authConf)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	project := "0190a4f2-0000-7000-8000-000000000001"

	_, err := nats.Connect(url)
	require.Error(t, err, "an anonymous client connected")
	assert.Contains(t, strings.ToLower(err.Error()), "authorization violation")
	_, err = nats.Connect(url, nats.UserInfo("tracing", pw["writer"]))
	require.Error(t, err, "tracing connected with the writer's password")

	// The services' own connection (natsx.Connect with *_NATS_USER and
	// *_NATS_PASSWORD) authenticates.
	nc, err := natsx.Connect(natsx.Config{URL: url, User: "registry", Password: pw["registry"], PublishTimeout: 5 * time.Second}, "registry", logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError}))
	require.NoError(t, err)
	defer nc.NC.Close()
	require.NoError(t, nc.Check(ctx))

	tracing := connectAs(t, url, "tracing", pw["tracing"])
	writer := connectAs(t, url, "writer", pw["writer"])
	registry := connectAs(t, url, "registry", pw["registry"])
	runtime := connectAs(t, url, "runtime", pw["runtime"])

	// registry: declares EVALS, publishes a job, purges a project's jobs.
	_, err = registry.js.CreateOrUpdateStream(ctx, evaljob.StreamConfig(1, time.Minute))
	require.NoError(t, err)
	_, err = registry.js.Publish(ctx, evaluation.Subject(project), []byte(`{}`), jetstream.WithMsgID("job-1"))
	require.NoError(t, err)

	// tracing: declares SPANS, keeps delete epochs, publishes a batch.
	_, err = tracing.js.CreateOrUpdateStream(ctx, spanstream.StreamConfig(1<<30, time.Minute))
	require.NoError(t, err)
	kv, err := tracing.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "TRACING_DELETE_EPOCHS", History: 1, TTL: time.Hour})
	require.NoError(t, err)
	w, err := kv.WatchAll(ctx)
	require.NoError(t, err)
	for e := range w.Updates() {
		if e == nil {
			break
		}
	}
	_, err = kv.Put(ctx, project, []byte("12345678"))
	require.NoError(t, err)
	_, err = kv.Get(ctx, project)
	require.NoError(t, err)
	require.NoError(t, kv.Delete(ctx, project))
	require.NoError(t, w.Stop())
	_, err = tracing.js.Publish(ctx, spanstream.SpanSubject(project), []byte("batch"), jetstream.WithMsgID("b-1"))
	require.NoError(t, err)
	_, err = tracing.js.AccountInfo(ctx)
	require.NoError(t, err)

	// writer: declares both span streams, consumes as "writer", acks,
	// parks a batch on SPANS_DEAD.
	_, err = writer.js.CreateOrUpdateStream(ctx, spanstream.StreamConfig(1<<30, time.Minute))
	require.NoError(t, err)
	_, err = writer.js.CreateOrUpdateStream(ctx, spanstream.DeadLetterStreamConfig())
	require.NoError(t, err)
	cons, err := writer.js.CreateOrUpdateConsumer(ctx, spanstream.SpanStream, jetstream.ConsumerConfig{
		Durable: spanstream.WriterConsumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second, MaxDeliver: -1, MaxAckPending: 4096})
	require.NoError(t, err)
	// its /metrics: the backlog, the batch above waiting in it
	b, err := natsx.ReadBacklog(ctx, writer.js, spanstream.SpanStream, spanstream.WriterConsumer)
	require.NoError(t, err, "the writer reads its backlog")
	assert.Positive(t, b.OldestAge, "the writer reads its oldest batch's age")
	it, err := cons.Messages(jetstream.PullMaxMessages(2), jetstream.PullHeartbeat(time.Second))
	require.NoError(t, err)
	msg, err := it.Next()
	require.NoError(t, err)
	assert.Equal(t, "batch", string(msg.Data()))
	require.NoError(t, msg.DoubleAck(ctx))
	it.Stop()
	_, err = writer.js.Publish(ctx, spanstream.DeadLetterSubject(project), []byte("parked"))
	require.NoError(t, err)

	// tracing purges a deleted project's batches from both span streams.
	for _, name := range []string{spanstream.SpanStream, spanstream.DeadLetterStream} {
		s, err := tracing.js.Stream(ctx, name)
		require.NoError(t, err)
		require.NoError(t, s.Purge(ctx, jetstream.WithPurgeSubject("spans_dead."+project)))
	}

	// runtime: declares EVALS, consumes "runtime-evals", marks progress and
	// acks. It publishes nothing: its fan-out jobs go through the registry
	// (POST /internal/evaluations/jobs), its invocation spans through
	// tracing (POST /internal/spans/batch).
	_, err = runtime.js.CreateOrUpdateStream(ctx, evaljob.StreamConfig(1, time.Minute))
	require.NoError(t, err)
	rc, err := runtime.js.CreateOrUpdateConsumer(ctx, evaluation.Stream, jetstream.ConsumerConfig{
		Durable: "runtime-evals", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute, MaxDeliver: 5})
	require.NoError(t, err)
	b, err = natsx.ReadBacklog(ctx, runtime.js, evaluation.Stream, "runtime-evals")
	require.NoError(t, err, "the runtime reads its backlog")
	assert.Positive(t, b.OldestAge, "the runtime reads its oldest job's age")
	batch, err := rc.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	got := 0
	for m := range batch.Messages() {
		got++
		require.NoError(t, m.InProgress())
		require.NoError(t, m.DoubleAck(ctx))
	}
	require.NoError(t, batch.Error())
	require.Equal(t, 1, got, "the runtime fetched no job")
	_, err = runtime.js.Stream(ctx, evaluation.Stream)
	require.NoError(t, err)

	// registry purges the project's jobs.
	s, err := registry.js.Stream(ctx, evaluation.Stream)
	require.NoError(t, err)
	require.NoError(t, s.Purge(ctx, jetstream.WithPurgeSubject(evaluation.Subject(project))))

	for _, c := range []*client{tracing, writer, registry, runtime} {
		require.NoError(t, c.nc.Flush())
		require.NoError(t, c.nc.LastError(), "a service's own call was refused")
	}

	// What each must not do.
	// Only tracing publishes span batches, only the registry evaluation jobs.
	for name, c := range map[string]*client{"writer": writer, "registry": registry, "runtime": runtime} {
		assert.True(t, c.refused(t, spanstream.SpanSubject(project)), "%s published a span batch", name)
	}
	for name, c := range map[string]*client{"tracing": tracing, "writer": writer, "runtime": runtime} {
		assert.True(t, c.refused(t, evaluation.Subject(project)), "%s published an evaluation job", name)
	}
	for name, c := range map[string]*client{"tracing": tracing, "writer": writer, "registry": registry, "runtime": runtime} {
		assert.True(t, c.subscribeRefused(t, "spans.>"), "%s read span batches off the wire", name)
		assert.True(t, c.subscribeRefused(t, "evals.>"), "%s read evaluation jobs off the wire", name)
		for _, stream := range []string{spanstream.SpanStream, evaluation.Stream} {
			assert.True(t, c.refused(t, "$JS.API.STREAM.DELETE."+stream), "%s may delete %s", name, stream)
		}
		assert.True(t, c.refused(t, "$JS.API.CONSUMER.MSG.NEXT.SPANS.other"), "%s pulled SPANS as another consumer", name)
	}
	assert.True(t, runtime.refused(t, "$JS.API.STREAM.PURGE.SPANS"), "the runtime may purge span batches")
	assert.True(t, runtime.refused(t, "$JS.API.STREAM.CREATE.SPANS"), "the runtime may declare the span stream")
	assert.True(t, tracing.refused(t, "$JS.API.STREAM.PURGE.EVALS"), "tracing may purge evaluation jobs")
	assert.True(t, writer.refused(t, "$KV.TRACING_DELETE_EPOCHS."+project), "the writer may write delete epochs")
}

// TestAuthConfigWithBcryptHashes: the file with each password replaced by
// its bcrypt hash (how an operator with secrets.existingSecret may render it,
// deployments/README.md) lets every service in with its plain password and
// refuses a wrong one.
func TestAuthConfigWithBcryptHashes(t *testing.T) {
	b, err := os.ReadFile(authConf)
	require.NoError(t, err)
	conf := string(b)
	pw := map[string]string{}
	for _, u := range natsUsers {
		pw[u] = u + "-hashed-" + strings.Repeat("y", 20)
		h, err := bcrypt.GenerateFromPassword([]byte(pw[u]), bcrypt.MinCost)
		require.NoError(t, err)
		conf = strings.ReplaceAll(conf, "$"+strings.ToUpper(u)+"_NATS_PASSWORD", `"`+string(h)+`"`)
	}
	path := filepath.Join(t.TempDir(), "auth.conf")
	require.NoError(t, os.WriteFile(path, []byte(conf), 0o600))
	url, _ := authServer(t, path)
	for _, u := range natsUsers {
		nc, err := nats.Connect(url, nats.UserInfo(u, pw[u]))
		require.NoError(t, err, u)
		nc.Close()
		_, err = nats.Connect(url, nats.UserInfo(u, pw[u]+"x"))
		require.Error(t, err, "%s got in with a wrong password", u)
	}
}
