#!/usr/bin/env bash
# Usage: scripts/gpu/bundle-libs.sh BUILD_DIR
# Copies the shared libraries that BUILD_DIR/bin/* need and the GPU machine lacks (spdlog, fmt,
# gRPC, protobuf, absl, ...) into BUILD_DIR/lib. The GPU machine (Ubuntu 24.04) has glibc,
# libstdc++ and the NVIDIA driver (libcuda) and NCCL 2.28 of its own; everything else travels.
set -euo pipefail
build=$1
mkdir -p "$build/lib"
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libstdc\+\+|libgcc_s|libcuda\.so|libnccl\.so)'
for bin in "$build"/bin/*; do
  [ -x "$bin" ] || continue
  ldd "$bin" | awk '/=> \//{print $1, $3}' | while read -r name path; do
    if ! [[ $name =~ $skip ]]; then
      cp -uL "$path" "$build/lib/$name"
    fi
  done
done
echo "bundle: $(ls "$build/lib" | wc -l) libraries, $(du -sh "$build/lib" | cut -f1) in $build/lib"
