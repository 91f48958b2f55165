// A reorder between a user tensor and a staging buffer. The final step of a staged plan also
// applies Tessera's alpha/beta: dst = alpha * src + beta * dst, with alpha as a runtime source
// scale and beta as a sum post-op, which is added only when beta != 0 so dst is not read then.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>

namespace tessera::onednn {

struct reorder_step {
  dnnl::reorder::primitive_desc pd;
  dnnl::reorder primitive;  // created by instantiate(); plans built to answer queries have none
  bool scaled = false;
  float scale = 1.0f;

  // src/dst are the memories to read and write; `scratchpad` points to the plan's shared
  // scratchpad region (at least pd's scratchpad size).
  void instantiate() { primitive = dnnl::reorder(pd); }
  void execute(dnnl::stream& stream, const dnnl::memory& src, const dnnl::memory& dst,
               void* scratchpad) const;
};

// Throws dnnl::error when oneDNN cannot reorder between the two descs.
reorder_step make_reorder_step(const dnnl::engine& engine, const dnnl::memory::desc& src,
                               const dnnl::memory::desc& dst, float alpha, float beta);

}  // namespace tessera::onednn
