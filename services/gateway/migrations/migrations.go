// Package migrations embeds the gateway's PostgreSQL schema (goose files).
package migrations

import "embed"

// FS holds the *.sql migrations.
//
//go:embed *.sql
var FS embed.FS
