#!/usr/bin/env bash
# Usage: bench/sass_check.sh OUT_DIR   (on the GPU machine; scripts/gpu/run.sh calls it by name)
# Issue 5's disassembly check on the FFN benchmarks' binaries, which hold every expert GEMM
# kernel (FP8 and MXFP4, every configuration the policies launch and the forced ones): QGMMA or
# HGMMA in each, and which touch local memory. Writes OUT_DIR/sass_check.json and prints a table;
# fails when an expert GEMM kernel has no WGMMA or touches local memory (none has since MXFP4
# v5.13, bench/NOTES.md). cuobjdump: $CUOBJDUMP, else PATH, else the CUDA install's.
set -uo pipefail
out=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GCMOE_GPU_BUILD:-$root/build/gpu}"
cuobjdump="${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}"
python3 "$root/bench/sass_check.py" --cuobjdump "$cuobjdump" --forbid-local expert_wgmma \
  --out "$out/sass_check.json" "$build/bin/bench_expert_ffn" "$build/bin/bench_mxfp4_expert_ffn"
