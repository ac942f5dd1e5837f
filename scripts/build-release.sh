#!/usr/bin/env bash
# Builds the gateway as it ships: packs the package (dist, bin, no tests) and installs it, without
# dev dependencies, into <target dir> with the exact dependency versions of package-lock.json.
# The Dockerfile runs it in its build stage; test/cli.release.test.ts runs it offline (from npm's
# cache, npm_config_offline=true) and starts what it installed.
#
# usage: scripts/build-release.sh <target dir>
# then:  node <target dir>/node_modules/llm-gateway/bin/llm-gateway.js start
set -euo pipefail

if [ "$#" -ne 1 ]; then
  echo "usage: scripts/build-release.sh <target dir>" >&2
  exit 2
fi
repository="$(cd "$(dirname "$0")/.." && pwd)"
target="$1"
node -e 'if (+process.versions.node.split(".")[0] < 24) { console.error(`build-release needs Node 24 (found ${process.version})`); process.exit(1) }'

# The package is built in a staging folder (as `npm pack` would after prepack), so the working
# tree's dist/ is left alone.
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
echo "building the package in $stage" >&2
node "$repository/node_modules/typescript/bin/tsc" -p "$repository/tsconfig.build.json" --outDir "$stage/dist"
cp "$repository/package.json" "$stage/"
[ -f "$repository/README.md" ] && cp "$repository/README.md" "$stage/"
[ -f "$repository/LICENSE" ] && cp "$repository/LICENSE" "$stage/"
cp -R "$repository/bin" "$stage/bin"
mkdir -p "$stage/core/dashboard"
cp -R "$repository/core/dashboard/public" "$stage/core/dashboard/public"
tarball="$(cd "$stage" && npm pack --ignore-scripts --silent)"
echo "packed $tarball" >&2

mkdir -p "$target"
node "$repository/scripts/release-lockfile.mjs" "$repository/package-lock.json" "$stage/$tarball" "$target"
echo "installing without dev dependencies into $target" >&2
if ! (cd "$target" && npm ci --omit=dev --no-audit --no-fund --loglevel=error >&2); then
  if [ "${npm_config_offline:-}" = "true" ]; then
    echo "build-release: the offline install failed: a dependency of package-lock.json is missing from npm's cache (run npm ci once with network to fill it)" >&2
  fi
  exit 1
fi
node "$target/node_modules/llm-gateway/bin/llm-gateway.js" --help >/dev/null
echo "installed: $target/node_modules/.bin/llm-gateway" >&2
