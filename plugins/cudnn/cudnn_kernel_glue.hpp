// The C side of every kernel, written once: a family file describes a kernel with a traits type
// and a kernel_spec (its name, operation, flags, notes and the cuDNN algorithm it wraps), and
// make_kernel() turns them into the tsrpKernel the host sees.
//
// Lifecycle (CUTLASS's, as the ABI asks):
//   can_implement  the traits' static rules, then "is there a CUDA device", then cuDNN itself is
//                  asked with the process-wide query handle (descriptors built, workspace size
//                  queried). cuDNN's refusal is the reason, with its status and message. Answers
//                  are pure functions of the problem and are remembered.
//   workspace_size what cuDNN said for this problem (plus the plugin's own staging buffers).
//   run            the prepared descriptors of this (kernel, problem) from the handle's context
//                  (built once with the context's cuDNN handle), then the cuDNN call on the
//                  context's stream. No allocation and no synchronisation: graph-capturable.
//
// A traits type provides (all static):
//   using problem_type, args_type, prepared_type (derived from prepared_problem);
//   std::string support(const problem_type&, const kernel_spec&);       // "" = plausible
//   std::unique_ptr<prepared_type> prepare(cudnnHandle_t, const problem_type&, const kernel_spec&);
//   void run(cudnnHandle_t, const prepared_type&, const problem_type&, const args_type&,
//            const kernel_spec&, void* workspace, size_t workspace_bytes);
#pragma once

#include "cuda_device_scope.hpp"
#include "cudnn_context.hpp"
#include "cudnn_errors.hpp"

#include <tessera/plugin_abi.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::cudnn_plugin {

struct kernel_spec {
  const char* name;     // "cudnn_conv_fwd_implicit_precomp_gemm"
  int32_t operation;    // tsrpOperation_t
  uint32_t flags;       // TSRP_KERNEL_DETERMINISTIC per cuDNN's documentation of the algorithm
  const char* notes;    // numerical notes shown to users
  int algorithm;        // the cuDNN algorithm (or family-specific variant) this kernel runs
};

using kernel_list = std::vector<tsrpKernel>;

// Throws BAD_PARAM naming the argument when a pointer the call needs is null.
inline void require_pointer(const void* pointer, const char* name) {
  if (pointer == nullptr) throw plugin_error(TSRP_STATUS_BAD_PARAM, std::string(name) + " is null");
}

// What can_implement learned of one (kernel, problem): remembered process-wide, so that
// workspace_size and every handle asking again get the same answer without asking cuDNN again.
struct verdict {
  bool can_run = false;
  std::string reason;
  size_t workspace_bytes = 0;
};

// Looks a verdict up, or computes and stores it with `compute`.
verdict cached_verdict(const std::string& key, const std::function<verdict()>& compute);

namespace glue_detail {

// Copies a size-prefixed struct, zero-extending a shorter (older) one as the ABI prescribes.
template <typename T>
bool read_struct(const void* source, T* out) {
  if (source == nullptr) return false;
  size_t given = 0;
  std::memcpy(&given, source, sizeof(given));
  if (given < sizeof(size_t)) return false;
  *out = T{};
  std::memcpy(static_cast<void*>(out), source, given < sizeof(T) ? given : sizeof(T));
  out->struct_size = sizeof(T);
  return true;
}

template <typename Traits>
verdict judge(const kernel_spec& spec, const typename Traits::problem_type& p) {
  verdict v;
  v.reason = Traits::support(p, spec);
  if (!v.reason.empty()) return v;
  std::string why_none;
  if (cuda_device_count(&why_none) == 0) {
    v.reason = "no CUDA device present (" + why_none + ")";
    return v;
  }
  return cached_verdict(problem_key(&spec, &p, sizeof(p)), [&] {
    verdict asked;
    try {
      with_query_handle([&](cudnnHandle_t handle) {
        asked.workspace_bytes = Traits::prepare(handle, p, spec)->workspace_bytes;
      });
      asked.can_run = true;
    } catch (const plugin_error& e) {
      asked.reason = e.what();
    } catch (const std::exception& e) {
      asked.reason = std::string("internal error while asking cuDNN: ") + e.what();
    }
    return asked;
  });
}

template <typename Traits>
int can_implement(void* user_data, const void* problem, char* reason, size_t reason_size) noexcept {
  const kernel_spec& spec = *static_cast<const kernel_spec*>(user_data);
  try {
    typename Traits::problem_type p;
    verdict v;
    if (!read_struct(problem, &p)) v.reason = "problem is null or has no struct_size";
    else v = judge<Traits>(spec, p);
    if (v.can_run) return 1;
    write_text(reason, reason_size, std::string(spec.name) + ": " + v.reason);
  } catch (const std::exception& e) {
    write_text(reason, reason_size, std::string(spec.name) + ": " + e.what());
  } catch (...) {
    write_text(reason, reason_size, std::string(spec.name) + ": internal error while checking the problem");
  }
  return 0;
}

template <typename Traits>
tsrpStatus_t workspace_size(void* user_data, const void* problem, size_t* bytes) noexcept {
  const kernel_spec& spec = *static_cast<const kernel_spec*>(user_data);
  if (bytes == nullptr) return TSRP_STATUS_BAD_PARAM;
  try {
    typename Traits::problem_type p;
    if (!read_struct(problem, &p)) return TSRP_STATUS_BAD_PARAM;
    const verdict v = judge<Traits>(spec, p);
    if (!v.can_run) return TSRP_STATUS_NOT_SUPPORTED;
    *bytes = v.workspace_bytes;
    return TSRP_STATUS_SUCCESS;
  } catch (...) {
    return TSRP_STATUS_INTERNAL_ERROR;
  }
}

template <typename Traits>
tsrpStatus_t run(void* user_data, void* context, const void* problem, const void* args, void* workspace,
                 size_t workspace_bytes, char* message, size_t message_size) noexcept {
  const kernel_spec& spec = *static_cast<const kernel_spec*>(user_data);
  try {
    cudnn_context& ctx = context_from(context);
    typename Traits::problem_type p;
    typename Traits::args_type a;
    if (!read_struct(problem, &p) || !read_struct(args, &a))
      throw plugin_error(TSRP_STATUS_BAD_PARAM, "problem or arguments are null or have no struct_size");
    // The host asked can_implement first; checking the static rules again costs little and
    // keeps an explicit call from running a problem the kernel would compute wrongly.
    const std::string why = Traits::support(p, spec);
    if (!why.empty()) throw plugin_error(TSRP_STATUS_NOT_SUPPORTED, why);
    device_scope on_device(ctx.device_ordinal());
    auto prepared = ctx.prepared(&spec, &p, sizeof(p), [&](cudnnHandle_t handle) {
      return std::unique_ptr<prepared_problem>(Traits::prepare(handle, p, spec));
    });
    const auto& ready = static_cast<const typename Traits::prepared_type&>(*prepared);
    if (ready.workspace_bytes > 0 && (workspace == nullptr || workspace_bytes < ready.workspace_bytes))
      throw plugin_error(TSRP_STATUS_BAD_PARAM, "workspace of " + std::to_string(workspace_bytes) +
                                                    " bytes is smaller than the " +
                                                    std::to_string(ready.workspace_bytes) + " it needs");
    Traits::run(ctx.handle(), ready, p, a, spec, workspace, workspace_bytes);
    return TSRP_STATUS_SUCCESS;
  } catch (const plugin_error& e) {
    write_text(message, message_size, std::string(spec.name) + ": " + e.what());
    return e.status();
  } catch (const std::exception& e) {
    write_text(message, message_size, std::string(spec.name) + ": " + e.what());
    return TSRP_STATUS_INTERNAL_ERROR;
  } catch (...) {
    write_text(message, message_size, std::string(spec.name) + ": unknown exception");
    return TSRP_STATUS_INTERNAL_ERROR;
  }
}

}  // namespace glue_detail

template <typename Traits>
tsrpKernel make_kernel(const kernel_spec& spec) noexcept {
  tsrpKernel k{};
  k.struct_size = sizeof(tsrpKernel);
  k.name = spec.name;
  k.operation = spec.operation;
  k.flags = spec.flags;
  k.notes = spec.notes;
  k.user_data = const_cast<kernel_spec*>(&spec);  // read only; the ABI's user_data is void*
  k.can_implement = glue_detail::can_implement<Traits>;
  k.workspace_size = glue_detail::workspace_size<Traits>;
  k.run = glue_detail::run<Traits>;
  return k;
}

// Adds one kernel per spec, in the specs' order (best first, as the ABI's table order means).
template <typename Traits, size_t N>
void add_kernels(kernel_list& list, const kernel_spec (&specs)[N]) {
  for (const kernel_spec& spec : specs) list.push_back(make_kernel<Traits>(spec));
}

}  // namespace tessera::cudnn_plugin
