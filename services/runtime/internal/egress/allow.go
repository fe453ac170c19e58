package egress

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// AllowList is the operator's exception to the address rules: private
// model servers (Ollama, vLLM, a proxy) and internal hooks the runtime may
// reach although their addresses are private, over plain http too. It is
// RUNTIME_EGRESS_ALLOW: entries separated by commas, each
//
//	10.1.2.0/24          a network, any port
//	10.1.2.3             one address, any port
//	10.1.2.3:11434       one address and port ([fd00::1]:8000 for IPv6)
//	ollama.internal      a host name, any port: whatever it resolves to
//	ollama.internal:11434
//
// An address entry admits a connection by the address it goes to, after
// resolution, whatever name led there; a name entry admits the name as the
// URL spells it, so it trusts the operator's DNS for that name. The zero
// value admits nothing.
type AllowList struct {
	entries []allowEntry
	text    string
}

type allowEntry struct {
	prefix netip.Prefix // an address entry when valid
	name   string       // a name entry: lower case, no trailing dot
	port   int          // 0: any port
}

// maxAllowList bounds the variable.
const maxAllowList = 64 << 10

// ParseAllowList reads an allow-list (see AllowList); an entry it cannot
// read is an error naming it.
func ParseAllowList(value string) (AllowList, error) {
	var l AllowList
	err := l.Decode(value)
	return l, err
}

// Decode implements envconfig.Decoder for RUNTIME_EGRESS_ALLOW.
func (l *AllowList) Decode(value string) error {
	if len(value) > maxAllowList {
		return fmt.Errorf("egress allow-list: longer than %d bytes", maxAllowList)
	}
	out := AllowList{text: strings.TrimSpace(value)}
	for raw := range strings.SplitSeq(value, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		e, err := parseEntry(raw)
		if err != nil {
			return fmt.Errorf("egress allow-list: %q %w", raw, err)
		}
		out.entries = append(out.entries, e)
	}
	*l = out
	return nil
}

func parseEntry(raw string) (allowEntry, error) {
	if strings.Contains(raw, "/") {
		p, err := netip.ParsePrefix(raw)
		if err != nil {
			return allowEntry{}, fmt.Errorf("is not a network (CIDR)")
		}
		return allowEntry{prefix: unmapPrefix(p.Masked())}, nil
	}
	if ip, err := netip.ParseAddr(raw); err == nil {
		if ip.Zone() != "" {
			return allowEntry{}, fmt.Errorf("has a zone: scoped addresses are never reached")
		}
		ip = ip.Unmap()
		return allowEntry{prefix: netip.PrefixFrom(ip, ip.BitLen())}, nil
	}
	if ap, err := netip.ParseAddrPort(raw); err == nil {
		ip := ap.Addr().Unmap()
		if ap.Port() == 0 || ip.Zone() != "" {
			return allowEntry{}, fmt.Errorf("is not address:port")
		}
		return allowEntry{prefix: netip.PrefixFrom(ip, ip.BitLen()), port: int(ap.Port())}, nil
	}
	name, port := raw, 0
	if h, p, err := net.SplitHostPort(raw); err == nil {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 {
			return allowEntry{}, fmt.Errorf("has an invalid port")
		}
		name, port = h, n
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if name == "" || numericHost(name) || strings.ContainsAny(name, ":[]") {
		return allowEntry{}, fmt.Errorf("is not a network, an address or a host name")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return allowEntry{}, fmt.Errorf("is not a host name")
		}
	}
	return allowEntry{name: name, port: port}, nil
}

// unmapPrefix turns ::ffff:10.0.0.0/104 into 10.0.0.0/8: addresses are
// compared unmapped.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// String is the list as configured.
func (l AllowList) String() string { return l.text }

// Empty reports whether the list admits nothing.
func (l AllowList) Empty() bool { return len(l.entries) == 0 }

func (e allowEntry) portOK(port int) bool { return e.port == 0 || e.port == port }

// admitsAddr reports whether an address entry admits ip at port.
func (l AllowList) admitsAddr(ip netip.Addr, port int) bool {
	if ip.Zone() != "" {
		return false
	}
	ip = ip.Unmap()
	for _, e := range l.entries {
		if e.prefix.IsValid() && e.prefix.Contains(ip) && e.portOK(port) {
			return true
		}
	}
	return false
}

// admitsName reports whether a name entry admits host (as the URL spells
// it) at port.
func (l AllowList) admitsName(host string, port int) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, e := range l.entries {
		if e.name != "" && e.name == host && e.portOK(port) {
			return true
		}
	}
	return false
}

// hasAddrs reports whether any entry is an address entry, which a name
// may resolve into.
func (l AllowList) hasAddrs() bool {
	for _, e := range l.entries {
		if e.prefix.IsValid() {
			return true
		}
	}
	return false
}
