package admit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/tracing/internal/admit"
)

// TestGateShares: past the bound, the tenant holding more than its share
// is told to slow down (429), any other to retry (503); a request is
// admitted alone whatever its size; released bytes are free again; while
// another tenant waits (was refused a moment ago) or holds bytes, a tenant
// may hold no more than its share.
func TestGateShares(t *testing.T) {
	g := admit.New(admit.Config{MaxBytes: 100, ProjectShare: 0.5, UnknownSize: 30})

	big, err := g.Acquire("a", 500)
	require.NoError(t, err, "alone, a request over the bound passes")
	_, err = g.Acquire("b", 1)
	assert.ErrorIs(t, err, admit.ErrFull, "b holds nothing: 503")
	big()
	big() // a second release changes nothing
	assert.Zero(t, g.InFlight())
	w1, err := g.Acquire("a", 40)
	require.NoError(t, err)
	_, err = g.Acquire("a", 40)
	assert.ErrorIs(t, err, admit.ErrOverShare, "b waits: a may hold its share, 50, and no more")
	w2, err := g.Acquire("b", 50)
	require.NoError(t, err, "b gets the rest")
	w1()
	w2()

	// The same bound, with no one waiting.
	g = admit.New(admit.Config{MaxBytes: 100, ProjectShare: 0.5, UnknownSize: 30})
	a1, err := g.Acquire("a", 40)
	require.NoError(t, err)
	a2, err := g.Acquire("a", 40)
	require.NoError(t, err)
	_, err = g.Acquire("a", 30)
	assert.ErrorIs(t, err, admit.ErrOverShare, "a holds 80 of 100: 429")
	_, err = g.Acquire("b", 30)
	assert.ErrorIs(t, err, admit.ErrFull, "b holds nothing: 503")
	b1, err := g.Acquire("b", 20)
	require.NoError(t, err, "what fits is admitted")
	_, err = g.Acquire("c", -1)
	assert.ErrorIs(t, err, admit.ErrFull, "an unknown size reserves UnknownSize")
	a1()
	c1, err := g.Acquire("c", -1)
	require.NoError(t, err)
	assert.EqualValues(t, 90, g.InFlight())
	a2()
	b1()
	c1()
	assert.Zero(t, g.InFlight())
	assert.EqualValues(t, 2, g.Full.Load())
	assert.EqualValues(t, 1, g.OverShare.Load())

	var off *admit.Gate = admit.New(admit.Config{})
	release, err := off.Acquire("a", 1<<40)
	require.NoError(t, err, "MaxBytes 0: no bound")
	release()
}

func TestConfigValidate(t *testing.T) {
	assert.NoError(t, admit.Config{MaxBytes: 1, ProjectShare: 0.5}.Validate())
	assert.Error(t, admit.Config{MaxBytes: -1, ProjectShare: 0.5}.Validate())
	assert.Error(t, admit.Config{MaxBytes: 1, ProjectShare: 0}.Validate())
	assert.Error(t, admit.Config{MaxBytes: 1, ProjectShare: 1.5}.Validate())
}
