package audit_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/services/gateway/internal/audit"
)

// FuzzDecodeCursor: GET /audit's cursor parameter is client input; any
// string decodes or is refused without panicking, and a decoded cursor
// encodes back to one that decodes to it.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(audit.Cursor{At: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), ID: uuid.MustParse("0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b")}.Encode())
	f.Add("")
	f.Add("xyz")
	f.Add("e30") // {}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := audit.DecodeCursor(s)
		if err != nil {
			return
		}
		again, err := audit.DecodeCursor(c.Encode())
		if err != nil || !again.At.Equal(c.At) || again.ID != c.ID {
			t.Fatalf("%q: %+v does not round-trip: %+v %v", s, c, again, err)
		}
	})
}
