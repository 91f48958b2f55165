// Staging shared by the normalization kernels (batch, layer and RMS norm): each data tensor is
// either used in place, when the user's layout and type are exactly what the computation reads,
// or reordered into a dense buffer of the workspace; an output goes back through a reorder that
// also applies alpha/beta (see onednn_reorder_step.hpp). Header-only: three small helpers.
#pragma once

#include "onednn_memory_desc.hpp"
#include "onednn_reorder_step.hpp"
#include "onednn_workspace.hpp"

#include <tessera/plugin_abi.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <optional>

namespace tessera::onednn {

// Dense row-major (the logical order of the dims) in `data_type`: layer and RMS norm reduce over
// the trailing dims, which row-major makes one contiguous run per statistic.
inline dnnl::memory::desc make_row_major_desc(const tsrpTensor& t, dnnl::memory::data_type data_type) {
  dnnl::memory::dims dims(t.dims, t.dims + t.ndims);
  dnnl::memory::dims strides(dims.size());
  int64_t running = 1;
  for (int i = t.ndims - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = running;
    running *= std::max<int64_t>(t.dims[i], 1);
  }
  return dnnl::memory::desc(dims, data_type, strides);
}

// One data tensor of a plan: in place (no step) or staged at `offset` of the workspace.
struct staged_tensor {
  dnnl::memory::desc user;
  std::optional<reorder_step> step;  // input: user -> stage; output: stage -> user
  size_t offset = 0;
  bool staged() const { return step.has_value(); }
};

// An input read as `stage`: staged when the user's desc differs, or always when `force` (the
// kernel modifies the staged copy).
inline staged_tensor plan_input(const dnnl::engine& engine, const tsrpTensor& t,
                                const dnnl::memory::desc& stage, workspace_layout& layout,
                                bool force = false) {
  staged_tensor s;
  s.user = make_memory_desc(t);
  if (force || s.user != stage) {
    s.step = make_reorder_step(engine, s.user, stage, 1.0f, 0.0f);
    s.offset = layout.reserve(stage.get_size());
  }
  return s;
}

// An output written as `stage`: staged unless the user's desc is the stage's and alpha/beta are
// the identity blend.
inline staged_tensor plan_output(const dnnl::engine& engine, const tsrpTensor& t,
                                 const dnnl::memory::desc& stage, workspace_layout& layout,
                                 float alpha, float beta) {
  staged_tensor s;
  s.user = make_memory_desc(t);
  if (s.user != stage || alpha != 1.0f || beta != 0.0f) {
    s.step = make_reorder_step(engine, stage, s.user, alpha, beta);
    s.offset = layout.reserve(stage.get_size());
  }
  return s;
}

inline size_t step_scratchpad(const staged_tensor& s) {
  return s.step ? scratchpad_bytes(s.step->pd) : 0;
}

inline void instantiate(staged_tensor& s) {
  if (s.step) s.step->instantiate();
}

}  // namespace tessera::onednn
