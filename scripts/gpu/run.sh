#!/usr/bin/env bash
# One command for the GPU machine: runs every `gpu` test and the named benchmarks, writing logs and
# JSON under OUT_DIR, and prints a short table last.
#
#   On the build machine (Debian 12, nvcc 13.0, no GPU):   scripts/gpu/run.sh --build
#   On the GPU machine (device tool; carry build/gpu/carry):
#                     GCMOE_GPU_BUILD=$PWD/build/gpu/carry scripts/gpu/run.sh --run "$OUT" [BENCH...]
#   Both at once, where the build dependencies and a GPU are on one machine:
#                                                          scripts/gpu/run.sh --build --run OUT [BENCH...]
#
# Why build elsewhere: the GPU machine has CUDA 13.0 but no gRPC, a different spdlog and a Catch2 v3
# without its library, and no package registry. The build machine compiles the CUDA targets
# (same nvcc 13.0, sm_90a, static cudart) and bundles the non-system shared libraries into
# build/gpu/carry/lib (scripts/gpu/bundle-libs.sh); there LD_LIBRARY_PATH points at them.
#
# --pack leaves OUT_DIR holding gpu-run.tar.gz (every log and JSON) and summary.txt only (the
# device tool returns at most 8 files).
#
# Results record the commit the binaries were built from: GCMOE_GIT_COMMIT if set, else the one
# --build wrote to the build folder's COMMIT (the GPU machine's repository copy may report a stale
# HEAD), else `git rev-parse HEAD`.
#
# A BENCH name N runs bench/N.sh OUT_DIR when that script exists; else build/gpu/bin/bench_N, its
# torch peer bench/moe/N_torch.py (if any) and bench/moe/N_report.py, which merges them into N.json.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# GCMOE_GPU_BUILD: another build folder laid out like build/gpu (bin/, lib/).
build="${GCMOE_GPU_BUILD:-$root/build/gpu}"
do_build=0
pack=0
out=""
benches=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) do_build=1 ;;
    --run) out=$2; shift ;;
    --pack) pack=1 ;;
    *) benches+=("$1") ;;
  esac
  shift
done

if [ $do_build -eq 1 ]; then
  (cd "$root" && cmake --preset gpu >/dev/null && cmake --build --preset gpu) || exit 1
  # What the GPU machine runs (gpu tests, benchmarks, the gcmoe binary) and the libraries they
  # need, in build/gpu/carry: the device tool carries at most 64 MiB with the working tree.
  carry="$root/build/gpu/carry"
  rm -rf "$carry" && mkdir -p "$carry/bin"
  cp "$root"/build/gpu/bin/gpu_* "$root"/build/gpu/bin/bench_* "$root/build/gpu/bin/gcmoe" "$carry/bin/"
  # The commit the binaries were built from: the GPU machine's copy of the repository can report a
  # stale HEAD, so results take it from here. "-dirty" when tracked files differed from it.
  commit_built=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    commit_built="$commit_built-dirty"
  fi
  echo "$commit_built" >"$carry/COMMIT"
  "$root/scripts/gpu/bundle-libs.sh" "$carry" || exit 1
  echo "carry: build/gpu/carry ($(du -sh "$carry" | cut -f1)); run there with GCMOE_GPU_BUILD=\$PWD/build/gpu/carry"
fi
[ -z "$out" ] && exit 0

mkdir -p "$out"
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Every kernel is loaded at start: lazy loading under a spinning kernel deadlocks (gpu-machine.md).
export CUDA_MODULE_LOADING=EAGER
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
  >"$out/machine.txt" 2>&1
# GCMOE_GIT_COMMIT, else the commit --build recorded with the binaries, else this tree's HEAD.
commit="${GCMOE_GIT_COMMIT:-}"
[ -z "$commit" ] && [ -f "$build/COMMIT" ] && commit=$(cat "$build/COMMIT")
[ -z "$commit" ] && commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
echo "binaries built from $commit" >>"$out/machine.txt"

summary=()
failed=0
for test in "$build"/bin/gpu_*; do
  [ -x "$test" ] || continue
  name=$(basename "$test")
  start=$(date +%s%N)
  timeout 300 "$test" --durations yes >"$out/$name.log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  # On the GPU machine a skip for no device is a failure (the test did not run); a test that needs
  # more GPUs than the machine has (its runner prints "needs N CUDA device(s)") is a skip.
  verdict=PASS
  if [ $rc -eq 77 ] && grep -q "SKIPPED: needs [2-9]" "$out/$name.log"; then
    verdict="SKIP"
  elif [ $rc -ne 0 ]; then
    verdict="FAIL(rc=$rc)" && failed=1
  fi
  summary+=("$(printf '%-28s %-12s %6d ms' "$name" "$verdict" "$ms")")
  grep -hE "rel_l2_error|mismatch|green ctx|refused|cuda:" "$out/$name.log" | head -20
done
(cd "$root" && "$build/bin/gcmoe" smoke) >"$out/smoke.log" 2>&1
rc=$?
[ $rc -ne 0 ] && failed=1
summary+=("$(printf '%-28s %-12s' "gcmoe smoke" "$([ $rc -eq 0 ] && echo PASS || echo "FAIL(rc=$rc)")")")

# A benchmark with a torch peer: our binary, then bench/moe/N_torch.py in the same run, then
# bench/moe/N_report.py merging both into N.json and printing the table.
run_with_peer() {
  local name=$1 rc=0
  "$build/bin/bench_$name" --out "$out/${name}_cuda.json" --commit "$commit" || rc=1
  if [ -f "$root/bench/moe/${name}_torch.py" ]; then
    python3 "$root/bench/moe/${name}_torch.py" --out "$out/${name}_torch.json" || rc=1
    python3 "$root/bench/moe/${name}_report.py" "$out/${name}_cuda.json" \
      "$out/${name}_torch.json" --out "$out/$name.json" || rc=1
  fi
  return $rc
}

for bench in "${benches[@]}"; do
  if [ -x "$root/bench/$bench.sh" ]; then
    "$root/bench/$bench.sh" "$out" >"$out/$bench.log" 2>&1
  else
    run_with_peer "$bench" >"$out/$bench.log" 2>&1
  fi
  rc=$?
  [ $rc -ne 0 ] && failed=1
  summary+=("$(printf '%-28s %-12s' "bench $bench" "$([ $rc -eq 0 ] && echo DONE || echo "FAIL(rc=$rc)")")")
  tail -n 30 "$out/$bench.log"
done

echo "---- gcmoe GPU run: $(head -2 "$out/machine.txt" | tail -1)"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
# --pack: the device tool returns at most 8 files, so leave one archive (and the summary).
if [ $pack -eq 1 ]; then
  tar -czf "/tmp/gpu-run.$$.tar.gz" -C "$out" . && find "$out" -mindepth 1 -delete &&
    mv "/tmp/gpu-run.$$.tar.gz" "$out/gpu-run.tar.gz" && printf '%s\n' "${summary[@]}" >"$out/summary.txt"
fi
exit $failed
