// Package migrations embeds the registry's PostgreSQL schema (goose files).
package migrations

import "embed"

// FS holds the goose migration files.
//
//go:embed *.sql
var FS embed.FS
