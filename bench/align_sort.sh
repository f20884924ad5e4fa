#!/usr/bin/env bash
# Usage: bench/align_sort.sh OUT_DIR   (on the GPU machine; scripts/gpu/run.sh calls it by name)
# The CUDA align & sort benchmark, its torch peer in the same run, and the merged table + JSON.
set -uo pipefail
out=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GCMOE_GPU_BUILD:-$root/build/gpu}"
commit="${GCMOE_GIT_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}"
"$build/bin/bench_align_sort" --out "$out/align_sort_cuda.json" --commit "$commit"
rc=$?
python3 "$root/bench/moe/align_sort_torch.py" --out "$out/align_sort_torch.json" || rc=1
python3 "$root/bench/moe/align_sort_report.py" "$out/align_sort_cuda.json" \
  "$out/align_sort_torch.json" --out "$out/align_sort.json" || rc=1
exit $rc
