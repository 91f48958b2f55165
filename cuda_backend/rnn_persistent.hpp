// The persistent RNN kernels, every step of one layer in one cooperative launch, fp16 and bf16
// storage: the forward (rnn_persistent.cu) and backward data (rnn_persistent_backward.cu); plan
// and layout in rnn_persistent_layout.hpp, their shared product in rnn_persistent_product.cuh.
// Used by the RNN operations of rnn_kernels.cu for the kernels "rnn_fwd_inference_persistent",
// "rnn_fwd_training_persistent" and "rnn_bwd_data_persistent".
#pragma once

#include "cuda_context.hpp"
#include "cuda_errors.hpp"
#include "rnn_cell_kernels.cuh"
#include "rnn_persistent_layout.hpp"

#include <cstdint>
#include <string>

namespace tessera::cuda::rnn {

// The instantiation for `cell` and a block of `threads` of a kernel templated on the storage type,
// the cell mode and the block size: Family::template kernel<T, Cell, Threads>() returns its address.
template <typename Family, typename T, int Cell>
const void* kernel_for_threads(int32_t threads) {
  return threads == 32 * persistent_max_warps ? Family::template kernel<T, Cell, 32 * persistent_max_warps>()
                                              : Family::template kernel<T, Cell, persistent_threads>();
}

template <typename Family, typename T>
const void* kernel_for_cell(int32_t cell, int32_t threads) {
  switch (cell) {
    case TSRP_RNN_RELU: return kernel_for_threads<Family, T, TSRP_RNN_RELU>(threads);
    case TSRP_RNN_TANH: return kernel_for_threads<Family, T, TSRP_RNN_TANH>(threads);
    case TSRP_RNN_LSTM: return kernel_for_threads<Family, T, TSRP_RNN_LSTM>(threads);
    case TSRP_RNN_GRU: return kernel_for_threads<Family, T, TSRP_RNN_GRU>(threads);
    default: throw status_error(TSRP_STATUS_INTERNAL_ERROR, "unknown RNN cell mode " + std::to_string(cell));
  }
}

// Whether the current device can hold the plan's grid of `kernel` resident at once (cooperative
// launch, the plan's shared memory within the device's opt-in size, enough SMs); raises the
// kernel's shared-memory limit to the device's opt-in size as a side effect. Asked of the driver
// once per context for each kernel, block size and shared memory, then remembered
// (rnn_persistent_launch.cu).
bool persistent_grid_fits(const cuda_context& ctx, const persistent_plan& plan, const void* kernel);

// Launches `kernel` on the plan's grid as a cooperative kernel (also in stream capture: a
// cooperative kernel node). False when the device refuses it as too large (nothing launched);
// other failures throw, naming `what`.
bool launch_cooperative(const cuda_context& ctx, const persistent_plan& plan, const void* kernel, void** params,
                        const char* what);

// Whether the current device can hold the plan's grid resident at once (cooperative launch and
// enough SMs at the plan's shared memory); asked at each call, before the workspace's state layout
// is chosen (the driver only once per context: persistent_grid_fits). Sets the kernels'
// shared-memory limit as a side effect.
template <typename T>
bool persistent_forward_fits_device(const cuda_context& ctx, const persistent_plan& plan, int32_t cell);

// Runs every step of one layer: `step` as for the stepwise cell kernel (slot_mask 1 for inference,
// -1 for training; hy/cy set for the final step), `recurrent_weights` R of direction 0 of the
// layer, direction d at + d * weights_dir. Without hx the first step's products are zero. False
// when the device refuses the cooperative launch as too large (nothing was launched; the caller
// runs the layer stepwise); other failures throw.
template <typename T>
bool launch_persistent_forward(const cuda_context& ctx, const persistent_plan& plan, int32_t cell,
                               const forward_step<T>& step, const T* recurrent_weights, int64_t weights_dir,
                               bool has_hx);

// As persistent_forward_fits_device, for the backward data kernel.
template <typename T>
bool persistent_backward_fits_device(const cuda_context& ctx, const persistent_plan& plan, int32_t cell);

// Backward data's recurrent part of one layer, steps T-1 .. 0: `step` as for the stepwise cell
// kernel (dh holding dL/dh of the last step, parts null), `recurrent_weights` R of direction 0
// of the layer, direction d at + d * weights_dir. With want_dhx the last product (dL/dh_{-1}) is
// added into dh as the stepwise kernels leave it. False when the device refuses the launch.
template <typename T>
bool launch_persistent_backward(const cuda_context& ctx, const persistent_plan& plan, int32_t cell,
                                const backward_step<T>& step, const T* recurrent_weights, int64_t weights_dir,
                                bool want_dhx);

}  // namespace tessera::cuda::rnn
