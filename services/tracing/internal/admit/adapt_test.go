package admit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdaptiveBound: slow answers shrink the bound (once per slow wave),
// down to a floor; quick answers grow it back, never past MaxBytes.
func TestAdaptiveBound(t *testing.T) {
	clock := time.Unix(0, 0)
	g := New(Config{MaxBytes: 4 << 20, ProjectShare: 1, TargetLatency: time.Second})
	g.now = func() time.Time { return clock }
	answer := func(n int64, took time.Duration) {
		release, err := g.Acquire("a", n)
		require.NoError(t, err)
		clock = clock.Add(took)
		release()
	}
	answer(1<<20, 1250*time.Millisecond)
	assert.EqualValues(t, 4<<20*4/5, g.Limit(), "a slow answer shrinks the bound by target/took")
	answer(1<<20, 3*time.Second)
	assert.EqualValues(t, 4<<20*4/5/2, g.Limit(), "by half at most")

	// A wave of slow answers that end together counts once.
	r1, _ := g.Acquire("a", 1<<10)
	r2, _ := g.Acquire("a", 1<<10)
	clock = clock.Add(2 * time.Second)
	r1()
	r2()
	assert.EqualValues(t, 4<<20*4/5/2/2, g.Limit())

	for range 40 {
		answer(1<<20, 5*time.Second)
	}
	assert.EqualValues(t, minLimit, g.Limit(), "never below the floor")
	_, err := g.Acquire("a", 10<<20)
	require.NoError(t, err, "and one request is always admitted alone")
	g.total = 0

	for range 200 {
		answer(1<<20, 10*time.Millisecond)
	}
	assert.EqualValues(t, 4<<20, g.Limit(), "quick answers grow it back to MaxBytes, no further")
}
