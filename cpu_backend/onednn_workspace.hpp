// Carving the caller's workspace into the buffers a plan needs, so that no memory is allocated
// while a kernel runs: staging buffers for reorders and oneDNN's own scratchpad (primitives are
// created with scratchpad_mode::user).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>

namespace tessera::onednn {

constexpr size_t workspace_alignment = 64;

class workspace_layout {
 public:
  // Reserves `bytes` and returns the offset (from the aligned base) of the reservation.
  size_t reserve(size_t bytes) noexcept {
    const size_t offset = end_;
    end_ += (bytes + workspace_alignment - 1) / workspace_alignment * workspace_alignment;
    return offset;
  }
  // What to report as workspace_size: the reservations plus room to align an unaligned base
  // (the host's workspace pointer carries no alignment promise).
  size_t required_bytes() const noexcept { return end_ == 0 ? 0 : end_ + workspace_alignment - 1; }

 private:
  size_t end_ = 0;
};

inline void* workspace_at(void* base, size_t offset) noexcept {
  const uintptr_t aligned =
      (reinterpret_cast<uintptr_t>(base) + workspace_alignment - 1) & ~(workspace_alignment - 1);
  return reinterpret_cast<void*>(aligned + offset);
}

// Attributes every primitive of this plugin starts from.
inline dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

inline size_t scratchpad_bytes(const dnnl::primitive_desc_base& pd) {
  return pd.scratchpad_desc().get_size();
}

// oneDNN's reference implementations ("ref:any") are correct but slow; the kernels try other
// layouts before settling for one.
inline bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  const char* impl = pd.impl_info_str();
  return impl != nullptr && impl[0] == 'r' && impl[1] == 'e' && impl[2] == 'f';
}

}  // namespace tessera::onednn
