// The persistent RNN forward: every step of one layer in one cooperative launch (the why, the
// plan and the index arithmetic are in rnn_persistent_layout.hpp). Per step each block
//   1. multiplies h_{t-1} of its batch rows by its slice of R (staged once, for the whole
//      sequence) on the tensor cores: persistent_block_product (rnn_persistent_product.cuh),
//      which streams h from L2 (other blocks wrote it);
//   2. runs the cell (forward_unit, the stepwise cell kernel's own code) for its units, one
//      thread per unit for the whole sequence, so the LSTM cell state and the GRU's h_{t-1} a
//      thread reads are the ones it wrote itself;
//   3. waits at the grid-wide barrier (cooperative groups; it also orders the writes of h_t
//      before every block's next reads).
// Inference keeps h in two slots used in turn (slot_mask 1): a block still reading h_{t-1} must not
// see another block's h_t. Training writes every step's state into its own reserve slot anyway.
#include "cuda_errors.hpp"
#include "element_types.cuh"
#include "rnn_persistent.hpp"
#include "rnn_persistent_product.cuh"

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace tessera::cuda::rnn {
namespace {

namespace cg = cooperative_groups;

template <typename T>
struct persistent_args {
  persistent_plan plan;
  forward_step<T> step;
  const T* recurrent_weights;  // R of direction 0: row (gate g, unit j) = g * H + j, H long
  int64_t weights_dir;         // elements between the directions' R
  int32_t has_hx;
};

template <typename T, int Cell, int Threads>
__global__ void __launch_bounds__(Threads, 1) rnn_persistent_forward(persistent_args<T> a) {
  constexpr int G = gates_of<Cell>();
  extern __shared__ __align__(16) unsigned char shared[];
  const persistent_plan& p = a.plan;
  T* weights = reinterpret_cast<T*>(shared + p.weights_offset);
  T* state = reinterpret_cast<T*>(shared + p.state_offset);
  float* products = reinterpret_cast<float*>(shared + p.products_offset);
  const persistent_block block = persistent_block_of(p, static_cast<int32_t>(blockIdx.x));
  const int tid = static_cast<int>(threadIdx.x);
  const int32_t H = p.H;
  const int32_t rows = min(p.batch_rows, p.N - block.n0);
  const int32_t units = min(p.units, H - block.j0);

  // R's gate rows of the block's units, once for the sequence.
  persistent_stage_weights<Threads>(p, block, a.recurrent_weights + block.d * a.weights_dir, weights, state, tid);
  __syncthreads();

  cg::grid_group grid = cg::this_grid();
  const forward_step<T>& st = a.step;
  const T* own_rows = st.hs + block.d * st.hs_dir + int64_t{block.n0} * H;
  for (int64_t s = 0; s < st.steps; ++s) {
    const int64_t t = block.d == 0 ? s : st.steps - 1 - s;
    const bool recurrent = s > 0 || a.has_hx != 0;
    if (recurrent)
      persistent_block_product<Threads>(p, weights, state, products, own_rows + ((t + block.d) & st.slot_mask) * st.hs_slot, rows,
                               tid);
    __syncthreads();

    // The cell: the same thread owns the same unit at every step.
    const bool final_step = s + 1 == st.steps;
    for (int32_t i = tid; i < rows * p.units; i += Threads) {
      const int32_t r = i / p.units, u = i % p.units;
      if (u >= units) continue;
      float rh[G];
#pragma unroll
      for (int g = 0; g < G; ++g)
        rh[g] = recurrent ? persistent_product(p, products, r, persistent_gate_column(p, g, u)) : 0.0f;
      forward_unit<T, Cell>(st, block.d, block.n0 + r, block.j0 + u, s, rh, final_step);
    }
    if (!final_step) grid.sync();
  }
}

struct forward_kernels {
  template <typename T, int Cell, int Threads>
  static const void* kernel() {
    return reinterpret_cast<const void*>(&rnn_persistent_forward<T, Cell, Threads>);
  }
};

template <typename T>
const void* persistent_kernel(int32_t cell, int32_t threads) {
  return kernel_for_cell<forward_kernels, T>(cell, threads);
}

}  // namespace

template <typename T>
bool persistent_forward_fits_device(const cuda_context& ctx, const persistent_plan& plan, int32_t cell) {
  return persistent_grid_fits(ctx, plan, persistent_kernel<T>(cell, persistent_block_threads(plan)));
}

template <typename T>
bool launch_persistent_forward(const cuda_context& ctx, const persistent_plan& plan, int32_t cell,
                               const forward_step<T>& step, const T* recurrent_weights, int64_t weights_dir,
                               bool has_hx) {
  persistent_args<T> args{plan, step, recurrent_weights, weights_dir, has_hx ? 1 : 0};
  void* params[] = {&args};
  return launch_cooperative(ctx, plan, persistent_kernel<T>(cell, persistent_block_threads(plan)), params, "launching the persistent RNN forward");
}

template bool persistent_forward_fits_device<__half>(const cuda_context&, const persistent_plan&, int32_t);
template bool persistent_forward_fits_device<__nv_bfloat16>(const cuda_context&, const persistent_plan&, int32_t);
template bool launch_persistent_forward<__half>(const cuda_context&, const persistent_plan&, int32_t,
                                                const forward_step<__half>&, const __half*, int64_t, bool);
template bool launch_persistent_forward<__nv_bfloat16>(const cuda_context&, const persistent_plan&, int32_t,
                                                       const forward_step<__nv_bfloat16>&, const __nv_bfloat16*,
                                                       int64_t, bool);

}  // namespace tessera::cuda::rnn
