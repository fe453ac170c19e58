#!/usr/bin/env bash
# Lints the merged OpenAPI document (exactly what the gateway serves) with
# Redocly's recommended rules; any error fails `make test`. The CLI is pinned
# in tools/openapi/package-lock.json and installed here, so a fresh clone
# needs nothing but Node and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=tools/openapi
# (re)install when missing or when the pin moved; npm ci takes about a second
pinned=$(node -p 'require("./'$tools'/package.json").devDependencies["@redocly/cli"]')
installed=$(node -p 'require("./'$tools'/node_modules/@redocly/cli/package.json").version' 2>/dev/null || true)
if [[ $installed != "$pinned" ]]; then
	npm ci --prefix "$tools" --no-audit --no-fund --loglevel=error >/dev/null
fi
doc=$(mktemp --suffix=.json)
trap 'rm -f "$doc"' EXIT
go run ./pkg/apidoc/cmd/openapi >"$doc"
# Warnings (ambiguous-looking paths the compatible API has, and the like)
# are printed but only errors fail.
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
	"$tools/node_modules/.bin/redocly" lint --config "$tools/redocly.yaml" --format=summary "$doc"
