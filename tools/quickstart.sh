#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: tessera-bench on the default suite, in
# correctness + performance mode, on the best backend present (CUDA when a GPU is there, else
# the CPU through oneDNN).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_BUILD_DIR:-$root/build}
"$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"
"$build/bin/tessera-info"
exec "$build/bin/tessera-bench" --mode=CP --batch="$root/tools/suites/default.txt"
