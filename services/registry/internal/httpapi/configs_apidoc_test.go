package httpapi

import "github.com/assayhq/assay/pkg/apidoc"

// configBindings are configAPI.route's routes.
func configBindings() []apidoc.Binding {
	ref := &configRefIn{}
	return []apidoc.Binding{{Method: "POST", Path: "/api/variants/configs/fetch",
		Request: apidoc.Envelope(apidoc.Field{Name: "variant_ref", Value: ref}, apidoc.Field{Name: "environment_ref", Value: ref},
			apidoc.Field{Name: "application_ref", Value: ref}),
		Response: configOut{}}}
}
