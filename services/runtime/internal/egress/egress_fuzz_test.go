package egress

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/errs"
)

// FuzzCheck: any string is either refused with a 422 or is an https URL
// without credentials whose host is a name that is not localhost and not
// numeric, or a literal IP the rules allow. Never a panic.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"https://example.com/hook", "http://example.com", "https://127.0.0.1/", "https://[::ffff:127.0.0.1]/",
		"https://2130706433/", "https://0x7f.1/", "https://u:p@example.com/", "https://localhost./",
		"https://[fe80::1%25eth0]/", "https://[64:ff9b::a00:1]/", "https://8.8.8.8:443/x?y#z", "https://%31%32%37.0.0.1/",
		"https://example.com:65536/", "//example.com", "https:example.com", "https://ex ample.com/",
	} {
		f.Add(s)
	}
	c := New(Config{})
	f.Fuzz(func(t *testing.T, raw string) {
		err := c.Check(raw)
		if err != nil {
			if errs.KindOf(err) != errs.Unprocessable {
				t.Fatalf("kind %d: %v", errs.KindOf(err), err)
			}
			// The URL the refusal shows never carries credentials, not
			// even read back (a hostless //p@ path must not look like them).
			if d, ok := errs.From(err).Detail.(map[string]any); ok {
				if shown, ok := d["url"].(string); ok {
					if su, perr := url.Parse(shown); perr == nil && su.User != nil {
						t.Fatalf("the refusal shows credentials: %q for %q", shown, raw)
					}
				}
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || u.Scheme != "https" || u.User != nil || u.Hostname() == "" {
			t.Fatalf("accepted %q", raw)
		}
		host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
		if ip, err := netip.ParseAddr(host); err == nil {
			if why := refusedAddr(ip); why != "" {
				t.Fatalf("accepted %q: %s", raw, why)
			}
			return
		}
		if host == "localhost" || strings.HasSuffix(host, ".localhost") || numericHost(host) {
			t.Fatalf("accepted %q", raw)
		}
	})
}

// FuzzRefusedAddr: the IPv4-mapped form of an address is judged like the
// address, and no address both refused and allowed.
func FuzzRefusedAddr(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{8, 8, 8, 8})
	f.Add([]byte{0x20, 0x02, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		why := refusedAddr(ip)
		if ip.Is4() {
			if mapped := netip.AddrFrom16(ip.As16()); refusedAddr(mapped) != why {
				t.Fatalf("%s: %q but mapped %q", ip, why, refusedAddr(mapped))
			}
		}
		if why == "" && (ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.Unmap().IsLoopback() || ip.Unmap().IsPrivate()) {
			t.Fatalf("%s allowed", ip)
		}
	})
}
