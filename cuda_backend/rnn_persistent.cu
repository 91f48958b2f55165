// The persistent RNN forward: every step of one layer in one cooperative launch (the why, the
// plan and the index arithmetic are in rnn_persistent_layout.hpp). Per step each block
//   1. streams h_{t-1} of its batch rows through a ring of shared-memory chunks (cp.async.cg,
//      16-byte pieces, a chunk requested ring - 1 chunks ahead of its products; a plain __ldcg
//      copy when H is not a multiple of 8). The state was written by other blocks in the
//      previous step, so it must come from L2, never from a stale L1 line: cp.async.cg and
//      __ldcg both bypass L1;
//   2. multiplies it by its slice of R (staged once, for the whole sequence) on the tensor cores,
//      fp32 accumulators, two chains per fragment (alternate k-steps within each chunk) added at the end in a
//      fixed order;
//   3. runs the cell (forward_unit, the stepwise cell kernel's own code) for its units, one
//      thread per unit for the whole sequence, so the LSTM cell state and the GRU's h_{t-1} a
//      thread reads are the ones it wrote itself;
//   4. waits at the grid-wide barrier (cooperative groups; it also orders the writes of h_t
//      before every block's next reads).
// Inference keeps h in two slots used in turn (slot_mask 1): a block still reading h_{t-1} must not
// see another block's h_t. Training writes every step's state into its own reserve slot anyway.
#include "cuda_errors.hpp"
#include "element_types.cuh"
#include "gemm_mma_ptx.cuh"
#include "rnn_persistent.hpp"

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace tessera::cuda::rnn {
namespace {

namespace cg = cooperative_groups;
using gemm::cp_async_16;
using gemm::cp_async_commit;
using gemm::cp_async_wait;
using gemm::ldmatrix_x4;
using gemm::mma_16816;
using gemm::shared_address;

template <typename T>
struct persistent_args {
  persistent_plan plan;
  forward_step<T> step;
  const T* recurrent_weights;  // R of direction 0: row (gate g, unit j) = g * H + j, H long
  int64_t weights_dir;         // elements between the directions' R
  int32_t has_hx;
};

// cp.async.wait_group takes an immediate: wait until at most ring - 2 groups are in flight, i.e.
// the oldest chunk requested has landed.
__device__ __forceinline__ void wait_for_oldest_chunk(int32_t ring) {
  static_assert(persistent_max_ring == 4, "one case per ring size");
  if (ring == 2) {
    cp_async_wait<0>();
  } else if (ring == 3) {
    cp_async_wait<1>();
  } else {
    cp_async_wait<2>();
  }
}

// One k-step of one tile: the A fragment once (k_local within the chunk in `slot`), the two B
// fragments of the tile's 16 columns (k of R).
template <typename T>
__device__ __forceinline__ void tile_k_step(const persistent_plan& p, const T* state, const T* weights, int32_t slot,
                                            int32_t row0, int32_t col0, int32_t k_local, int32_t k, int lane,
                                            float (&left)[4], float (&right)[4]) {
  uint32_t a[4], b[4];
  ldmatrix_x4(a, shared_address(state + persistent_a_address(p, slot, row0, k_local, lane)));
  ldmatrix_x4(b, shared_address(weights + persistent_b_address(p, col0, k, lane)));
  mma_16816<T>(left, a, b[0], b[1]);
  mma_16816<T>(right, a, b[2], b[3]);
}

template <typename T, int Cell>
__global__ void __launch_bounds__(persistent_threads, 1) rnn_persistent_forward(persistent_args<T> a) {
  constexpr int G = gates_of<Cell>();
  extern __shared__ __align__(16) unsigned char shared[];
  const persistent_plan& p = a.plan;
  T* weights = reinterpret_cast<T*>(shared + p.weights_offset);
  T* state = reinterpret_cast<T*>(shared + p.state_offset);
  float* gates = reinterpret_cast<float*>(shared + p.gates_offset);
  const persistent_block block = persistent_block_of(p, static_cast<int32_t>(blockIdx.x));
  const int tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int32_t H = p.H;
  const int32_t rows = min(p.batch_rows, p.N - block.n0);
  const int32_t units = min(p.units, H - block.j0);
  const T zero = from_float<T>(0.0f);

  // R's slice, once for the sequence; zeros past H, past the block's units and past G * U columns.
  const T* R = a.recurrent_weights + block.d * a.weights_dir;
  for (int32_t i = tid; i < p.gate_cols * p.kp; i += persistent_threads) {
    const int32_t c = i / p.kp, k = i % p.kp;
    const int64_t row = persistent_weight_row(p, block, c);
    weights[c * p.pitch + k] = row >= 0 && k < H ? R[row * H + k] : zero;
  }
  // The state's rows past the block's batch rows stay zero (the staging never writes them; a zero
  // row of A keeps NaN out of the padded products); its k past H are zeroed by each request.
  for (int32_t i = tid; i < p.slots * p.rows16 * p.chunk_pitch; i += persistent_threads) state[i] = zero;
  __syncthreads();

  cg::grid_group grid = cg::this_grid();
  const forward_step<T>& st = a.step;
  const bool vector_state = H % 8 == 0;
  const T* own_rows = st.hs + block.d * st.hs_dir + int64_t{block.n0} * H;
  for (int64_t s = 0; s < st.steps; ++s) {
    const int64_t t = block.d == 0 ? s : st.steps - 1 - s;
    const bool recurrent = s > 0 || a.has_hx != 0;
    if (recurrent) {
      const T* h_prev = own_rows + ((t + block.d) & st.slot_mask) * st.hs_slot;
      // Chunk c of h_{t-1} into its ring slot: 16-byte cp.async (zeros stored for the pieces past
      // H) where H is a multiple of 8, else element copies; nothing past the last chunk.
      auto request = [&](int32_t c) {
        if (c >= p.chunks) return;
        int32_t k_begin, k_end;
        persistent_chunk_range(p, c, k_begin, k_end);
        const int32_t slot = persistent_chunk_slot(p, c);
        if (vector_state) {
          const int32_t pieces = (k_end - k_begin) / 8;
          for (int32_t i = tid; i < rows * pieces; i += persistent_threads) {
            const int32_t r = i / pieces, k = k_begin + (i % pieces) * 8;
            T* piece = state + persistent_state_index(p, slot, r, k - k_begin);
            if (k < H) {
              cp_async_16(shared_address(piece), h_prev + int64_t{r} * H + k, 16);
            } else {
              *reinterpret_cast<uint4*>(piece) = make_uint4(0u, 0u, 0u, 0u);
            }
          }
        } else {
          const int32_t width = k_end - k_begin;
          for (int32_t i = tid; i < rows * width; i += persistent_threads) {
            const int32_t r = i / width, k = k_begin + i % width;
            state[persistent_state_index(p, slot, r, k - k_begin)] = k < H ? __ldcg(h_prev + int64_t{r} * H + k) : zero;
          }
        }
      };
      for (int32_t c = 0; c + 1 < p.ring; ++c) {
        request(c);
        cp_async_commit();
      }

      float acc[persistent_tiles_per_warp][2][2][4] = {};  // [tile][8 columns][alternate k-steps of a chunk]
      for (int32_t c = 0; c < p.chunks; ++c) {
        // Chunk c landed (this thread's copies) and every thread's copies and element stores are
        // visible; every warp is done with chunk c - 1, whose slot the next request takes.
        wait_for_oldest_chunk(p.ring);
        __syncthreads();
        request(c + p.ring - 1);
        cp_async_commit();
        int32_t k_begin, k_end;
        persistent_chunk_range(p, c, k_begin, k_end);
        const int32_t slot = persistent_chunk_slot(p, c);
#pragma unroll
        for (int lt = 0; lt < persistent_tiles_per_warp; ++lt) {
          int32_t row0, col0;
          if (!persistent_warp_tile(p, warp, lt, row0, col0)) break;
          for (int32_t k = k_begin; k < k_end; k += 32) {
            tile_k_step(p, state, weights, slot, row0, col0, k - k_begin, k, lane, acc[lt][0][0], acc[lt][1][0]);
            if (k + 16 < k_end)
              tile_k_step(p, state, weights, slot, row0, col0, k + 16 - k_begin, k + 16, lane, acc[lt][0][1],
                          acc[lt][1][1]);
          }
        }
      }
      cp_async_wait<0>();  // only empty groups can be left; none may carry into the next step
#pragma unroll
      for (int lt = 0; lt < persistent_tiles_per_warp; ++lt) {
        int32_t row0, col0;
        if (!persistent_warp_tile(p, warp, lt, row0, col0)) break;
#pragma unroll
        for (int half = 0; half < 2; ++half)
#pragma unroll
          for (int reg = 0; reg < 4; ++reg)
            gates[persistent_gate_index(p, row0, col0 + 8 * half, lane, reg)] =
                acc[lt][half][0][reg] + acc[lt][half][1][reg];
      }
    }
    __syncthreads();

    // The cell: the same thread owns the same unit at every step.
    const bool final_step = s + 1 == st.steps;
    for (int32_t i = tid; i < rows * p.units; i += persistent_threads) {
      const int32_t r = i / p.units, u = i % p.units;
      if (u >= units) continue;
      float rh[G];
#pragma unroll
      for (int g = 0; g < G; ++g) rh[g] = recurrent ? gates[r * p.gates_pitch + persistent_gate_column(p, g, u)] : 0.0f;
      forward_unit<T, Cell>(st, block.d, block.n0 + r, block.j0 + u, s, rh, final_step);
    }
    if (!final_step) grid.sync();
  }
}

template <typename T>
const void* persistent_kernel(int32_t cell) {
  switch (cell) {
    case TSRP_RNN_RELU: return reinterpret_cast<const void*>(&rnn_persistent_forward<T, TSRP_RNN_RELU>);
    case TSRP_RNN_TANH: return reinterpret_cast<const void*>(&rnn_persistent_forward<T, TSRP_RNN_TANH>);
    case TSRP_RNN_LSTM: return reinterpret_cast<const void*>(&rnn_persistent_forward<T, TSRP_RNN_LSTM>);
    case TSRP_RNN_GRU: return reinterpret_cast<const void*>(&rnn_persistent_forward<T, TSRP_RNN_GRU>);
    default: throw status_error(TSRP_STATUS_INTERNAL_ERROR, "unknown RNN cell mode " + std::to_string(cell));
  }
}

}  // namespace

template <typename T>
bool persistent_forward_fits_device(const cuda_context& ctx, const persistent_plan& plan, int32_t cell) {
  int cooperative = 0;
  check_cuda(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, ctx.device_ordinal()),
             "cudaDeviceGetAttribute(cooperative launch)");
  if (cooperative == 0) return false;
  // A device with less shared memory per block than the plan: not an error, the stepwise kernels
  // run instead. The kernel's limit is raised to the device's whole opt-in size, the same value
  // for every plan, so that calls on other threads never lower it under a launch in flight.
  int optin = 0;
  check_cuda(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device_ordinal()),
             "cudaDeviceGetAttribute(shared memory per block, opt-in)");
  if (plan.shared_bytes > static_cast<size_t>(optin)) return false;
  const void* kernel = persistent_kernel<T>(cell);
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin),
             "cudaFuncSetAttribute(max dynamic shared memory) of the persistent RNN forward");
  int per_sm = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, persistent_threads, plan.shared_bytes),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor of the persistent RNN forward");
  return int64_t{per_sm} * ctx.sm_count() >= plan.blocks;
}

template <typename T>
bool launch_persistent_forward(const cuda_context& ctx, const persistent_plan& plan, int32_t cell,
                               const forward_step<T>& step, const T* recurrent_weights, int64_t weights_dir,
                               bool has_hx) {
  persistent_args<T> args{plan, step, recurrent_weights, weights_dir, has_hx ? 1 : 0};
  void* params[] = {&args};
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned int>(plan.blocks));
  config.blockDim = dim3(persistent_threads);
  config.dynamicSmemBytes = plan.shared_bytes;
  config.stream = ctx.stream();
  // Cooperative: every block resident at once (checked by persistent_forward_fits_device), which
  // the grid barrier needs; valid in stream capture (a cooperative kernel node).
  cudaLaunchAttribute cooperative = {};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  const cudaError_t launched = cudaLaunchKernelExC(&config, persistent_kernel<T>(cell), params);
  if (launched == cudaErrorCooperativeLaunchTooLarge) {
    (void)cudaGetLastError();  // not sticky: clear it so later launches do not report it
    return false;
  }
  check_cuda(launched, "launching the persistent RNN forward");
  return true;
}

template bool persistent_forward_fits_device<__half>(const cuda_context&, const persistent_plan&, int32_t);
template bool persistent_forward_fits_device<__nv_bfloat16>(const cuda_context&, const persistent_plan&, int32_t);
template bool launch_persistent_forward<__half>(const cuda_context&, const persistent_plan&, int32_t,
                                                const forward_step<__half>&, const __half*, int64_t, bool);
template bool launch_persistent_forward<__nv_bfloat16>(const cuda_context&, const persistent_plan&, int32_t,
                                                       const forward_step<__nv_bfloat16>&, const __nv_bfloat16*,
                                                       int64_t, bool);

}  // namespace tessera::cuda::rnn
