#!/usr/bin/env bash
# Builds here (the GPU machine has no compiler setup of ours) and stages what one device run needs
# into .carry/ (git-ignored), keeping the build tree's layout so that plugins are found next to
# libtessera.so: bin/ (tests, tools), lib/ (libtessera, plugins/cuda), tests/fake_plugins/,
# suites, and the cuDNN anchors copied from ../shared (which does not travel).
# The oneDNN plugin stays behind: libdnnl is 55 MB of the 64 MiB a call may carry, and on the GPU
# machine the naive reference is the ground truth anyway.
# Usage: tools/gpu/stage_for_device.sh [build-dir]     then call the device tool with
#   carry: [".carry"], command: "bash tools/gpu/device_run.sh"
# CARRY_DIR (default .carry, relative to the repository root) stages a second build beside the
# first, e.g. a branch: CARRY_DIR=.carry-branch, then carry both and run device_run.sh with CARRY.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-gpu}
cd "$root"
./tools/install-deps.sh >/dev/null
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2
carry="$root/${CARRY_DIR:-.carry}"
rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/lib/tessera/plugins" "$carry/tests/fake_plugins" "$carry/anchors"
cp -a "$build"/bin/* "$carry/bin/"
cp -a "$build"/lib/libtessera.so* "$carry/lib/"
cp -a "$build"/lib/tessera/plugins/libtessera-cuda.so "$carry/lib/tessera/plugins/" 2>/dev/null || true
# The cuDNN vendor plugin (plugins/cudnn): libcudnn itself is found on the GPU machine.
cp -a "$build"/lib/tessera/plugins/libtessera-cudnn.so "$carry/lib/tessera/plugins/" 2>/dev/null || true
cp -a "$build"/tests/fake_plugins/*.so "$carry/tests/fake_plugins/"
mkdir -p "$carry/tests/abi_compat"
cp -a "$build"/tests/abi_compat/*.so "$carry/tests/abi_compat/" 2>/dev/null || true
# Debian libraries libtessera needs that the GPU machine's image may lack.
for lib in $(ldd "$build/lib/libtessera.so" | awk '/libsqlite3/ {print $3}'); do
  cp -L "$lib" "$carry/lib/"
done
cp -a tools/suites "$carry/suites" 2>/dev/null || true
if [ -d "$root/../shared/anchors" ]; then cp -a "$root/../shared/anchors/." "$carry/anchors/"; fi
chmod -R u+w "$carry"
# The CUDA plugin's fat binary (sm_90a SASS + compute_90 PTX of every CUTLASS instantiation) is
# ~46 MB and compresses ~9x; bin/ and lib/ travel as one xz archive that device_run.sh unpacks,
# so the carry stays far under the 64 MiB a call may take.
tar -C "$carry" -cf - bin lib tests | xz -T2 -3 > "$carry/bundle.tar.xz"
rm -rf "$carry/bin" "$carry/lib" "$carry/tests"
du -sh "$carry"
