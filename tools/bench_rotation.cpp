#include "bench_rotation.hpp"

#include <algorithm>
#include <cmath>

namespace tessera::tools {

tensor_rotation::tensor_rotation(std::initializer_list<const reference::host_tensor*> inputs,
                                 const bench_settings& settings) {
  const double budget_mb = settings.rotate_mb;
  const bool timed = settings.mode & mode_performance;
  double bytes = 0;
  for (const reference::host_tensor* t : inputs) bytes += static_cast<double>(t->byte_size());
  if (!timed || budget_mb <= 0 || bytes <= 0) return;
  const double wanted = std::ceil(budget_mb * 1e6 / bytes);
  copies_ = static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(max_copies)));
}

size_t tensor_rotation::copy_stride(size_t bytes) {
  constexpr size_t alignment = 256;  // cudaMalloc's
  return (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace tessera::tools
