// Package config loads service configuration from environment variables.
//
// It is the only place that knows about envconfig (whose last release is from
// 2022), so a later switch of library touches one file.
package config

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kelseyhightower/envconfig"
)

// Validator is implemented by configuration structs that check themselves
// beyond what struct tags can express.
type Validator interface {
	Validate() error
}

// Load fills cfg from variables named PREFIX_FIELD and validates it: first
// the `required` tags, then cfg.Validate when cfg implements Validator.
func Load(prefix string, cfg any) error {
	if err := envconfig.Process(prefix, cfg); err != nil {
		return fmt.Errorf("load %s configuration: %w", prefix, err)
	}
	if v, ok := cfg.(Validator); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("invalid %s configuration: %w", prefix, err)
		}
	}
	return nil
}

// usageFormat renders one Markdown table row per variable.
const usageFormat = `{{range .}}| ` + "`{{usage_key .}}`" + ` | {{usage_default .}} | {{usage_description .}} |
{{end}}`

// Usage writes a Markdown table of every variable cfg reads, with its default
// and description. docs/configuration.md is generated from it
// and a test keeps the two in step.
func Usage(w io.Writer, prefix string, cfg any) error {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	if err := envconfig.Usagef(prefix, cfg, tw, usageFormat); err != nil {
		return fmt.Errorf("render %s usage: %w", prefix, err)
	}
	return tw.Flush()
}
