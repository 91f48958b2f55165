#!/usr/bin/env bash
# Installs what Tessera needs on a fresh Debian 12 machine, idempotently:
#  - Debian packages: compiler, CMake, Ninja, Boost (DLL is header-only; 1.74 is the floor),
#    spdlog, GoogleTest/GoogleMock, Google Benchmark, SQLite, matplotlib (tools/perf-report),
#    clang/libFuzzer for the fuzz job.
#  - oneDNN 3.x, CPU-only GNU-OpenMP build from PyPI, unpacked project-locally into .deps/onednn
#    (no system-wide install is needed: CMake is pointed at it, and the plugin carries an RPATH).
#  - CUTLASS/CuTe headers (PyPI nvidia-cutlass, pinned; header-only) into .deps/cutlass, for the
#    CUDA plugin's Hopper tensor-core kernels.
# The CUDA Toolkit is not installed here: it is used when nvcc is found (/usr/local/cuda).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"

# oneDNN: pinned. onednn-cpu-gomp 2023.2.0 is oneDNN 3.2.0. The newer `onednn` wheels are SYCL
# builds that cannot create a CPU engine without a SYCL runtime.
ONEDNN_PKG_VERSION=2023.2.0
# CUTLASS 4.2.0: its sm90 implicit-GEMM convolution and GEMM collectives build with CUDA 13.0.
CUTLASS_PKG_VERSION=4.2.0.0

need_apt=()
# python3-matplotlib: tools/perf-report's plots.
# clang-14 + libclang-rt-14-dev: libFuzzer and clang's sanitizer runtimes (the fuzz job of
# run-tests.sh); llvm-14: llvm-symbolizer, for readable sanitizer reports. gcc's ASan/UBSan/TSan
# runtimes come with build-essential.
for pkg in build-essential cmake ninja-build libboost-dev libspdlog-dev libgtest-dev libgmock-dev \
           libbenchmark-dev libsqlite3-dev python3-pip python3-matplotlib unzip pkg-config \
           clang-14 libclang-rt-14-dev llvm-14; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if [ ! -f "$deps/onednn/include/oneapi/dnnl/dnnl.h" ] || [ ! -e "$deps/onednn/lib/libdnnl.so.3" ]; then
  echo "install-deps: oneDNN ($ONEDNN_PKG_VERSION) into $deps/onednn"
  tmp=$(mktemp -d)
  py=python3; command -v "$py" >/dev/null || py=python
  "$py" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" \
      "onednn-cpu-gomp==$ONEDNN_PKG_VERSION" "onednn-devel-cpu-gomp==$ONEDNN_PKG_VERSION"
  mkdir -p "$deps/onednn"
  for whl in "$tmp"/*.whl; do
    unzip -q -o "$whl" -d "$tmp/x"
  done
  cp -a "$tmp"/x/*.data/data/include "$deps/onednn/"
  mkdir -p "$deps/onednn/lib"
  cp -a "$tmp"/x/*.data/data/lib/cmake "$deps/onednn/lib/"
  # The wheel stores the SONAME chain as three copies of one 55 MB file: keep one, link the rest.
  cp "$tmp"/x/*.data/data/lib/libdnnl.so.3.? "$deps/onednn/lib/"
  real=$(basename "$(ls "$deps"/onednn/lib/libdnnl.so.3.?)")
  ln -sf "$real" "$deps/onednn/lib/libdnnl.so.3"
  ln -sf libdnnl.so.3 "$deps/onednn/lib/libdnnl.so"
  rm -rf "$tmp"
fi
if [ ! -f "$deps/cutlass/include/cutlass/cutlass.h" ] || [ ! -f "$deps/cutlass/include/cutlass/util/packed_stride.hpp" ]; then
  echo "install-deps: CUTLASS ($CUTLASS_PKG_VERSION) headers into $deps/cutlass"
  tmp=$(mktemp -d)
  py=python3; command -v "$py" >/dev/null || py=python
  "$py" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "nvidia-cutlass==$CUTLASS_PKG_VERSION"
  unzip -q -o "$tmp"/*.whl 'cutlass_library/source/include/*' 'cutlass_library/source/tools/util/include/*' \
      -d "$tmp/x"
  rm -rf "$deps/cutlass"
  mkdir -p "$deps/cutlass"
  cp -a "$tmp/x/cutlass_library/source/include" "$deps/cutlass/"
  # cutlass/util (packed strides, device memory helpers) ships beside the library headers in
  # CUTLASS's tree; the sm90 convolution collectives include it by its installed path.
  cp -a "$tmp/x/cutlass_library/source/tools/util/include/cutlass/util" "$deps/cutlass/include/cutlass/"
  rm -rf "$tmp"
fi
echo "install-deps: done"
