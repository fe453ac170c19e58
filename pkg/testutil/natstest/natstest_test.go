package natstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/natstest"
)

// The span stream's default size (4 GiB) is a reservation a test server must
// accept whatever the machine's free disk: JetStream's own default store
// limit is 75 % of the free space at start, so a CI machine with a nearly
// full disk refused the writer's stream and failed every platform test.
func TestDefaultSpanStreamIsAccepted(t *testing.T) {
	srv := natstest.New(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	settings := spanstream.StreamSettings{MaxBytes: 4 << 30, DedupWindow: 2 * time.Minute}
	for _, cfg := range []jetstream.StreamConfig{settings.Config(), settings.DeadLetterConfig()} {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			t.Fatalf("create stream %s: %v", cfg.Name, err)
		}
	}
}
