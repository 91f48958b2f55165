#!/usr/bin/env bash
# Installs what is missing, builds everything (the CUDA plugin too when nvcc is present) and runs
# the whole test suite with ctest. GPU tests skip themselves when no GPU is present.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_BUILD_DIR:-$root/build}
"$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
