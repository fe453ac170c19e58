package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// CacheKey is the content address of req's call, for the model-call cache:
// the SHA-256 of the provider the primary configuration reaches (family,
// label, base URL), the chat-completions body it would send (model,
// parameters, messages, tools, tool choice, response format), the
// fallbacks and their policy, the retry configuration left out (it changes
// how, not what, is asked), and salt (the evaluation cell's repeat index,
// so the repeats of a cell still sample the model). The key is never part
// of it: a rotated key asks the same question. A request that could not
// be sent has no key (the error the call would give).
func (c *Client) CacheKey(s Secrets, req Request, salt string) (string, error) {
	t, err := resolver{secrets: s, env: c.env, baseURLs: c.cfg.BaseURLs}.resolve(req.Config.Model, req.Config.Connection)
	if err != nil {
		return "", err
	}
	p, err := params(req.Config, t, req.Messages, req.ResponseFormat)
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	fallbacks := req.FallbackConfigs[:min(len(req.FallbackConfigs), maxFallbacks)]
	rest, err := json.Marshal(struct {
		Fallbacks []prompt.LLMConfig `json:"fallbacks"`
		Policy    string             `json:"policy"`
		Query     map[string]string  `json:"query"`
	}{fallbacks, req.FallbackPolicy, t.Query})
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte("model-call/v1"), []byte(t.Family), []byte(t.Label), []byte(t.BaseURL), body, rest, []byte(salt)} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
