// Package natsx connects to NATS JetStream, declares streams and publishes
// with the guarantee that a message is stored before Publish returns.
package natsx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config is a NATS connection. Variables: <PREFIX>_NATS_*.
type Config struct {
	URL            string        `default:"nats://127.0.0.1:54222" desc:"NATS server URL(s), comma separated"`
	PublishTimeout time.Duration `split_words:"true" default:"5s" desc:"how long a publish waits for the JetStream ack"`
	// Each service has its own NATS user, allowed only its own subjects
	// (deployments/nats/auth.conf).
	User     string `desc:"NATS user name (deployments/nats/auth.conf); empty: none, or the one in the URL"`
	Password string `desc:"password of the NATS user"`
}

// Conn is a NATS connection with its JetStream context.
type Conn struct {
	NC *nats.Conn
	JS jetstream.JetStream
}

// Connect dials NATS. It keeps retrying in the background when the server is
// down at start, so a service comes up and reports not-ready instead of
// crashing; readiness follows the connection.
func Connect(cfg Config, name string, log *slog.Logger) (*Conn, error) {
	opts := []nats.Option{
		nats.Name(name),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("nats disconnected", "err", err)
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats reconnected", "url", c.ConnectedUrl()) }),
		// A subject outside the user's permissions is refused by the server
		// asynchronously; say so instead of leaving a publish to time out.
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { log.Error("nats", "err", err) }),
	}
	if cfg.User != "" {
		opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect nats: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("open jetstream: %w", err)
	}
	return &Conn{NC: nc, JS: js}, nil
}

// Drain lets pending publishes and subscriptions finish, then closes.
func (c *Conn) Drain() error {
	if err := c.NC.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		return fmt.Errorf("drain nats: %w", err)
	}
	return nil
}

// Check is a readiness check: connected, and JetStream answers.
func (c *Conn) Check(ctx context.Context) error {
	if !c.NC.IsConnected() {
		return fmt.Errorf("nats %s", c.NC.Status())
	}
	if _, err := c.JS.AccountInfo(ctx); err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	return nil
}

// errStorageResourcesExceeded is JetStream's "insufficient storage resources
// available" (JSStorageResourcesExceededErr), which nats.go does not name.
const errStorageResourcesExceeded jetstream.ErrorCode = 10047

// EnsureStream creates the stream or updates it to cfg.
func (c *Conn) EnsureStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := c.JS.CreateOrUpdateStream(ctx, cfg)
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == errStorageResourcesExceeded {
		// A file stream reserves its MaxBytes on the server at creation;
		// a server without max_file_store allows 75 % of the disk then free.
		return nil, fmt.Errorf("ensure stream %s: %w: the server cannot reserve the stream's %d bytes; "+
			"lower <SERVICE>_STREAM_MAX_BYTES or raise the server's jetstream max_file_store", cfg.Name, err, cfg.MaxBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("ensure stream %s: %w", cfg.Name, err)
	}
	return s, nil
}

// Publisher publishes and returns only once JetStream acknowledged storage.
type Publisher struct {
	js      jetstream.JetStream
	timeout time.Duration
}

// NewPublisher returns a publisher with the configured ack timeout.
func NewPublisher(c *Conn, cfg Config) *Publisher {
	return &Publisher{js: c.JS, timeout: cfg.PublishTimeout}
}

// Publish stores data on subject. msgID, when set, is the Nats-Msg-Id that
// lets JetStream drop a retried duplicate within the stream's window.
func (p *Publisher) Publish(ctx context.Context, subject string, data []byte, msgID string) (*jetstream.PubAck, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	var opts []jetstream.PublishOpt
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	ack, err := p.js.Publish(ctx, subject, data, opts...)
	if err != nil {
		return nil, fmt.Errorf("publish to %s: %w", subject, err)
	}
	return ack, nil
}
