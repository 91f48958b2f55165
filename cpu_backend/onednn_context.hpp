// Per-handle state: a oneDNN CPU engine and stream, and the handle's primitive cache.
#pragma once

#include "onednn_primitive_cache.hpp"

#include <tessera/plugin_abi.h>

#include "onednn_constant_weights.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>

namespace tessera::onednn {

class context {
 public:
  // Throws plugin_error (with a message saying what failed) if the engine or stream cannot be
  // created.
  explicit context(int32_t device_ordinal);

  dnnl::engine& engine() noexcept { return engine_; }
  dnnl::stream& stream() noexcept { return stream_; }
  primitive_cache& cache() noexcept { return cache_; }
  constant_weights_cache& constant_weights() noexcept { return constant_weights_; }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  primitive_cache cache_;
  constant_weights_cache constant_weights_;
};

// The void* the host holds is a context*.
inline context& as_context(void* handle) noexcept { return *static_cast<context*>(handle); }

// A process-wide CPU engine for questions asked without a context (can_implement,
// workspace_size): primitive descriptors only depend on the engine kind, and all CPU engines
// are alike. Throws plugin_error if it cannot be created.
dnnl::engine& query_engine();

const tsrpContextInterface& context_interface() noexcept;

}  // namespace tessera::onednn
