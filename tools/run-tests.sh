#!/usr/bin/env bash
# Installs what is missing, builds everything (the CUDA plugin too when nvcc is present) and runs
# the whole test suite with ctest. GPU tests skip themselves when no GPU is present.
#
# Then the hardening jobs, each in a build folder of its own next to the main one, CPU only:
#   asan  <build>-asan  ASan + UBSan (reports are fatal): the CPU test suite, but the install test
#   tsan  <build>-tsan  TSan: the api, registry and concurrency tests (ctest labels), with
#                       tests/sanitizers/tsan.supp for what the prebuilt oneDNN does
#   fuzz  <build>-fuzz  clang + libFuzzer: the C API fuzzer for TESSERA_FUZZ_SECONDS (default 120)
#                       from tests/fuzz/corpus, new inputs kept in a temporary folder only
# TESSERA_HARDENING_JOBS (default "asan tsan fuzz"; empty for none) picks them. Any failure fails
# the script. Each step prints its time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_BUILD_DIR:-$root/build}
jobs_default="asan tsan fuzz"
hardening_jobs=${TESSERA_HARDENING_JOBS-$jobs_default}
fuzz_seconds=${TESSERA_FUZZ_SECONDS:-120}
cores=$(nproc)

timed() {
  local name=$1
  shift
  local start=$SECONDS
  "$@"
  echo "run-tests: $name: $((SECONDS - start)) s"
}

# ctest in a sanitizer build: its settings (cmake/TesseraSanitizers.cmake) for every test, also
# the GoogleTest-discovered ones whose ctest entries cannot carry them.
sanitized_ctest() {
  local dir=$1
  shift
  (
    # shellcheck disable=SC1091
    source "$dir/sanitizer_env.sh"
    ctest --test-dir "$dir" --output-on-failure -j"$cores" "$@"
  )
}

# TESSERA_CMAKE_ARGS: extra arguments for the main build's configure (e.g.
# -DTESSERA_BUILD_CUDA_PLUGIN=OFF on a machine whose nvcc should be left alone).
main_build() {
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${TESSERA_CMAKE_ARGS:-}
  cmake --build "$build" -j"$cores"
}

asan_job() {
  local dir=$build-asan
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DTESSERA_BUILD_CUDA_PLUGIN=OFF -DTESSERA_BUILD_TOOLS=OFF "-DTESSERA_SANITIZE=address;undefined"
  cmake --build "$dir" -j"$cores"
  sanitized_ctest "$dir"
}

tsan_job() {
  local dir=$build-tsan
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DTESSERA_BUILD_CUDA_PLUGIN=OFF -DTESSERA_BUILD_TOOLS=OFF -DTESSERA_SANITIZE=thread
  cmake --build "$dir" -j"$cores" \
      --target tessera_tests_api tessera_tests_registry tessera_tests_concurrency
  sanitized_ctest "$dir" -L 'api|registry|concurrency'
}

# A subshell: the sanitizer settings it exports stay in it.
fuzz_job() (
  local dir=$build-fuzz
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
      -DTESSERA_BUILD_CUDA_PLUGIN=OFF -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_TOOLS=OFF \
      -DTESSERA_BUILD_FUZZERS=ON
  cmake --build "$dir" -j"$cores" --target tessera_c_api_fuzzer
  local work
  work=$(mktemp -d)
  mkdir -p "$work/corpus" "$work/merged"
  # shellcheck disable=SC1091
  source "$dir/sanitizer_env.sh"
  if [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
    export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
  fi
  # New inputs go to $work/corpus (the first folder); the repository's seeds are only read. A
  # crash, leak, sanitizer report, timeout or broken promise stops the run with its input in $work.
  "$dir/bin/tessera_c_api_fuzzer" -max_total_time="$fuzz_seconds" -timeout=30 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$root/tests/fuzz/corpus" ||
    { echo "run-tests: the fuzzer failed; its input is in $work"; return 1; }
  # The seeds plus what this run found, minimized into a temporary folder: the corpus and
  # coverage the run ends with.
  "$dir/bin/tessera_c_api_fuzzer" -merge=1 -artifact_prefix="$work/" "$work/merged" \
      "$root/tests/fuzz/corpus" "$work/corpus" > "$work/merge.log" 2>&1 ||
    { cat "$work/merge.log"; echo "run-tests: the fuzz merge failed; inputs in $work"; return 1; }
  grep -E "MERGE-OUTER: [0-9]+ new files" "$work/merge.log" || true
  echo "run-tests: fuzz corpus after the run: $(ls "$work/merged" | wc -l) inputs"
  rm -rf "$work"
)

"$root/tools/install-deps.sh"
timed "main build" main_build
timed "main tests" ctest --test-dir "$build" --output-on-failure -j"$cores"
for job in $hardening_jobs; do
  case $job in
    asan) timed "asan+ubsan job" asan_job ;;
    tsan) timed "tsan job" tsan_job ;;
    fuzz) timed "fuzz job" fuzz_job ;;
    *) echo "run-tests: unknown job '$job' in TESSERA_HARDENING_JOBS" >&2; exit 2 ;;
  esac
done
echo "run-tests: all passed"
