// The persistent RNN backward data: the recurrent part of one layer, steps T-1 .. 0, in one
// cooperative launch (plan and indices in rnn_persistent_layout.hpp). Why: the stepwise backward
// launches per step a cell kernel and the GEMM dL/dh_{t-1} = dgates_t x R, which at the anchor
// LSTM's sizes is 64 x 1024 outputs over k = 4096: 16 tiles of 64 x 64 on 132 SMs, latency-bound.
// Here block b owns (direction, U hidden units, Nb batch rows) for the whole sequence: it keeps
// R's columns of its units in shared memory (all G*H rows of them), and per step
//   1. runs the cell gradient (backward_unit, the stepwise cell kernel's own code) for its units,
//      one thread per unit for the whole sequence: it reads dL/dh_t of the unit (the GRU's own
//      part left in dh by the previous step, plus the block's product of the previous step) and
//      writes the unit's gate gradients (da, dhr) and the LSTM's dL/dc in place;
//   2. waits at the grid-wide barrier, after which every block's gate gradients of the step are
//      written;
//   3. multiplies its batch rows of the step's recurrent-side gate gradients (dhr, G*H long) by
//      its columns of R (persistent_block_product: the rows stream from L2; warps share each tile
//      along K), the unit's dL/dh_{t-1} for the next step's cell.
// dh keeps the stepwise kernels' meaning between calls: on entry dL/dh of the last step (dhy),
// on exit (when dhx is wanted) dL/dh_{-1}; dc likewise. The input gradient GEMMs (dx) and dhx,
// dcx are the runner's, as for the stepwise kernels.
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
struct persistent_backward_args {
  persistent_plan plan;
  backward_step<T> step;
  const T* recurrent_weights;  // R of direction 0: G*H rows of H
  int64_t weights_dir;         // elements between the directions' R
  int32_t want_dhx;
};

template <typename T, int Cell, int Threads>
__global__ void __launch_bounds__(Threads, 1) rnn_persistent_backward(persistent_backward_args<T> a) {
  extern __shared__ __align__(16) unsigned char shared[];
  const persistent_plan& p = a.plan;
  T* weights = reinterpret_cast<T*>(shared + p.weights_offset);
  T* state = reinterpret_cast<T*>(shared + p.state_offset);
  float* products = reinterpret_cast<float*>(shared + p.products_offset);
  const persistent_block block = persistent_block_of(p, static_cast<int32_t>(blockIdx.x));
  const int tid = static_cast<int>(threadIdx.x);
  const int32_t H = p.H, N = p.N;
  const int32_t rows = min(p.batch_rows, N - block.n0);
  const int32_t units = min(p.units, H - block.j0);

  // R's columns of the block's units, once for the sequence.
  persistent_stage_weights<Threads>(p, block, a.recurrent_weights + block.d * a.weights_dir, weights, state, tid);
  __syncthreads();

  cg::grid_group grid = cg::this_grid();
  const backward_step<T>& st = a.step;
  bool have_product = false;  // the products hold dgates_{t+1} x R of the block's units
  for (int64_t s = st.steps - 1; s >= 0; --s) {
    const int64_t t = block.d == 0 ? s : st.steps - 1 - s;
    // The cell: the same thread owns the same unit at every step.
    for (int32_t i = tid; i < rows * p.units; i += Threads) {
      const int32_t r = i / p.units, u = i % p.units;
      if (u >= units) continue;
      const int64_t unit = (int64_t{block.d} * N + block.n0 + r) * H + block.j0 + u;
      float dh_later = st.dh[unit];
      if (have_product) dh_later += persistent_product(p, products, r, u);
      st.dh[unit] = backward_unit<T, Cell>(st, block.d, block.n0 + r, block.j0 + u, s, dh_later);
    }
    have_product = false;
    if (s > 0 || a.want_dhx != 0) {
      grid.sync();  // every block's gate gradients of this step are written
      const T* gradients = st.dhr + block.d * st.grad_dir + (t * N + block.n0) * int64_t{p.K};
      persistent_block_product<Threads>(p, weights, state, products, gradients, rows, tid);
      __syncthreads();
      have_product = true;
    }
  }
  // dL/dh_{-1} for dhx: the cell's own part and the last product, as the stepwise kernels leave it.
  if (have_product) {
    for (int32_t i = tid; i < rows * p.units; i += Threads) {
      const int32_t r = i / p.units, u = i % p.units;
      if (u >= units) continue;
      const int64_t unit = (int64_t{block.d} * N + block.n0 + r) * H + block.j0 + u;
      st.dh[unit] = st.dh[unit] + persistent_product(p, products, r, u);
    }
  }
}

struct backward_kernels {
  template <typename T, int Cell, int Threads>
  static const void* kernel() {
    return reinterpret_cast<const void*>(&rnn_persistent_backward<T, Cell, Threads>);
  }
};

template <typename T>
const void* persistent_backward_kernel(int32_t cell, int32_t threads) {
  return kernel_for_cell<backward_kernels, T>(cell, threads);
}

}  // namespace

template <typename T>
bool persistent_backward_fits_device(const cuda_context& ctx, const persistent_plan& plan, int32_t cell) {
  return persistent_grid_fits(ctx, plan, persistent_backward_kernel<T>(cell, persistent_block_threads(plan)));
}

template <typename T>
bool launch_persistent_backward(const cuda_context& ctx, const persistent_plan& plan, int32_t cell,
                                const backward_step<T>& step, const T* recurrent_weights, int64_t weights_dir,
                                bool want_dhx) {
  persistent_backward_args<T> args{plan, step, recurrent_weights, weights_dir, want_dhx ? 1 : 0};
  void* params[] = {&args};
  return launch_cooperative(ctx, plan, persistent_backward_kernel<T>(cell, persistent_block_threads(plan)), params,
                            "launching the persistent RNN backward data");
}

template bool persistent_backward_fits_device<__half>(const cuda_context&, const persistent_plan&, int32_t);
template bool persistent_backward_fits_device<__nv_bfloat16>(const cuda_context&, const persistent_plan&, int32_t);
template bool launch_persistent_backward<__half>(const cuda_context&, const persistent_plan&, int32_t,
                                                 const backward_step<__half>&, const __half*, int64_t, bool);
template bool launch_persistent_backward<__nv_bfloat16>(const cuda_context&, const persistent_plan&, int32_t,
                                                        const backward_step<__nv_bfloat16>&, const __nv_bfloat16*,
                                                        int64_t, bool);

}  // namespace tessera::cuda::rnn
