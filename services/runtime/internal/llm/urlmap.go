package llm

import (
	"fmt"
	"net/url"
	"strings"
)

// URLMap maps a provider family to a base URL. It is a named map only so it
// can read its own environment syntax, "openai=http://127.0.0.1:9999/v1,
// anthropic=https://proxy/v1": envconfig's map syntax separates keys from
// values with ':', which every URL contains.
type URLMap map[string]string

// maxURLMap bounds the variable URLMap parses.
const maxURLMap = 64 << 10

// Decode parses "family=url" pairs separated by commas (envconfig calls it
// for RUNTIME_LLM_BASE_URLS). A family the runtime does not know, a
// duplicate, or a URL that is not absolute http(s) is an error naming it.
// URLs are stored as net/url writes them back (scheme in lower case).
func (m *URLMap) Decode(value string) error {
	if len(value) > maxURLMap {
		return fmt.Errorf("base URLs: longer than %d bytes", maxURLMap)
	}
	out := URLMap{}
	for pair := range strings.SplitSeq(value, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, raw, ok := strings.Cut(pair, "=")
		if !ok {
			return fmt.Errorf("base URLs: %q is not family=url", pair)
		}
		fam, known := family(name)
		if !known {
			return fmt.Errorf("base URLs: unknown provider family %q", strings.TrimSpace(name))
		}
		if _, dup := out[fam]; dup {
			return fmt.Errorf("base URLs: %q given twice", fam)
		}
		raw = strings.TrimSpace(raw)
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("base URLs: %s: %q is not an absolute http(s) URL", fam, raw)
		}
		// url.Parse reads "HTTP://x" as scheme http; storing u.String()
		// keeps the scheme the clients compare against in lower case.
		out[fam] = u.String()
	}
	*m = out
	return nil
}
