#!/usr/bin/env bash
# Installs the test peers that Debian does not ship as packages (the MCP reference servers, a third-party
# OpenAI-compatible mock server, puppeteer-core and the OpenAPI validators, from npm, pinned by
# package-lock.json) into DIR, so that the README's test command stays the one command that runs
# everything. Run by ctest as the "peers" fixture; idempotent.
# Usage: setup.sh DIR
set -euo pipefail
dir=${1:?usage: setup.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)

# npm: Debian's nodejs does not include it (nodesource's does, and conflicts with Debian's npm).
if ! command -v npm >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm >/dev/null
  else
    echo "setup.sh: npm is missing (apt-get install npm)" >&2; exit 1
  fi
fi

mkdir -p "$dir"
# Reinstall only when the pinned set changed.
if ! cmp -s "$here/package-lock.json" "$dir/package-lock.json" || [ ! -d "$dir/node_modules" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
test -x "$dir/node_modules/.bin/mcp-server-everything"
test -x "$dir/node_modules/.bin/mcp-server-filesystem"
test -x "$dir/node_modules/.bin/openai-mock-api"
test -f "$dir/node_modules/puppeteer-core/package.json"
test -f "$dir/node_modules/@seriousme/openapi-schema-validator/package.json"
test -f "$dir/node_modules/ajv/dist/2020.js"
echo "peers ready in $dir"
