package evaluations

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTQuantile975 against the t table's two-sided 95% column.
func TestTQuantile975(t *testing.T) {
	for df, want := range map[float64]float64{1: 12.7062, 2: 4.3027, 3: 3.1824, 5: 2.5706, 10: 2.2281, 30: 2.0423, 100: 1.9840, 1e7: 1.9600} {
		assert.InDelta(t, want, tQuantile975(df), 1e-4, "df %v", df)
	}
	assert.InDelta(t, 2.7764, tQuantile975(4), 1e-4)
	// Welch's degrees of freedom are not whole: between its neighbours.
	q := tQuantile975(4.5)
	assert.True(t, q < tQuantile975(4) && q > tQuantile975(5), "%v", q)
}
