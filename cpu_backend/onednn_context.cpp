#include "onednn_context.hpp"

#include "onednn_errors.hpp"

#include <string>

namespace tessera::onednn {

namespace {
dnnl::engine make_cpu_engine() {
  if (dnnl::engine::get_count(dnnl::engine::kind::cpu) == 0)
    throw plugin_error(TSRP_STATUS_DEVICE_ERROR, "oneDNN reports no CPU engine");
  try {
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  } catch (const dnnl::error& e) {
    throw plugin_error(TSRP_STATUS_DEVICE_ERROR,
                       std::string("oneDNN CPU engine creation failed: ") + e.what());
  }
}
}  // namespace

context::context(int32_t device_ordinal) {
  if (device_ordinal != 0)
    throw plugin_error(TSRP_STATUS_BAD_PARAM, "the oneDNN plugin has one CPU device (ordinal 0), not " +
                                                  std::to_string(device_ordinal));
  engine_ = make_cpu_engine();
  try {
    stream_ = dnnl::stream(engine_);
  } catch (const dnnl::error& e) {
    throw plugin_error(TSRP_STATUS_DEVICE_ERROR,
                       std::string("oneDNN CPU stream creation failed: ") + e.what());
  }
}

dnnl::engine& query_engine() {
  // Function-local static: created on first use, thread-safe, and a failure is retried on the
  // next call because the initializer throws.
  static dnnl::engine engine = make_cpu_engine();
  return engine;
}

namespace {

tsrpStatus_t context_create(int32_t device_ordinal, void** handle, char* message,
                            size_t message_size) {
  return guard("oneDNN context creation", message, message_size, [&] {
    if (handle == nullptr) throw_bad_param("context creation: null output pointer");
    *handle = new context(device_ordinal);
    return TSRP_STATUS_SUCCESS;
  });
}

void context_destroy(void* handle) {
  // A destructor of engine/stream that throws would be a oneDNN bug; it must still not escape.
  try {
    delete static_cast<context*>(handle);
  } catch (...) {
  }
}

tsrpStatus_t context_set_stream(void* handle, void* /*stream*/) {
  // The CPU has no user streams: a handle's work always runs on the context's own oneDNN stream.
  return handle == nullptr ? TSRP_STATUS_BAD_PARAM : TSRP_STATUS_SUCCESS;
}

const tsrpContextInterface g_context_interface = {
    sizeof(tsrpContextInterface), context_create, context_destroy, context_set_stream};

}  // namespace

const tsrpContextInterface& context_interface() noexcept { return g_context_interface; }

}  // namespace tessera::onednn
