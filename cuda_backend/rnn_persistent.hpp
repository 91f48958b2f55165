// The persistent RNN forward (rnn_persistent.cu, plan and layout in rnn_persistent_layout.hpp):
// every step of one layer in one cooperative launch, fp16 and bf16 storage. Used by the RNN
// forward of rnn_kernels.cu for the kernels "rnn_fwd_inference_persistent" and
// "rnn_fwd_training_persistent".
#pragma once

#include "cuda_context.hpp"
#include "rnn_cell_kernels.cuh"
#include "rnn_persistent_layout.hpp"

#include <cstdint>

namespace tessera::cuda::rnn {

// Whether the current device can hold the plan's grid resident at once (cooperative launch and
// enough SMs at the plan's shared memory); asked once per call, before the workspace's state
// layout is chosen. Sets the kernels' shared-memory limit as a side effect.
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

}  // namespace tessera::cuda::rnn
