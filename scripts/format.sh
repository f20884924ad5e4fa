#!/usr/bin/env bash
# Usage: scripts/format.sh CLANG_FORMAT --check|--fix
# Formats every tracked C++/CUDA source of the project (generated code is never tracked).
set -euo pipefail
clang_format=$1
mode=$2
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
  '*.h' '*.cc' '*.cu' '*.cuh' | grep -v '^tests/fixtures/' || true)
[ ${#files[@]} -eq 0 ] && exit 0
case "$mode" in
  --check) "$clang_format" --dry-run -Werror "${files[@]}" && echo "format-check: ${#files[@]} files clean" ;;
  --fix) "$clang_format" -i "${files[@]}" ;;
  *) echo "usage: $0 CLANG_FORMAT --check|--fix" >&2; exit 2 ;;
esac
