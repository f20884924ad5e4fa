#!/usr/bin/env bash
# Usage: bench/routing.sh OUT_DIR   (on the GPU machine; scripts/gpu/run.sh calls it by name)
# The CUDA router benchmark, its torch peer in the same run, and the merged table + JSON.
set -uo pipefail
out=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GCMOE_GPU_BUILD:-$root/build/gpu}"
commit="${GCMOE_GIT_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}"
"$build/bin/bench_routing" --out "$out/routing_cuda.json" --commit "$commit"
rc=$?
python3 "$root/bench/moe/routing_torch.py" --out "$out/routing_torch.json" || rc=1
python3 "$root/bench/moe/routing_report.py" "$out/routing_cuda.json" "$out/routing_torch.json" \
  --out "$out/routing.json" || rc=1
exit $rc
