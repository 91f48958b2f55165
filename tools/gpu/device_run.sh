#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, over what tools/gpu/stage_for_device.sh put
# in .carry/: device facts, every test binary, compute-sanitizer (memcheck, racecheck) on the
# GPU tests, tessera-bench on the default suite on CUDA, and the cuDNN per-call anchor. Logs go
# to $OUT; a short table comes last.
set -u
c=.carry
out=${OUT:-/tmp/out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/$c/lib:${LD_LIBRARY_PATH:-}"
export TESSERA_LOG_LEVEL=${TESSERA_LOG_LEVEL:-warn}
declare -a rows
row() { rows+=("$(printf '%-34s %s' "$1" "$2")"); }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
"$c/bin/tessera-info" > "$out/tessera-info.txt" 2>&1; row "tessera-info" "rc=$?"
grep -E "cuda|devices" "$out/tessera-info.txt" | head -8

for t in "$c"/bin/tessera_*test*; do
  name=$(basename "$t")
  case "$name" in
    # Host-only logic that finds its helpers by build-tree paths; CI runs them.
    tessera_abi_compat_test|tessera_tuning_db_test|tessera_tuning_db_worker) continue ;;
  esac
  envs=()
  case "$name" in
    tessera_plugin_loading_test) envs=(TESSERA_PLUGIN_PATH="$PWD/$c/tests/fake_plugins") ;;
    tessera_backend_filter_test) envs=(TESSERA_PLUGIN_PATH="$PWD/$c/tests/fake_plugins" TESSERA_BACKENDS=-fake) ;;
    tessera_trace_log_test) envs=(TESSERA_LOG_LEVEL=trace TESSERA_LOG_FILE="$out/trace_log_test.log") ;;
    tessera_api_test) envs=(TESSERA_LOG_LEVEL=off) ;;
  esac
  args=()
  # The *Validation suites exercise CPU handles with the oneDNN plugin, which is not carried (its
  # 55 MB libdnnl does not fit the carry); CI runs them.
  [ "$name" = tessera_conformance_test ] && args=(--gtest_filter='-*Validation*:PoolingCppWrapper*:MatmulDescriptor*')
  env "${envs[@]}" "$t" "${args[@]}" > "$out/$name.log" 2>&1
  rc=$?
  summary=$(grep -E '^\[  (PASSED|FAILED)  \]|tests? ran' "$out/$name.log" | tr '\n' ' ' | cut -c1-120)
  row "$name" "rc=$rc $summary"
  [ $rc -ne 0 ] && grep -E '^\[  FAILED  \]|Failure|error' "$out/$name.log" | head -20
done

if command -v compute-sanitizer >/dev/null && [ -x "$c/bin/tessera_conformance_test" ]; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 "$c/bin/tessera_conformance_test" \
        --gtest_filter='*cuda*:*Cuda*:*CUDA*' > "$out/sanitizer_$tool.log" 2>&1
    row "compute-sanitizer $tool" "rc=$? $(grep -E 'ERROR SUMMARY' "$out/sanitizer_$tool.log" | tail -1)"
  done
fi

if [ -f "$c/suites/default.txt" ]; then
  "$c/bin/tessera-bench" --backend=cuda --batch="$c/suites/default.txt" > "$out/bench_default.txt" 2>&1
  row "tessera-bench default (cuda)" "rc=$? $(tail -1 "$out/bench_default.txt")"
fi

if [ -f "$c/anchors/cudnn_overhead.cpp" ] && command -v nvcc >/dev/null; then
  cudnn_dir=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null)
  if [ -n "$cudnn_dir" ] && nvcc -O2 -o /tmp/cudnn_overhead "$c/anchors/cudnn_overhead.cpp" \
      -I"$cudnn_dir/include" -L"$cudnn_dir/lib" -l:libcudnn.so.9 > "$out/cudnn_overhead_build.txt" 2>&1; then
    LD_LIBRARY_PATH="$cudnn_dir/lib:$LD_LIBRARY_PATH" /tmp/cudnn_overhead > "$out/cudnn_overhead.txt" 2>&1
    row "cudnn overhead anchor" "$(grep -E 'conv_fwd_host_us' "$out/cudnn_overhead.txt")"
  fi
fi

echo
echo "=== summary ==="
printf '%s\n' "${rows[@]}"
