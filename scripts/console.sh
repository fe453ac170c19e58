#!/usr/bin/env bash
# Builds the web console (services/console/web) into web/dist, which the
# console service embeds (go:embed) when it is compiled.
#   build:        npm ci from the committed lockfile, then npm run build (make console)
#   build-stale:  build only when a source is newer than dist/index.html (make up)
#   test:         npm test (Vitest), after npm ci when node_modules is missing
# Node and npm come from the machine, else from Debian's packages.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WEB=$ROOT/services/console/web

log() { printf '==> %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

need_npm() {
  if command -v npm >/dev/null && command -v node >/dev/null; then return 0; fi
  log "installing nodejs and npm (Debian packages)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
}

need_web() {
  if [ ! -f "$WEB/package.json" ]; then
    log "services/console/web has no package.json: nothing to build"
    exit 1
  fi
}

build() {
  need_web
  need_npm
  log "building the console (npm ci && npm run build in services/console/web)"
  (cd "$WEB" && npm ci --no-audit --no-fund --loglevel=error)
  # Vite keeps the committed dist/.keep; old hashed files must not pile up
  # in the binary, so everything else goes first.
  find "$WEB/dist" -mindepth 1 ! -name .keep -delete 2>/dev/null || true
  (cd "$WEB" && npm run build --silent)
  test -f "$WEB/dist/index.html" || { log "the build wrote no dist/index.html"; exit 1; }
}

stale() { # true when dist is missing or older than a source or the lockfile
  local index=$WEB/dist/index.html
  [ -f "$index" ] || return 0
  [ -n "$(find "$WEB" -path "$WEB/node_modules" -prune -o -path "$WEB/dist" -prune -o -type f -newer "$index" -print -quit)" ]
}

case ${1:-} in
  build) build ;;
  build-stale) if stale; then build; else log "console is up to date (services/console/web/dist)"; fi ;;
  test)
    need_web
    need_npm
    [ -d "$WEB/node_modules" ] || (cd "$WEB" && npm ci --no-audit --no-fund --loglevel=error)
    (cd "$WEB" && npm test --silent)
    ;;
  *) echo "usage: $0 build|build-stale|test" >&2; exit 2 ;;
esac
