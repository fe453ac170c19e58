// Package workflows holds the use cases of the workflow family, which also
// serves applications and evaluators (workflows with a role flag): revision
// data validation, flag inference from the handler URI, catalog enrichment,
// commits with deltas and conflict checks, deploys and retrieval through an
// environment, partial header edits, the simple surface of each role (its
// versioned.SimpleFamily) and each role's git-model rules.
package workflows

import "strings"

// URI is a handler URI provider:kind:key:version.
type URI struct {
	Provider, Kind, Key, Version string
}

// AliasProvider is the other platform's provider name, accepted on input
// so its clients and SDKs work unchanged.
const AliasProvider = "agenta"

// ParseURI reads the full form and the short forms: "key" and "kind:key"
// (provider implied, version latest) and "provider:kind:key" (version
// latest). ok is false for an empty string or more than four parts.
func ParseURI(s, provider string) (URI, bool) {
	parts := strings.Split(s, ":")
	for _, p := range parts {
		if p == "" {
			return URI{}, false
		}
	}
	switch len(parts) {
	case 1:
		return URI{provider, "builtin", parts[0], "latest"}, true
	case 2:
		return URI{provider, parts[0], parts[1], "latest"}, true
	case 3:
		return URI{parts[0], parts[1], parts[2], "latest"}, true
	case 4:
		return URI{parts[0], parts[1], parts[2], parts[3]}, true
	}
	return URI{}, false
}

func (u URI) String() string { return u.Provider + ":" + u.Kind + ":" + u.Key + ":" + u.Version }

// Managed reports whether the URI names one of our own handlers.
func (u URI) Managed(provider string) bool {
	return u.Provider == provider || u.Provider == AliasProvider
}

// Normalize rewrites the alias provider of a full URI to ours, leaving
// every other URI exactly as sent.
func Normalize(s, provider string) string {
	if rest, ok := strings.CutPrefix(s, AliasProvider+":"); ok && provider != AliasProvider {
		return provider + ":" + rest
	}
	return s
}
