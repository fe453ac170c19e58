#!/usr/bin/env bash
# Refreshes the vendored model price table (pkg/prices/data) from the npm
# package @pydantic/genai-prices (MIT). Run by hand, e.g. monthly:
#
#   scripts/update-prices.sh 0.1.8
#
# The data is taken through the package's public API (its CLI lists the
# provider ids, findProvider returns each provider), never by scraping the
# minified bundle, whose variable names change per release. Nothing fetches
# prices at run time or in CI: the result is committed. After a refresh run
#   go test ./pkg/prices/
# which fails when the new data brings a price key the Go code does not know.
set -euo pipefail

version="${1:?usage: scripts/update-prices.sh <version of @pydantic/genai-prices>}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/pkg/prices/data"
pkg="@pydantic/genai-prices"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent "$pkg@$version" >/dev/null

# Provider ids: the CLI's `list` prints "  provider:model: name" lines.
node node_modules/@pydantic/genai-prices/dist/cli.js list |
	sed -n 's/^  \([^: ]*\):.*/\1/p' | sort -u >providers.txt

cat >dump.mjs <<'JS'
import { readFileSync } from 'node:fs';
import { findProvider } from '@pydantic/genai-prices';

const ids = readFileSync('providers.txt', 'utf8').split('\n').filter(Boolean).sort();
const providers = ids.map((providerId) => {
  const p = findProvider({ providerId });
  if (!p || p.id !== providerId) throw new Error(`findProvider(${providerId}) returned ${p && p.id}`);
  return p;
});
providers.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
process.stdout.write(JSON.stringify(providers) + '\n');
JS
node dump.mjs >genai-prices.json

mkdir -p "$out"
cp genai-prices.json "$out/genai-prices.json"
cp node_modules/@pydantic/genai-prices/LICENSE "$out/LICENSE"
# The package's own answers for the test cases, which the Go code must match.
cp "$root/pkg/prices/testdata/golden.mjs" .
node golden.mjs "$root/pkg/prices/testdata/cases.json" >"$root/pkg/prices/testdata/golden.json"
sum="$(sha256sum "$out/genai-prices.json" | cut -d' ' -f1)"
providers="$(wc -l <providers.txt | tr -d ' ')"
cat >"$out/SOURCE" <<SRC
package: $pkg
version: $version
date: $(date -u +%Y-%m-%d)
providers: $providers
file: genai-prices.json
sha256: $sum
SRC
echo "wrote $out/genai-prices.json ($providers providers, sha256 $sum)"
