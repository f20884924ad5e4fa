#!/usr/bin/env sh
# The benchmarks' command lines (bench/moe/*_bench.cc, bench_memory_ceiling; CLI11), no GPU
# needed: --help prints the usage with every flag and exits 0, a bad value or a flag without its
# value exits non-zero with a message naming the flag. CUDA is hidden (CUDA_VISIBLE_DEVICES
# empty) so a tool that started its benchmark instead would fail with a CUDA error ("CUDA error
# cudaError..."), which the checks refuse, and a GPU machine's device is never used.
#
# Usage: moe_bench_cli_test.sh BENCH_EXPERT_FFN BENCH_MXFP4_EXPERT_FFN BENCH_ALIGN_SORT
#                              BENCH_ROUTING BENCH_LONE_EXPERT BENCH_MEMORY_CEILING
set -eu
if [ $# -ne 6 ]; then
  echo "usage: $0 BENCH_EXPERT_FFN BENCH_MXFP4_EXPERT_FFN BENCH_ALIGN_SORT BENCH_ROUTING" \
    "BENCH_LONE_EXPERT BENCH_MEMORY_CEILING" >&2
  exit 2
fi
expert_ffn=$1
mxfp4_expert_ffn=$2
align_sort=$3
routing=$4
lone_expert=$5
memory_ceiling=$6
CUDA_VISIBLE_DEVICES=
export CUDA_VISIBLE_DEVICES
failures=0
checks=0

# A check counts once however many of its expectations fail.
failed_check=0
fail() {
  echo "FAIL: $*"
  failed_check=1
}
finish_check() {
  checks=$((checks + 1))
  failures=$((failures + failed_check))
  failed_check=0
}

# expect_help TOOL FLAG...: `TOOL --help` exits 0, prints "Usage:" and names every FLAG.
expect_help() {
  tool=$1
  shift
  out=$("$tool" --help 2>&1) && rc=0 || rc=$?
  name=$(basename "$tool")
  [ "$rc" -eq 0 ] || fail "$name --help: exit $rc, want 0: $out"
  case "$out" in *Usage:*) ;; *) fail "$name --help: no \"Usage:\" in: $out" ;; esac
  case "$out" in *"CUDA error"* | *cudaError*) fail "$name --help reached CUDA: $out" ;; esac
  for flag in "$@"; do
    case "$out" in *"$flag"*) ;; *) fail "$name --help does not list $flag: $out" ;; esac
  done
  finish_check
}

# expect_error TOOL FLAG ARG...: `TOOL ARG...` exits non-zero, names FLAG and never reaches CUDA.
expect_error() {
  tool=$1
  flag=$2
  shift 2
  out=$("$tool" "$@" 2>&1) && rc=0 || rc=$?
  name=$(basename "$tool")
  [ "$rc" -ne 0 ] || fail "$name $*: exit 0, want an error"
  case "$out" in *"$flag"*) ;; *) fail "$name $*: the message does not name $flag: $out" ;; esac
  case "$out" in
    *"CUDA error"* | *cudaError*) fail "$name $*: reached CUDA, not refused: $out" ;;
  esac
  finish_check
}

expect_help "$expert_ffn" --out --reps --rounds --commit --tokens --scenario --hint
expect_error "$expert_ffn" --reps --reps 0
expect_error "$expert_ffn" --rounds --rounds 0
expect_error "$expert_ffn" --reps --reps abc
expect_error "$expert_ffn" --reps --out x.json --reps
expect_error "$expert_ffn" --tokens --tokens -1
expect_error "$expert_ffn" --tokens --tokens 3
expect_error "$expert_ffn" --scenario --scenario nope
expect_error "$expert_ffn" --hint --hint -1
expect_error "$expert_ffn" --bogus --bogus 1

expect_help "$mxfp4_expert_ffn" --out --reps --rounds --commit --tokens --scenario --pad-mib
expect_error "$mxfp4_expert_ffn" --reps --reps 0
expect_error "$mxfp4_expert_ffn" --rounds --rounds 0
expect_error "$mxfp4_expert_ffn" --tokens --tokens 0
expect_error "$mxfp4_expert_ffn" --tokens --tokens 4097
expect_error "$mxfp4_expert_ffn" --scenario --scenario nope
expect_error "$mxfp4_expert_ffn" --pad-mib --pad-mib -1
expect_error "$mxfp4_expert_ffn" --pad-mib --pad-mib 65537
expect_error "$mxfp4_expert_ffn" --commit --commit

expect_help "$align_sort" --out --block-size --reps --commit --shape
expect_error "$align_sort" --reps --reps 0
expect_error "$align_sort" --block-size --block-size 0
expect_error "$align_sort" --block-size --block-size 1025
expect_error "$align_sort" --shape --shape 16,6
expect_error "$align_sort" --shape --shape 2,6,256
expect_error "$align_sort" --shape --shape 16,7,256
expect_error "$align_sort" --shape --shape 16,6,255

expect_help "$routing" --out --reps --commit
expect_error "$routing" --reps --reps 0
expect_error "$routing" --reps --reps -3
expect_error "$routing" --out --out

expect_help "$lone_expert" --out --reps --rounds --commit --tokens
expect_error "$lone_expert" --reps --reps 0
expect_error "$lone_expert" --rounds --rounds 0
expect_error "$lone_expert" --tokens --tokens 3
expect_error "$lone_expert" --tokens --tokens -1

expect_help "$memory_ceiling" --out --reps --rounds --commit
expect_error "$memory_ceiling" --reps --reps 0
expect_error "$memory_ceiling" --rounds --rounds 0
expect_error "$memory_ceiling" --bogus --bogus 1

if [ "$failures" -ne 0 ]; then
  echo "$failures of $checks checks failed"
  exit 1
fi
echo "$checks checks passed"
