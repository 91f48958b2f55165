#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, over what tools/gpu/stage_for_device.sh put
# in .carry/. Phases (default "tests bench"), each step under its own time limit so that one hang
# cannot eat the device call:
#   tests     device facts, every test binary (the CUDA conformance sweep included)
#   sanitize  compute-sanitizer memcheck and racecheck on the CUDA sweep (beside the tests), memcheck
#             and initcheck on the graph-capture test
#   initcheck compute-sanitizer initcheck on the CUDA sweep, in shards (memcheck, racecheck: the same
#             with that tool)
#   tiles     the 128x64 tile forced on every ResNet-50 layer
#   convanchor ResNet-50 N=256 forward, backward filter and backward data, ours tuned, beside
#             PyTorch/cuDNN in the same call (tools/gpu/conv_direction_ratios.py)
#   memory    the memory-bound anchors side by side on cuda and cudnn (JSON for tools/perf-report)
#   b2b       the anchor workloads timed back to back (tessera-bench --timing=back-to-back)
#   suites    every suite of tools/suites side by side on cuda and cudnn (JSON each, in logs.tar.gz)
#   variants  launch-geometry alternatives (TESSERA_CUDA_* overrides), timed and tested
#   multigpu  two GPUs in one process (tessera_cuda_multi_device_test), the sweep on device 1
#   probe     the copy ceiling and loop shapes (tessera-bandwidth-probe)
#   profile   ncu counters on each memory-bound anchor workload and the LSTM (NCU_PROBLEMS: a regex)
#   overhead  per-call host cost (Tessera, Tessera on cuDNN, cuDNN's own API, the bare launch)
#   bench     tessera-bench on the default suite (correctness + time), the anchor workloads, the
#             ResNet-50 N=256 fp16 layers, the cuDNN anchor subset measured in the same run, the
#             ratio table, and with them the overhead and memory phases
# A short table comes last.
#   device tool: command "bash tools/gpu/device_run.sh tests sanitize", carry [".carry"]
set -u
# CARRY: the staged folder (stage_for_device.sh's CARRY_DIR), so that one device call can run two
# builds, e.g. main and a branch: CARRY=.carry-branch OUT=$OUT/branch bash tools/gpu/device_run.sh ...
c=${CARRY:-.carry}
# Every log goes to $out; what comes back (the device tool returns at most 8 files) is $OUT's
# logs.tar.gz of all of them plus the few files the summary is made of.
OUT=${OUT:-/tmp/out}
out=/tmp/tessera_logs
rm -rf "$out"
mkdir -p "$out" "$OUT"
phases=${*:-tests bench}
# stage_for_device.sh packs bin/, lib/ and tests/ into one archive (see there).
if [ -f "$c/bundle.tar.xz" ] && [ ! -d "$c/bin" ]; then
  tar -C "$c" -xJf "$c/bundle.tar.xz" || python3 -c 'import sys,tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$c/bundle.tar.xz" "$c"
fi
export LD_LIBRARY_PATH="$PWD/$c/lib:${LD_LIBRARY_PATH:-}"
export TESSERA_LOG_LEVEL=${TESSERA_LOG_LEVEL:-warn}
# cuDNN lives in the machine's Python environment; the cudnn plugin opens it from there.
cudnn_lib=$(bash tools/gpu/find_cudnn.sh 2>/dev/null)
if [ -n "$cudnn_lib" ]; then
  export TESSERA_CUDNN_LIBRARY="$cudnn_lib/libcudnn.so.9" LD_LIBRARY_PATH="$cudnn_lib:$LD_LIBRARY_PATH"
fi
declare -a rows
# Each row carries the seconds since the start, so a later budget plan knows what each step costs.
row() { rows+=("$(printf '%-34s %4ss %s' "$1" "$SECONDS" "$2")"); }
# A device call may run 600 s; DEADLINE (seconds from the start) bounds every step so that the
# summary and the logs still come back when the steps together would run longer. Past the
# deadline a step gets 1 s (it is as good as skipped). The former 10 s floor per step lets a
# dozen steps after the deadline add two minutes: a call with DEADLINE=570 ran into the device
# tool's 600 s limit and lost its summary and logs (2026-12-04, run 1; the floor is the likely
# cause, the lost logs cannot say).
DEADLINE=${DEADLINE:-540}
lim() { local left=$(( DEADLINE - SECONDS )); (( left < 1 )) && left=1; echo $(( $1 < left ? $1 : left )); }
has() { [[ " $phases " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
"$c/bin/tessera-info" > "$out/tessera-info.txt" 2>&1; row "tessera-info" "rc=$?"
grep -E "cuda|devices" "$out/tessera-info.txt" | head -4

# memcheck and racecheck over the CUDA backend's sweep start first and run beside the tests (each
# is mostly host-bound and the machine has 16 cores); the sanitize phase below collects them. Only
# correctness is asked of a call that sanitizes: its timings would be disturbed.
# memcheck runs as SANITIZE_SHARDS gtest shards side by side (it is host-bound: one process over
# the sweep took ~280 s); SANITIZE_RACECHECK narrows racecheck (default: the whole sweep), and
# SANITIZE_FILTER memcheck and initcheck (a gtest filter; default: the whole CUDA sweep).
if has b2b; then
  # The anchor workloads again with their runs queued back to back (tessera-bench --timing):
  # the kernels' own rates, the launch each per-call run pays (as the anchor's do) hidden.
  timeout $(lim 120) "$c/bin/tessera-bench" --mode=P --backend=cuda --timing=back-to-back --iters=50 \
      --batch="$c/suites/h200_anchor.txt" > "$out/bench_h200_anchor_b2b.txt" 2>&1
  row "anchor workloads back to back" "rc=$? $(tail -1 "$out/bench_h200_anchor_b2b.txt")"
  grep -E '^PASSED' "$out/bench_h200_anchor_b2b.txt" | grep -oE '^PASSED [^ ]+|[0-9.]+ms [0-9.e+]+[GT]?[BF]' | paste - - | cut -c1-90
fi

if has sanitize && command -v compute-sanitizer >/dev/null; then
  shards=${SANITIZE_SHARDS:-4}
  for ((i = 0; i < shards; ++i)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "$(lim ${SANITIZE_TIMEOUT:-420})" \
        compute-sanitizer --tool memcheck --error-exitcode 9 "$c/bin/tessera_conformance_test" \
        --gtest_filter="${SANITIZE_FILTER:-*/cuda}:-*Validation*" > "$out/sanitizer_memcheck_$i.log" 2>&1 &
  done
  timeout "$(lim ${SANITIZE_TIMEOUT:-420})" compute-sanitizer --tool racecheck --error-exitcode 9 \
      "$c/bin/tessera_conformance_test" --gtest_filter="${SANITIZE_RACECHECK:-*/cuda}:-*Validation*" \
      > "$out/sanitizer_racecheck.log" 2>&1 &
fi

if has tests; then
  for t in "$c"/bin/tessera_*test*; do
    name=$(basename "$t")
    case "$name" in
      # Host-only logic that finds its helpers by build-tree paths; CI runs them.
      tessera_abi_compat_test|tessera_tuning_db_test|tessera_tuning_db_worker) continue ;;
      # Host-only selection-policy logic on a test device plugin that is not carried; CI runs it.
      tessera_selection_policy_test|tessera_selection_policy_worker) continue ;;
      # Their hostile test plugins are found by build-tree paths and are not carried; CI runs them.
      tessera_hostile_plugin_test|tessera_resource_fault_test) continue ;;
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
    # The cudnn backend's sweep runs as a step of its own below (its own time limit).
    [ "$name" = tessera_conformance_test ] && args=(--gtest_filter='-*Validation*:PoolingCppWrapper*:MatmulDescriptor*:*/cudnn')
    env "${envs[@]}" timeout $(lim 300) "$t" "${args[@]}" > "$out/$name.log" 2>&1
    rc=$?
    # A crash (not a timeout): rerun under cuda-gdb for the backtrace.
    if [ $rc -ge 128 ] && [ $rc -ne 124 ] && command -v cuda-gdb >/dev/null; then
      env "${envs[@]}" timeout $(lim 120) cuda-gdb -batch -ex run -ex bt -ex 'info threads' --args "$t" "${args[@]}" \
          > "$out/$name.gdb.log" 2>&1
      grep -A25 -E 'received signal|^#0' "$out/$name.gdb.log" | head -40
    fi
    summary=$(grep -E '^\[  (PASSED|FAILED)  \]|tests? ran' "$out/$name.log" | tr '\n' ' ' | cut -c1-100)
    row "$name" "rc=$rc $summary"
    if [ $rc -ne 0 ]; then
      grep -E '^\[  FAILED  \]' "$out/$name.log" | head -30
      grep -B2 -A6 -E 'Failure$' "$out/$name.log" | head -150
    fi
  done
  if [ -n "${TESSERA_CUDNN_LIBRARY:-}" ]; then
    timeout $(lim 300) "$c/bin/tessera_conformance_test" --gtest_filter='*/cudnn:CudnnPlugin*' \
        > "$out/tessera_conformance_cudnn.log" 2>&1
    rc=$?
    row "conformance (cudnn backend)" "rc=$rc $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/tessera_conformance_cudnn.log" | tr '\n' ' ' | cut -c1-90)"
    [ $rc -ne 0 ] && grep -E '^\[  FAILED  \]' "$out/tessera_conformance_cudnn.log" | head -40
    grep -h '^\[ conform' "$out/tessera_conformance_cudnn.log" > "$out/conformance_tally_cudnn.txt" 2>/dev/null
  fi
  grep -h '^\[ conform' "$out/tessera_conformance_test.log" > "$out/conformance_tally.txt" 2>/dev/null
  # Kernels that ran nothing are worth a look; the whole tally is in the logs.
  grep -E ': 0 cases ran' "$out/conformance_tally.txt" | cut -c1-200
fi

# Short phases for a tight device budget: the CUDA sweep alone, the memory-bound anchors alone,
# the per-call overheads alone.
if has conformance; then
  # 260 s: the sweep of 2026-12-04 evening plus this night's TF32 backward cases and two shapes.
  timeout $(lim 260) "$c/bin/tessera_conformance_test" --gtest_filter='*/cuda:-*Validation*' > "$out/conformance_cuda.log" 2>&1
  row "conformance (cuda backend)" "rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/conformance_cuda.log" | tr '\n' ' ' | cut -c1-90)"
  grep -E '^\[  FAILED  \]' "$out/conformance_cuda.log" | head -20
  grep -B2 -A8 -E 'Failure$' "$out/conformance_cuda.log" | head -60
  for g in tessera_cuda_graph_capture_test tessera_cuda_graph_capture_own_runtime_test tessera_cuda_pooling_tiles_host_test; do
    [ -x "$c/bin/$g" ] || continue
    timeout $(lim 60) "$c/bin/$g" > "$out/$g.log" 2>&1
    row "$g" "rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/$g.log" | tr '\n' ' ' | cut -c1-80)"
  done
fi

if has anchors; then
  timeout $(lim 150) "$c/bin/tessera-bench" --mode=P --backend=cuda --batch="$c/suites/h200_anchor.txt" > "$out/bench_h200_anchor.txt" 2>&1
  row "tessera-bench anchor workloads" "rc=$? $(tail -1 "$out/bench_h200_anchor.txt")"
  # ANCHOR_JSON: reuse an anchor measured earlier on this kind of machine (saves a minute of a
  # short budget; the ratio table then says so).
  if [ -n "${ANCHOR_JSON:-}" ] && [ -f "$ANCHOR_JSON" ]; then
    cp "$ANCHOR_JSON" "$out/anchor_subset.json"
    row "anchor subset (torch/cuDNN)" "reused $(basename "$ANCHOR_JSON")"
  else
    OUT="$out" timeout $(lim 150) python3 tools/gpu/anchor_subset.py --no-conv > "$out/anchor_subset.txt" 2>&1
    row "anchor subset (torch/cuDNN, no conv)" "rc=$?"
  fi
  python3 tools/gpu/ratio_table.py "$out/anchor_subset.json" "$out/bench_h200_anchor.txt" > "$out/ratio_table.txt" 2>&1
fi

if has sanitize && command -v compute-sanitizer >/dev/null; then
  timeout $(lim 120) compute-sanitizer --tool memcheck --error-exitcode 9 "$c/bin/tessera_cuda_graph_capture_test" \
      > "$out/sanitizer_graph.log" 2>&1
  row "compute-sanitizer graph test" "rc=$? $(grep -E 'ERROR SUMMARY' "$out/sanitizer_graph.log" | tail -1)"
  timeout $(lim 120) compute-sanitizer --tool initcheck --error-exitcode 9 "$c/bin/tessera_cuda_graph_capture_test" \
      > "$out/sanitizer_initcheck_graph.log" 2>&1
  row "compute-sanitizer initcheck graph" "rc=$? $(grep -E 'ERROR SUMMARY' "$out/sanitizer_initcheck_graph.log" | tail -1)"
  wait
  for log in "$out"/sanitizer_memcheck_*.log "$out/sanitizer_racecheck.log"; do
    row "$(basename "$log" .log)" "$(grep -E 'ERROR SUMMARY|hazards|PASSED|FAILED  \]' "$log" | tail -2 | tr '\n' ' ' | cut -c1-100)"
    grep -m5 -B2 -A8 -E '^========= (Invalid|Race|Error|Program hit)' "$log" | head -40
    grep -E '^\[  FAILED  \]' "$log" | head -5
  done
fi

# initcheck (reads of device memory never written), memcheck and racecheck (shared-memory
# hazards) over the CUDA sweep, as gtest shards side by side, each tool in turn and waited for (no
# timing phase runs beside them): INITCHECK_SHARDS (default 8), SANITIZE_FILTER narrows the sweep.
# racecheck in one process outlasted 230 s (run 1 of the evening of 2026-12-03); sharded it fits.
# SANITIZE_SIDE_BY_SIDE=1 starts every asked tool's shards at once (16 processes for two tools on
# the 16-core machine) and waits once. Measured 2026-12-05 (run 8): in 150 s memcheck finished 33
# and racecheck 19 of the sweep's 41 tests, slower than one tool at a time; kept for short calls.
sanitize_report() {
  for log in "$out"/sanitizer_$1_only_*.log; do
    row "$(basename "$log" .log)" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED  \]|tests? ran' "$log" | tail -2 | tr '\n' ' ' | cut -c1-100)"
    grep -m3 -B2 -A8 -E '^========= (Uninitialized|Invalid|Race|Error|Program hit)' "$log" | head -30
  done
}
sanitized=()
for tool in initcheck memcheck racecheck; do
  has "$tool" && command -v compute-sanitizer >/dev/null || continue
  shards=${INITCHECK_SHARDS:-8}
  for ((i = 0; i < shards; ++i)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "$(lim 400)" \
        compute-sanitizer --tool $tool --error-exitcode 9 "$c/bin/tessera_conformance_test" \
        --gtest_filter="${SANITIZE_FILTER:-*/cuda}:-*Validation*" > "$out/sanitizer_${tool}_only_$i.log" 2>&1 &
  done
  sanitized+=("$tool")
  [ "${SANITIZE_SIDE_BY_SIDE:-0}" = 1 ] || { wait; sanitize_report "$tool"; }
done
if [ "${SANITIZE_SIDE_BY_SIDE:-0}" = 1 ]; then
  wait
  for tool in "${sanitized[@]}"; do sanitize_report "$tool"; done
fi

if has probe && [ -x "$c/bin/tessera-bandwidth-probe" ]; then
  # The copy ceiling and the loop shapes that reach it (cudaMemcpy, grid-stride, chunked, hints).
  timeout $(lim 120) "$c/bin/tessera-bandwidth-probe" > "$out/bandwidth_probe.txt" 2>&1
  row "bandwidth probe" "rc=$? $(grep -E 'memcpy' "$out/bandwidth_probe.txt" | head -1 | cut -c1-80)"
  sort -k7 -n -r "$out/bandwidth_probe.txt" | grep '^probe' | head -8
fi

if has profile && command -v ncu >/dev/null; then
  # Hardware counters (ncu, clocks left alone as METHOD.md asks) on each memory-bound anchor
  # workload: DRAM throughput, duration, registers, occupancy, grid of every kernel of two calls.
  metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,smsp__average_warp_latency_issue_stalled_long_scoreboard
  i=0
  while IFS= read -r problem; do
    i=$((i + 1))
    [[ "$problem" =~ ${NCU_PROBLEMS:-.} ]] || continue
    (( DEADLINE - SECONDS < 40 )) && { row "ncu problem $i" "not run: the call's deadline"; continue; }
    # shellcheck disable=SC2086
    timeout $(lim 90) ncu --clock-control none --launch-skip 4 --launch-count 6 --metrics "$metrics" \
        "$c/bin/tessera-bench" --mode=P --iters=12 --backend=cuda $problem > "$out/ncu_$i.txt" 2>&1
    row "ncu $(echo "$problem" | cut -c1-40)" "rc=$? $(grep -cE '^  [a-z_]+.*\(' "$out/ncu_$i.txt") kernels"
  done <<'PROBLEMS'
--reorder --sdt=f32 --ddt=f32 --stag=nchw --dtag=nchw 256x1024x32x32
--eltwise --dt=f16 --tag=nhwc --alg=relu --dir=fwd 256x256x56x56
--bnorm --dt=f16 --tag=nhwc --dir=FWD_I mb256ic256ih56
--bnorm --dt=f16 --tag=nhwc --dir=FWD_D mb256ic256ih56
--bnorm --dt=f16 --tag=nhwc --dir=BWD_DW mb256ic256ih56
--pool --dt=f16 --tag=nhwc --alg=max --dir=FWD_D mb256ic64ih112oh56kh3sh2ph1
--pool --dt=f16 --tag=nhwc --alg=max --dir=BWD_D mb256ic64ih112oh56kh3sh2ph1
--softmax --dt=f16 --alg=softmax --dir=FWD_D --axis=1 65536x1024
--lnorm --dt=f16 --dir=FWD_D 65536x1024
--rnn --dt=f16 --cell=vanilla_lstm --direction=left2right --prop=FWD_I l2t128mb64sic1024slc1024_nlstm_lm
PROBLEMS
  # Per kernel launch: its name (shortened), duration, DRAM % of peak, registers, grid, warps active.
  for f in "$out"/ncu_*.txt; do
    echo "== $(basename "$f")"
    grep -E '^  [^ ]|gpu__time_duration|dram__throughput|registers_per_thread|launch__grid_size|warps_active' "$f" \
      | sed -E '/^  [^ ]/ s/^  (void )?(.{0,110}).*/  \2/; s/^ +([a-z_]+__[a-z_.]+) +[^ ]* +([0-9.,]+)$/    \1 \2/' | head -40
  done > "$out/ncu_summary.txt"
fi

if has variants; then
  # Launch-geometry alternatives (cuda_backend/launch_overrides.hpp), each timed on the anchor
  # workloads it touches and each run through its conformance tests: the built-in choice is
  # covered by every other phase.
  #   time_variants VARIABLE "VALUES" LABEL PATTERN: the anchor lines matching PATTERN per value
  #   test_variant VARIABLE VALUE LABEL FILTER: the conformance tests of FILTER under that value
  time_variants() {
    grep -E -- "$4" "$c/suites/h200_anchor.txt" | sed 's/^--reset //' > "$out/$3_anchor.txt"
    for v in $2; do
      env "$1=$v" timeout $(lim 90) "$c/bin/tessera-bench" --mode=P --backend=cuda \
          --batch="$out/$3_anchor.txt" > "$out/variant_$3_$v.txt" 2>&1
      row "$3 $v" "rc=$? $(grep -oE '[0-9.]+ms [0-9]+GB/s' "$out/variant_$3_$v.txt" | tr '\n' ' ')"
    done
  }
  test_variant() {
    env "$1=$2" timeout $(lim 120) "$c/bin/tessera_conformance_test" --gtest_filter="$4" \
        > "$out/variant_$3_$2_conformance.log" 2>&1
    row "$3 $2 conformance" "rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/variant_$3_$2_conformance.log" | tr '\n' ' ' | cut -c1-80)"
  }
  # The batch-norm lines of the anchor suite: the first names --bnorm, the next two only --dir.
  # VARIANTS narrows the set: bn_rows softmax_blocks lnorm_rows (decided on 2026-12-03, run 10 of
  # the afternoon), pool_max3x3s2 (3x3/2 max pooling on its own kernels or the tiles, per
  # direction, and the backward's two forms), bn_passes (the batch-norm dx pass's rows in flight
  # and the forward pass's blocks per SM), dw_wgrad_chunk (the depthwise backward filter's
  # smallest chunk), rnn_split (the RNN forward's recurrent GEMM in k-slices), tf32_backward
  # (ResNet-50's fp32 backward data and filter on the TF32 tensor cores beside cuDNN's),
  # up_convolutions (the 3-D U-Net's up-convolutions beside cuDNN's), lnorm_pair (the layer-norm
  # forward with two rows in flight per warp), pool_fwd_form (the 3x3/2 max-pool forward's columns
  # and rows per step), gemm_tf32 (the GEMM engine's TF32 kernel: matmul, RNN), pool_disjoint
  # (non-overlapping max-pool windows on the direct kernel), rnn_persistent (the RNN forward's
  # steps in one cooperative launch per layer), rnn_bwd_split (backward data's step GEMM in
  # k-slices), rnn_profile (ncu on the persistent RNN forward), rnn_warps (the persistent RNN
  # kernels' block size: the default, all 8 warps, all 16). The lean
  # softmax and layer-norm forward kernels and the packed 3x3/2 max-pool forward were timed here
  # against their former forms and replaced them on 2026-12-04 (the prefetching layer-norm form
  # lost in the night's run 2 of 2026-12-03).
  want() { [[ " ${VARIANTS:-pool_max3x3s2} " == *" $1 "* ]]; }
  if want bn_rows; then
    time_variants TESSERA_CUDA_BN_ROWS_PER_THREAD "4 16 64" bn_rows_per_thread '--bnorm|^--dir=(FWD_D|BWD_DW) mb256'
    test_variant TESSERA_CUDA_BN_ROWS_PER_THREAD 4 bn_rows_per_thread '*BatchNorm*/cuda'
  fi
  if want softmax_blocks; then
    time_variants TESSERA_CUDA_SOFTMAX_BLOCKS_PER_SM "0 8" softmax_blocks_per_sm '--softmax.* 65536x1024'
    test_variant TESSERA_CUDA_SOFTMAX_BLOCKS_PER_SM 8 softmax_blocks_per_sm '*Softmax*/cuda'
  fi
  if want lnorm_rows; then
    time_variants TESSERA_CUDA_LNORM_ROWS_PER_WARP "1 4 16" lnorm_rows_per_warp '--lnorm.* 65536x1024'
    test_variant TESSERA_CUDA_LNORM_ROWS_PER_WARP 16 lnorm_rows_per_warp '*LayerNorm*/cuda:*RmsNorm*/cuda'
  fi
  if want lnorm_pair; then
    # The layer-norm forward with two rows in flight per warp (norm_rows_forward_warp_pair,
    # TESSERA_CUDA_LNORM_PAIR=1) against the one-row kernel, and its conformance.
    time_variants TESSERA_CUDA_LNORM_PAIR "0 1" lnorm_pair '--lnorm.* 65536x1024'
    test_variant TESSERA_CUDA_LNORM_PAIR 1 lnorm_pair '*LayerNorm*/cuda:*RmsNorm*/cuda'
  fi
  if want pool_fwd_form; then
    # The 3x3/2 max-pool forward's columns and rows per step (TESSERA_CUDA_POOL_FWD_MAX3X3S2_FORM:
    # 0 one by one, 1 two columns, 2 two rows, 3 both), timed on the anchor's forward line, and
    # each form's conformance.
    time_variants TESSERA_CUDA_POOL_FWD_MAX3X3S2_FORM "0 1 2 3" pool_fwd_form '--pool'
    for v in 1 2 3; do test_variant TESSERA_CUDA_POOL_FWD_MAX3X3S2_FORM $v pool_fwd_form '*Pooling*/cuda'; done
  fi
  if want gemm_tf32; then
    # The GEMM engine's TF32 kernel (gemm_mma_tf32.cuh; matmul_tf32_mma_sync, and the RNN and
    # up-convolution GEMMs under TF32; the default since 2026-12-05, 0 unlists it): the matmul
    # sweep (f32 again under TF32) and its TF32 numerics test, then fp32
    # GEMMs and the anchor LSTM in fp32 under TF32, exact (0) against TF32 (1), beside cuDNN (timed
    # only: --mode=C holds fp32 tolerances; the tests above check the TF32 numerics).
    test_variant TESSERA_CUDA_GEMM_TF32 1 gemm_tf32 '*Matmul*/cuda'
    printf '%s\n' '--matmul --dt=f32 m4096n4096k4096 m8192n1024k1024 m64n4096k1024 2x8x512x64:2x8x64x512' \
        '--reset --rnn --dt=f32 --cell=vanilla_lstm --direction=left2right --prop=FWD_I l2t128mb64sic1024slc1024_nlstm_lm' \
        > "$out/gemm_tf32_problems.txt"
    for v in 0 1; do
      env TESSERA_CUDA_GEMM_TF32=$v timeout $(lim 120) "$c/bin/tessera-bench" --mode=P --backend=cuda,cudnn \
          --attr-fpmath=tf32 --batch="$out/gemm_tf32_problems.txt" > "$out/variant_gemm_tf32_$v.txt" 2>&1
      row "gemm_tf32 $v" "rc=$? $(grep -oE '[0-9.]+ms [0-9.]+TFLOP/s' "$out/variant_gemm_tf32_$v.txt" | tr '\n' ' ' | cut -c1-120) $(tail -1 "$out/variant_gemm_tf32_$v.txt" | cut -c1-50)"
    done
  fi
  if want pool_disjoint; then
    # Max pooling with windows that do not overlap (the 3-D U-Net's 2x2x2/2) on the direct kernel
    # (TESSERA_CUDA_POOL_DISJOINT_DIRECT=1, the default since 2026-12-05) or the tiles (0), beside
    # cuDNN, checked against the reference (--mode=CP), then the pooling conformance under 0.
    { echo "--pool --alg=max --dir=FWD_D"; grep -E 'kd2sd2_nunet3d:pool' "$c/suites/unet3d.txt"; } > "$out/disjoint_pools.txt"
    for v in 1 0; do
      env TESSERA_CUDA_POOL_DISJOINT_DIRECT=$v timeout $(lim 90) "$c/bin/tessera-bench" --mode=CP --dt=f16 --tag=nhwc \
          --backend=cuda,cudnn --batch="$out/disjoint_pools.txt" > "$out/variant_pool_disjoint_$v.txt" 2>&1
      row "pool_disjoint $v" "rc=$? $(grep -oE 'ratio [0-9.]+' "$out/variant_pool_disjoint_$v.txt" | tr '\n' ' ') $(tail -1 "$out/variant_pool_disjoint_$v.txt" | cut -c1-50)"
    done
    test_variant TESSERA_CUDA_POOL_DISJOINT_DIRECT 0 pool_disjoint '*Pooling*/cuda'
  fi
  if want pool_max3x3s2; then
    # Both anchor pooling lines (forward, then backward) under each kernel choice per direction.
    time_variants TESSERA_CUDA_POOL_MAX3X3S2 "1 0" pool_bwd_max3x3s2 '--pool|^--dir=BWD_D mb256ic64'
    time_variants TESSERA_CUDA_POOL_FWD_MAX3X3S2 "1 0" pool_fwd_max3x3s2 '--pool|^--dir=BWD_D mb256ic64'
    test_variant TESSERA_CUDA_POOL_MAX3X3S2 0 pool_bwd_max3x3s2 '*Pooling*/cuda'
    test_variant TESSERA_CUDA_POOL_FWD_MAX3X3S2 0 pool_fwd_max3x3s2 '*Pooling*/cuda'
    # The backward's two forms on its own kernel (pooling_max3x3s2.cuh): 1 shuffle, 0 recompute.
    time_variants TESSERA_CUDA_POOL_BWD_MAX3X3S2_FORM "1 0" pool_bwd_form '--pool|^--dir=BWD_D mb256ic64'
    test_variant TESSERA_CUDA_POOL_BWD_MAX3X3S2_FORM 0 pool_bwd_form '*Pooling*/cuda'
  fi
  if want dw_wgrad_chunk; then
    # The depthwise backward filter's smallest chunk (conv_depthwise_wgrad_plan.hpp): 16 pixels
    # (the default) against 4, on MobileNet-v2's ten depthwise layers (N=32, fp16 NHWC), and the
    # small suite's correctness checks under 4.
    { echo "--conv --dir=BWD_W --dt=f16 --tag=nhwc"; grep -E '^g[0-9]+mb' "$c/suites/mobilenet_v2.txt"; } \
        > "$out/dw_wgrad_layers.txt"
    for v in 16 4; do
      env TESSERA_CUDA_DW_WGRAD_MIN_CHUNK=$v timeout $(lim 90) "$c/bin/tessera-bench" --mode=P --backend=cuda \
          --batch="$out/dw_wgrad_layers.txt" > "$out/variant_dw_wgrad_chunk_$v.txt" 2>&1
      row "dw_wgrad_chunk $v" "rc=$? $(grep -oE '[0-9.]+ms' "$out/variant_dw_wgrad_chunk_$v.txt" | tr '\n' ' ')"
    done
    env TESSERA_CUDA_DW_WGRAD_MIN_CHUNK=4 timeout $(lim 90) "$c/bin/tessera-bench" --mode=C --backend=cuda \
        --batch="$c/suites/cuda_own_kernels_small.txt" > "$out/variant_dw_wgrad_chunk_4_correctness.txt" 2>&1
    row "dw_wgrad_chunk 4 correctness" "rc=$? $(tail -1 "$out/variant_dw_wgrad_chunk_4_correctness.txt")"
  fi
  if want up_convolutions; then
    # Up-convolutions (filter = stride) as one GEMM and a scatter (conv_dgrad_kernel_stride.cu,
    # registered since it passed on 2026-12-05): the 3-D U-Net's three up-convolutions, fp16
    # channels-last, beside cuDNN (checked against the reference in --mode=CP).
    { echo "--conv --dir=BWD_D"; grep -E 'kd2sd2_nunet3d:up' "$c/suites/unet3d.txt"; } > "$out/up_convolutions.txt"
    timeout $(lim 90) "$c/bin/tessera-bench" --mode=CP --dt=f16 --tag=nhwc \
        --backend=cuda,cudnn --batch="$out/up_convolutions.txt" > "$out/variant_up_convolutions.txt" 2>&1
    row "up_convolutions" "rc=$? $(grep -oE 'ratio [0-9.]+' "$out/variant_up_convolutions.txt" | tr '\n' ' ') $(tail -1 "$out/variant_up_convolutions.txt" | cut -c1-50)"
  fi
  if want rnn_split; then
    # The forward's recurrent GEMM in k-slices (TESSERA_CUDA_RNN_RECURRENT_SPLIT, rnn_kernels.cu),
    # not yet run on a GPU: conformance under 4 slices, then the anchor LSTM under 1, 2, 4 and 8.
    test_variant TESSERA_CUDA_RNN_RECURRENT_SPLIT 4 rnn_split '*Rnn*/cuda'
    time_variants TESSERA_CUDA_RNN_RECURRENT_SPLIT "1 2 4 8" rnn_split '--rnn'
  fi
  if want rnn_bwd_split; then
    # Backward data's step GEMM in k-slices (TESSERA_CUDA_RNN_BACKWARD_SPLIT, rnn_kernels.cu; off
    # by default, not yet run on a GPU): the RNN conformance under 4 slices, then the large LSTM
    # and GRU training backward (fp16) under 1, 4, 8 and 16 beside cuDNN.
    test_variant TESSERA_CUDA_RNN_BACKWARD_SPLIT 4 rnn_bwd_split '*Rnn*/cuda'
    printf '%s\n' '--rnn --dt=f16 --cell=vanilla_lstm --direction=left2right --prop=BWD_DW l2t128mb64sic1024slc1024_nlstm_lm' \
        '--cell=vanilla_gru --prop=BWD_DW l2t128mb64sic1024slc1024_ngru_lm' > "$out/rnn_bwd_split_problems.txt"
    for v in 1 4 8 16; do
      env TESSERA_CUDA_RNN_BACKWARD_SPLIT=$v timeout $(lim 90) "$c/bin/tessera-bench" --mode=P --backend=cuda,cudnn \
          --batch="$out/rnn_bwd_split_problems.txt" > "$out/variant_rnn_bwd_split_$v.txt" 2>&1
      row "rnn_bwd_split $v" "rc=$? $(grep -oE '[0-9.]+ms' "$out/variant_rnn_bwd_split_$v.txt" | tr '\n' ' ' | cut -c1-100)"
    done
  fi
  if want rnn_warps; then
    # The persistent RNN kernels' block size (default since 2026-12-05: 16 warps for the forward, 8
    # for backward data; TESSERA_CUDA_RNN_PERSISTENT_WARPS=8 or 16 forces both passes): the RNN
    # conformance and the graph capture under each forced size, then the large LSTM and GRU beside
    # cuDNN under the default and each forced size.
    for v in 8 16; do
      test_variant TESSERA_CUDA_RNN_PERSISTENT_WARPS $v rnn_warps '*Rnn*/cuda'
      env TESSERA_CUDA_RNN_PERSISTENT_WARPS=$v timeout $(lim 60) "$c/bin/tessera_cuda_graph_capture_test" > "$out/variant_rnn_warps_capture_$v.log" 2>&1
      row "rnn_warps $v capture" "rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/variant_rnn_warps_capture_$v.log" | tr '\n' ' ')"
    done
    { echo '--rnn --dt=f16 --cell=vanilla_lstm --direction=left2right'
      grep -E '^--(prop|cell)=(FWD_I|FWD_D|BWD_DW|vanilla_gru)' "$c/suites/lstm.txt" | grep -E '_lm$|^--cell=vanilla_gru$'
    } > "$out/rnn_warps_problems.txt"
    for v in default 8 16; do
      env TESSERA_CUDA_RNN_PERSISTENT_WARPS=${v/default/} timeout $(lim 120) "$c/bin/tessera-bench" --mode=P --backend=cuda,cudnn \
          --batch="$out/rnn_warps_problems.txt" > "$out/variant_rnn_warps_$v.txt" 2>&1
      row "rnn_warps $v" "rc=$? $(grep -oE '[0-9.]+ms' "$out/variant_rnn_warps_$v.txt" | tr '\n' ' ' | cut -c1-110)"
    done
  fi
  if want rnn_profile; then
    # ncu on one call of the persistent RNN forward (anchor LSTM, fp16): where its step time goes
    # (warp stalls, issue, memory), the stepwise forward's GEMM and cell kernels beside it.
    rnn_anchor="--rnn --dt=f16 --cell=vanilla_lstm --direction=left2right --prop=FWD_I l2t128mb64sic1024slc1024_nlstm_lm"
    for v in 1 0; do
      kernels='regex:rnn_persistent_forward'
      (( v == 0 )) && kernels='regex:gemm_mma|rnn_cell'
      # shellcheck disable=SC2086
      env TESSERA_CUDA_RNN_PERSISTENT=$v timeout $(lim 120) ncu --clock-control none -k "$kernels" \
          --launch-skip 4 --launch-count 2 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
          --section MemoryWorkloadAnalysis --section LaunchStats "$c/bin/tessera-bench" --mode=P --iters=1 --backend=cuda \
          $rnn_anchor > "$out/ncu_rnn_persistent_$v.txt" 2>&1
      row "rnn_profile $v" "rc=$? $(grep -E 'Duration|Stall Long|Stall Barrier|Issued Warp' "$out/ncu_rnn_persistent_$v.txt" | head -4 | tr -s ' ' | tr '\n' ';' | cut -c1-150)"
    done
  fi
  if want rnn_persistent; then
    # The persistent RNN kernels (rnn_persistent.cu, rnn_persistent_backward.cu: each layer's
    # recurrent steps in one cooperative launch, forward and backward data; the default since
    # 2026-12-05, TESSERA_CUDA_RNN_PERSISTENT=0 unlists them): the RNN conformance under 1, then the
    # large LSTM and GRU (inference, training forward and training backward, fp16; the LSTM
    # inference in bf16 and bidirectional) beside cuDNN, stepwise (0) against persistent (1); the
    # row counts the lines a persistent kernel ran.
    test_variant TESSERA_CUDA_RNN_PERSISTENT 1 rnn_persistent '*Rnn*/cuda'
    # 2: every layer as if the cooperative launch were refused (the stepwise kernels on the
    # persistent kernels' two-slot state).
    test_variant TESSERA_CUDA_RNN_PERSISTENT 2 rnn_persistent '*Rnn*/cuda'
    # The LSTM forward captured into a CUDA graph (cooperative kernel nodes), both application sides.
    for g in tessera_cuda_graph_capture_test tessera_cuda_graph_capture_own_runtime_test; do
      env TESSERA_CUDA_RNN_PERSISTENT=1 timeout $(lim 60) "$c/bin/$g" > "$out/variant_rnn_persistent_$g.log" 2>&1
      row "rnn_persistent $g" "rc=$? $(grep -E 'LSTM forward ran|^\[  (PASSED|FAILED)  \]' "$out/variant_rnn_persistent_$g.log" | tr '\n' ' ' | cut -c1-110)"
    done
    { echo '--rnn --dt=f16 --cell=vanilla_lstm --direction=left2right'
      grep -E '^--(prop|cell)=(FWD_I|FWD_D|BWD_DW|vanilla_gru)' "$c/suites/lstm.txt" | grep -E '_lm$|^--cell=vanilla_gru$'
      echo '--reset --rnn --dt=bf16 --cell=vanilla_lstm --direction=left2right --prop=FWD_I l2t128mb64sic1024slc1024_nlstm_lm'
      echo '--reset --rnn --dt=f16 --cell=vanilla_lstm --direction=concat --prop=FWD_I l2t128mb64sic1024slc1024_nlstm_bidir'
    } > "$out/rnn_persistent_problems.txt"
    for v in 0 1; do
      env TESSERA_CUDA_RNN_PERSISTENT=$v timeout $(lim 150) "$c/bin/tessera-bench" --mode=P --backend=cuda,cudnn \
          --batch="$out/rnn_persistent_problems.txt" > "$out/variant_rnn_persistent_$v.txt" 2>&1
      row "rnn_persistent $v" "rc=$? $(grep -c '_persistent' "$out/variant_rnn_persistent_$v.txt") persistent; $(grep -oE '[0-9.]+ms' "$out/variant_rnn_persistent_$v.txt" | tr '\n' ' ' | cut -c1-110)"
    done
  fi
  # tf32_suite LABEL SUITE: a ResNet-50 suite in fp32 NHWC with TF32 allowed, side by side with
  # cuDNN under the same math mode; the row counts the lines our TF32 kernels ran (their names end
  # in _tf32; the exact direct kernels take what they decline).
  tf32_suite() {
    timeout $(lim 150) "$c/bin/tessera-bench" --mode=P --backend=cuda,cudnn \
        --dt=f32 --tag=nhwc --attr-fpmath=tf32 --batch="$c/suites/$2.txt" > "$out/variant_$1_$2.txt" 2>&1
    row "$1 $2" "rc=$? $(grep -c '_tf32 ' "$out/variant_$1_$2.txt") rows on TF32 kernels; $(tail -1 "$out/variant_$1_$2.txt" | cut -c1-80)"
  }
  if want tf32_backward; then
    # fp32 backward data and filter on the TF32 tensor cores (the forward form of backward data,
    # conv_igemm_dgrad_fprop_form.cuh; CUTLASS's sm80 strided dgrad and parallel split-K wgrad,
    # conv_backward_tf32_sm80.cu, with the zero-channel forms for conv1's C = 3), registered by
    # default since their conformance runs on 2026-12-05: ResNet-50's backward data and filter at
    # minibatch 32 beside cuDNN. (Their tests run in the conformance phase.)
    tf32_suite tf32_backward resnet50_bwd_data
    tf32_suite tf32_backward resnet50_bwd_filter
  fi
  if want bn_passes; then
    # The batch-norm backward's dx pass with its plain case two rows (the default) or one row at a
    # time, and the elementwise forward pass at 3 (the default) or 4 blocks per SM
    # (batch_norm_kernels.cu).
    time_variants TESSERA_CUDA_BN_DX_UNROLL "2 1" bn_dx_unroll '--bnorm|^--dir=BWD_DW mb256'
    test_variant TESSERA_CUDA_BN_FWD_BLOCKS_PER_SM 4 bn_fwd_blocks '*BatchNorm*/cuda'
    time_variants TESSERA_CUDA_BN_FWD_BLOCKS_PER_SM "4 3" bn_fwd_blocks '--bnorm|^--dir=FWD_D mb256'
  fi
fi

if has multigpu; then
  # Issue 9 (kind nvidia-h200-x2): handles on devices 0 and 1 from two threads of one process
  # (ResNet-50 layers against the naive reference and bitwise against the one-device run, the
  # current context checked around every call, pointer checks, tuning entries per fingerprint),
  # then the whole CUDA conformance sweep on device 1 alone.
  nvidia-smi -L > "$out/gpus.txt" 2>&1
  TESSERA_TUNING_DB=/tmp/tessera_multigpu_tuning.db timeout $(lim 300) "$c/bin/tessera_cuda_multi_device_test" \
      > "$out/multi_device.log" 2>&1
  row "multi-device test ($(grep -c '^GPU' "$out/gpus.txt") GPUs)" "rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)  \]' "$out/multi_device.log" | tr '\n' ' ' | cut -c1-90)"
  grep -E 'bitwise equal|Failure|FAILED|SKIPPED' "$out/multi_device.log" | head -20
  CUDA_VISIBLE_DEVICES=1 timeout $(lim 200) "$c/bin/tessera_conformance_test" --gtest_filter='*/cuda:-*Validation*' \
      > "$out/conformance_device1.log" 2>&1
  row "conformance on device 1 alone" "rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/conformance_device1.log" | tr '\n' ' ' | cut -c1-80)"
fi

if has bench; then
  b="$c/bin/tessera-bench"
  timeout $(lim 120) "$b" --backend=cuda --batch="$c/suites/default.txt" > "$out/bench_default.txt" 2>&1
  row "tessera-bench default (cuda)" "rc=$? $(tail -1 "$out/bench_default.txt")"
  grep -E '^FAILED' "$out/bench_default.txt" | head -10 | cut -c1-200
  timeout $(lim 150) "$b" --mode=P --backend=cuda --batch="$c/suites/h200_anchor.txt" > "$out/bench_h200_anchor.txt" 2>&1
  row "tessera-bench anchor workloads" "rc=$? $(tail -1 "$out/bench_h200_anchor.txt")"
  timeout $(lim 150) "$b" --mode=P --dt=f16 --tag=nhwc --backend=cuda --batch="$c/suites/resnet50_mb256.txt" \
      > "$out/bench_resnet50_mb256.txt" 2>&1
  row "tessera-bench R50 N256 fp16" "rc=$? $(tail -1 "$out/bench_resnet50_mb256.txt")"
  # Side by side with cuDNN through its plugin, same process and method; the JSON feeds
  # tools/perf-report (docs/PERFORMANCE.md).
  timeout $(lim 200) "$b" --mode=P --dt=f16 --tag=nhwc --backend=cuda,cudnn --json="$out/side_by_side_r50.json" \
      --batch="$c/suites/resnet50_mb256.txt" > "$out/bench_resnet50_mb256_side_by_side.txt" 2>&1
  row "tessera-bench R50 N256 cuda,cudnn" "rc=$? $(grep -E '^geomean' "$out/bench_resnet50_mb256_side_by_side.txt" | tail -1 | cut -c1-90)"
  timeout $(lim 100) "$b" --mode=CP --backend=cudnn --batch="$c/suites/default.txt" > "$out/bench_default_cudnn.txt" 2>&1
  row "tessera-bench default (cudnn)" "rc=$? $(tail -1 "$out/bench_default_cudnn.txt")"
  OUT="$out" timeout $(lim 200) python3 tools/gpu/anchor_subset.py > "$out/anchor_subset.txt" 2>&1
  row "anchor subset (torch/cuDNN)" "rc=$?"
  grep -vE '^PASSED' "$out/bench_h200_anchor.txt" "$out/bench_resnet50_mb256.txt" | head -20 | cut -c1-220
  python3 tools/gpu/ratio_table.py "$out/anchor_subset.json" "$out/bench_h200_anchor.txt" \
      "$out/bench_resnet50_mb256.txt" > "$out/ratio_table.txt" 2>&1
fi

if has suites; then
  # Every suite of tools/suites side by side on our kernels and cuDNN's (issue 6), one JSON each
  # (in logs.tar.gz) for tools/perf-report. Convolution suites in fp16 NHWC, the tensor-core path
  # both libraries are tuned for; the others as their files give them. SUITES narrows the list,
  # SUITE_TIMEOUT bounds each (the N=256 backward-filter and memory-bound suites take over 120 s).
  for suite in ${SUITES:-resnet50 resnet50_bwd_data resnet50_bwd_filter resnet50_mb256 resnet50_bwd_data_mb256 \
                resnet50_bwd_filter_mb256 mobilenet_v2 mobilenet_v2_bwd_filter vgg16 unet3d small_c_stems memory_bound lstm host_overhead}; do
    [ -f "$c/suites/$suite.txt" ] || continue
    (( DEADLINE - SECONDS < 30 )) && { row "suite $suite" "not run: the call's deadline"; continue; }
    case "$suite" in
      resnet50*|mobilenet_v2*|vgg16|unet3d|small_c_stems) extra=(--dt=f16 --tag=nhwc) ;;
      *) extra=() ;;
    esac
    # Each column is pinned to its backend (tessera-bench sets tsrSetBackendsExclusive), so the
    # cudnn column is cuDNN's own choice or SKIPPED, never one of ours. SUITES_TUNING=tune: each
    # backend's kernel by measurement among its own (cuDNN's algorithms are the cudnn plugin's
    # kernels, so this is cuDNN at its found best, as PyTorch's benchmark mode gets it).
    timeout $(lim ${SUITE_TIMEOUT:-240}) "$c/bin/tessera-bench" --mode=P "${extra[@]}" --backend=cuda,cudnn \
        --tuning="${SUITES_TUNING:-database}" --json="$out/side_by_side_$suite.json" --batch="$c/suites/$suite.txt" > "$out/bench_side_by_side_$suite.txt" 2>&1
    row "suite $suite cuda,cudnn" "rc=$? $(grep -E '^geomean' "$out/bench_side_by_side_$suite.txt" | tail -1 | sed -E 's/^geomean [^:]*: //' | cut -c1-80)"
  done
fi

if has convanchor; then
  # ResNet-50 at N=256 in all three directions on our kernels, each chosen by measurement among
  # ours (as PyTorch's benchmark mode chooses among cuDNN's), beside PyTorch/cuDNN in this call.
  # PyTorch first: its JSON is written only at its end, ours after every problem.
  OUT="$out" timeout $(lim 300) python3 tools/gpu/anchor_subset.py --conv-backward > "$out/anchor_subset.txt" 2>&1
  row "anchor subset (torch/cuDNN, 3 directions)" "rc=$? $(grep -E 'r50_conv' "$out/anchor_subset.txt" | tr '\n' ' ' | cut -c1-110)"
  for suite in resnet50_mb256 resnet50_bwd_filter_mb256 resnet50_bwd_data_mb256; do
    timeout $(lim 120) "$c/bin/tessera-bench" --mode=P --dt=f16 --tag=nhwc --backend=cuda --tuning=tune \
        --json="$out/ours_$suite.json" --batch="$c/suites/$suite.txt" > "$out/bench_ours_$suite.txt" 2>&1
    row "tessera-bench $suite (tuned)" "rc=$? $(tail -1 "$out/bench_ours_$suite.txt" | cut -c1-70)"
  done
  python3 tools/gpu/conv_direction_ratios.py "$out/anchor_subset.json" "$out"/ours_resnet50_mb256.json \
      "$out"/ours_resnet50_bwd_filter_mb256.json "$out"/ours_resnet50_bwd_data_mb256.json > "$out/conv_direction_ratios.txt" 2>&1
fi

if has tiles; then
  # The 128x64 tile on every layer it can run, to see where it beats the default choice.
  timeout $(lim 100) "$c/bin/tessera-bench" --mode=P --dt=f16 --tag=nhwc --backend=cuda --impl=igemm_sm90_128x64x64 \
      --batch="$c/suites/resnet50_mb256.txt" > "$out/bench_resnet50_mb256_128x64.txt" 2>&1
  row "tessera-bench R50 N256 128x64 tile" "rc=$? $(tail -1 "$out/bench_resnet50_mb256_128x64.txt")"
fi

if has overhead || has bench; then
  # Per-call host cost: Tessera (our kernels, and cuDNN through its plugin) and cuDNN's own API,
  # the same tiny problem, in this run.
  timeout $(lim 60) "$c/bin/tessera-call-overhead" > "$out/call_overhead_tessera.txt" 2>&1
  row "tessera call overhead (cuda)" "$(grep -E 'conv_fwd_host|find_ms' "$out/call_overhead_tessera.txt" | tr '\n' ' ' | cut -c1-110)"
  row "  auto choice, pointer checks" "$(grep -E 'auto_algo|conv_fwd_auto_host|conv_fwd_checked_host' "$out/call_overhead_tessera.txt" | tr '\n' ' ' | cut -c1-110)"
  timeout $(lim 60) "$c/bin/tessera-call-overhead" --backend=cudnn > "$out/call_overhead_tessera_cudnn.txt" 2>&1
  row "tessera call overhead (cudnn plugin)" "$(grep -E 'conv_fwd_host' "$out/call_overhead_tessera_cudnn.txt" | cut -c1-110)"
  # Our kernels alone (the find then measures no cuDNN algorithm), and the same find with each
  # candidate's wall time logged (debug), and the bare launch under every call.
  TESSERA_BACKENDS=-cudnn timeout $(lim 60) "$c/bin/tessera-call-overhead" > "$out/call_overhead_tessera_own.txt" 2>&1
  row "tessera call overhead (cuda only)" "$(grep -E 'conv_fwd_host|find_ms' "$out/call_overhead_tessera_own.txt" | tr '\n' ' ' | cut -c1-110)"
  TESSERA_LOG_LEVEL=debug timeout $(lim 60) "$c/bin/tessera-call-overhead" > "$out/call_overhead_find_debug.txt" 2>&1
  grep -E 'measured .* ms wall' "$out/call_overhead_find_debug.txt" | sed -E 's/^.*(tsr[A-Za-z]+: measured)/\1/' | head -20
  if [ -x "$c/bin/tessera-launch-floor" ]; then
    timeout $(lim 30) "$c/bin/tessera-launch-floor" > "$out/launch_floor.txt" 2>&1
    row "bare launch floor" "$(cut -c1-110 "$out/launch_floor.txt")"
  fi
  nvcc_bin=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
  if [ -f "$c/anchors/cudnn_overhead.cpp" ] && [ -n "$nvcc_bin" ] && [ -n "$cudnn_lib" ]; then
    cudnn_inc=$(dirname "$cudnn_lib")/include
    if "$nvcc_bin" -O2 -o /tmp/cudnn_overhead "$c/anchors/cudnn_overhead.cpp" -I"$cudnn_inc" -L"$cudnn_lib" \
        -l:libcudnn.so.9 > "$out/cudnn_overhead_build.txt" 2>&1; then
      timeout $(lim 60) /tmp/cudnn_overhead > "$out/cudnn_overhead.txt" 2>&1
      row "cudnn overhead anchor" "$(grep -E 'conv_fwd_host_us|find_ms' "$out/cudnn_overhead.txt" | tr '\n' ' ' | cut -c1-110)"
    else
      row "cudnn overhead anchor" "build failed: $(tail -1 "$out/cudnn_overhead_build.txt" | cut -c1-90)"
    fi
  fi
fi

if has memory || has bench; then
  # The memory-bound anchors on our kernels and cuDNN's, one process: the JSON feeds perf-report.
  # Last, as the longest step (hundreds of MB of fresh random inputs per problem).
  timeout $(lim 300) "$c/bin/tessera-bench" --mode=P --backend=cuda,cudnn --json="$out/side_by_side_memory_bound.json" \
      --batch="$c/suites/h200_anchor.txt" > "$out/bench_anchor_side_by_side.txt" 2>&1
  row "tessera-bench anchors cuda,cudnn" "rc=$? $(grep -E '^geomean' "$out/bench_anchor_side_by_side.txt" | tail -1 | cut -c1-90)"
fi

printf '%s\n' "${rows[@]}" > "$out/summary.txt"
tar -czf "$OUT/logs.tar.gz" -C "$out" .
for f in summary.txt ratio_table.txt conv_direction_ratios.txt anchor_subset.json bench_resnet50_mb256.txt side_by_side_r50.json \
         side_by_side_memory_bound.json; do
  [ -f "$out/$f" ] && cp "$out/$f" "$OUT/"
done
echo
echo "=== summary ==="
cat "$out/summary.txt"
[ -f "$out/ratio_table.txt" ] && cat "$out/ratio_table.txt"
[ -f "$out/conv_direction_ratios.txt" ] && cat "$out/conv_direction_ratios.txt"
[ -f "$out/ncu_summary.txt" ] && cat "$out/ncu_summary.txt"
exit 0
