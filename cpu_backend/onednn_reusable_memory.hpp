// A plan's oneDNN memory objects, made on a plan's first call and re-pointed on every later one
// (set_data_handle, which the oneDNN documentation defines as the constructor's own
// initialisation) instead of being constructed per call: each dnnl::memory construction, each
// descriptor query of a primitive descriptor and the argument map's nodes are heap allocations,
// and a forward convolution made five memories and a map per call. perf on the small convolution
// of tessera_overhead_benchmark (2026-12-03) put malloc/free and dnnl_memory's constructor at
// ~1 us of the ~3.4 us Tessera added to it.
//
// Not thread-safe, like the primitive cache that holds the plan: a context belongs to one handle,
// which Tessera uses from one thread at a time (the per-handle lock).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <type_traits>

namespace tessera::onednn {

class reusable_memory {
 public:
  // The memory of `describe` on `engine`, now pointing at `data`. `describe` is a descriptor or
  // a callable returning one (for descriptors a primitive descriptor is queried for: asked on the
  // first call only). A plan's slot never changes its descriptor, so the first call's is kept.
  template <typename Describe>
  dnnl::memory& bind(const Describe& describe, const dnnl::engine& engine, void* data) {
    if (memory_) {
      memory_.set_data_handle(data);
    } else if constexpr (std::is_invocable_v<const Describe&>) {
      memory_ = dnnl::memory(describe(), engine, data);
    } else {
      memory_ = dnnl::memory(describe, engine, data);
    }
    return memory_;
  }

 private:
  dnnl::memory memory_;
};

}  // namespace tessera::onednn
