package spanmodel

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TraceID returns s as 32 lowercase hex: it accepts plain hex, 0x-prefixed
// hex and dashed UUIDs, as the compatible platform does.
func TraceID(s string) (string, error) {
	h, err := hexID(s)
	if err != nil || len(h) != 32 {
		return "", fmt.Errorf("trace_id %q is not 32 hex characters or a UUID", s)
	}
	return h, nil
}

// SpanID returns s as 16 lowercase hex. A 32-hex (UUID) form is accepted as
// the compatible platform stores span ids: the 16 hex characters written twice, so the
// first half is the id.
func SpanID(s string) (string, error) {
	h, err := hexID(s)
	switch {
	case err != nil:
	case len(h) == 16:
		return h, nil
	case len(h) == 32:
		return h[:16], nil
	}
	return "", fmt.Errorf("span_id %q is not 16 hex characters", s)
}

func hexID(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "0x")
	s = strings.ReplaceAll(s, "-", "")
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return "", fmt.Errorf("not hex")
		}
	}
	if strings.Trim(s, "0") == "" {
		return "", fmt.Errorf("zero id")
	}
	return s, nil
}

// Time parses a span timestamp: an integer (or numeric string) is seconds,
// milliseconds, microseconds or nanoseconds by its digit count (10, 13, 16,
// 19); a float is seconds; other strings are ISO 8601, naive ones UTC.
func Time(v any) (time.Time, error) {
	switch t := v.(type) {
	case time.Time:
		return t.UTC(), nil
	case float64:
		if t == math.Trunc(t) && math.Abs(t) >= 1e11 {
			return byDigits(strconv.FormatFloat(t, 'f', 0, 64))
		}
		sec, frac := math.Modf(t)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	case json.Number:
		return Time(string(t))
	case int64:
		return byDigits(strconv.FormatInt(t, 10))
	case string:
		s := strings.TrimSpace(t)
		if s == "" {
			return time.Time{}, fmt.Errorf("empty timestamp")
		}
		if isDigits(s) {
			return byDigits(s)
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && strings.Contains(s, ".") {
			return Time(f)
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
			if ts, err := time.Parse(layout, s); err == nil {
				return ts.UTC(), nil
			}
		}
		return time.Time{}, fmt.Errorf("timestamp %q is neither epoch digits nor ISO 8601", s)
	}
	return time.Time{}, fmt.Errorf("timestamp %v is neither a number nor a string", v)
}

func byDigits(s string) (time.Time, error) {
	neg := strings.HasPrefix(s, "-")
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q: %w", s, err)
	}
	digits := len(strings.TrimPrefix(s, "-"))
	if neg {
		return time.Time{}, fmt.Errorf("timestamp %q is negative", s)
	}
	switch digits {
	case 10:
		return time.Unix(n, 0).UTC(), nil
	case 13:
		return time.UnixMilli(n).UTC(), nil
	case 16:
		return time.UnixMicro(n).UTC(), nil
	case 19:
		return time.Unix(0, n).UTC().Truncate(time.Microsecond), nil
	}
	return time.Time{}, fmt.Errorf("timestamp %q has %d digits; want 10 (s), 13 (ms), 16 (µs) or 19 (ns)", s, digits)
}

func isDigits(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
