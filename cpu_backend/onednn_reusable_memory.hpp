// A plan's oneDNN memory objects, made on a plan's first call and re-pointed on every later one
// (set_data_handle, which the oneDNN documentation defines as the constructor's own
// initialisation) instead of being constructed per call: each dnnl::memory construction and the
// argument map's nodes are heap allocations, and a forward convolution made five memories and a
// map per call. perf on the small convolution of tessera_overhead_benchmark (2026-12-03) put
// malloc/free and dnnl_memory's constructor at ~1 us of the ~3.4 us Tessera added to it.
//
// Not thread-safe, like the primitive cache that holds the plan: a context belongs to one handle,
// which Tessera uses from one thread at a time (the per-handle lock).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>

namespace tessera::onednn {

class reusable_memory {
 public:
  // The memory of `desc` on `engine`, now pointing at `data`. The descriptor of a plan's slot
  // never changes, so the first call's is kept.
  dnnl::memory& bind(const dnnl::memory::desc& desc, const dnnl::engine& engine, void* data) {
    if (!memory_) {
      memory_ = dnnl::memory(desc, engine, data);
    } else {
      memory_.set_data_handle(data);
    }
    return memory_;
  }

 private:
  dnnl::memory memory_;
};

// The execute() argument map of a plan, made once: oneDNN's C++ execute takes a map of memory
// handles, which share their objects, so re-pointing the memories re-points the map.
class reusable_arguments {
 public:
  bool ready() const noexcept { return ready_; }
  std::unordered_map<int, dnnl::memory>& map() noexcept { return args_; }
  void mark_ready() noexcept { ready_ = true; }

 private:
  std::unordered_map<int, dnnl::memory> args_;
  bool ready_ = false;
};

}  // namespace tessera::onednn
