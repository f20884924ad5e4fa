#!/usr/bin/env bash
# Installs what gcmoe builds with, from Debian packages only. Idempotent: packages already present
# are not fetched again (no apt-get update when nothing is missing, so it also works offline).
# CUDA 13 and NCCL are not installed here: they are found at /usr/local/cuda when present, and
# without nvcc the CPU parts still configure, build and test (GCMOE_CUDA=AUTO).
#
#   scripts/install-deps.sh            build and test dependencies
#   scripts/install-deps.sh --python   also the fixture-generation venv (.venv, PyPI; optional)
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libspdlog-dev libfmt-dev libcli11-dev catch2 nlohmann-json3-dev libcpp-httplib-dev
  # tests only: validates deploy/docker-compose.yml without a Docker engine
  docker-compose
  clang-format
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
  fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#packages[@]} Debian packages present"
fi

if [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: CUDA $(/usr/local/cuda/bin/nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') at /usr/local/cuda"
else
  echo "install-deps: no CUDA toolkit at /usr/local/cuda; CPU backend only"
fi

if [ "${1:-}" = "--python" ]; then
  # Only for regenerating test fixtures (transformers, ml_dtypes); never needed by build or tests.
  root="$(cd "$(dirname "$0")/.." && pwd)"
  python3 -m venv "$root/.venv"
  "$root/.venv/bin/pip" install -q -r "$root/scripts/fixtures/requirements.txt"
  echo "install-deps: fixture venv at $root/.venv"
fi
