#!/usr/bin/env bash
# Usage: bench/weight_load.sh OUT_DIR   (on the GPU machine; scripts/gpu/run.sh calls it by name)
# Checkpoint load bandwidth: writes full-width synthetic GLM-5.2 (1 dense + 2 MoE layers, ~23.7 GB)
# and DeepSeek-V4.1-Flash (2 MoE layers, ~17.4 GB) stacks one at a time (peak disk ~24 GB) into
# GCMOE_LOAD_DIR (default /tmp/gcmoe_load_bench), loads each as rank 0 of 1 and of 8 to GPU 0
# (page cache dropped, then warm; GLM experts packed for the FP8 GEMM and raw), writes
# OUT_DIR/weight_load.json and prints a table.
set -uo pipefail
out=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GCMOE_GPU_BUILD:-$root/build/gpu}"
cd "$root" && "$build/bin/gcmoe" load-bench --dir "${GCMOE_LOAD_DIR:-/tmp/gcmoe_load_bench}" \
  --out "$out/weight_load.json" --backend cuda
