#!/usr/bin/env bash
# Usage: bench/expert_ffn.sh OUT_DIR   (on the GPU machine; scripts/gpu/run.sh calls it by name)
# The FP8 expert FFN benchmark, its torch peers in the same run, and the merged table + JSON.
set -uo pipefail
out=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GCMOE_GPU_BUILD:-$root/build/gpu}"
commit="${GCMOE_GIT_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}"
"$build/bin/bench_expert_ffn" --out "$out/expert_ffn_cuda.json" --commit "$commit"
rc=$?
python3 "$root/bench/moe/expert_ffn_torch.py" --out "$out/expert_ffn_torch.json" || rc=1
python3 "$root/bench/moe/expert_ffn_report.py" "$out/expert_ffn_cuda.json" \
  "$out/expert_ffn_torch.json" --out "$out/expert_ffn.json" || rc=1
exit $rc
