// The C-boundary half of every CUDA kernel, written once: a kernel file supplies a traits type
// with its checks and its launch, and make_kernel<Traits>() turns it into the tsrpKernel the
// plugin hands the host. The glue does what each kernel would otherwise repeat: null and
// struct_size checks of problem and args, "no CUDA device present", the compute-capability
// check, the current-device guard, the launch-error check and the exception -> status mapping.
//
// A traits type looks like this (all members static):
//   using problem_type = tsrpPoolingProblem;
//   using args_type = tsrpPoolingForwardArgs;
//   static constexpr const char* name = "pool_fwd_direct";
//   static constexpr int32_t operation = TSRP_OP_POOLING_FORWARD;
//   static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
//   static constexpr const char* notes = "...";            // numerical notes for users
//   static std::string support(const problem_type& p);     // empty = can run; else why not
//   static size_t workspace(const problem_type& p);        // optional: scratch bytes
//   static double estimate_us(const problem_type& p);      // optional: cost estimate
//   static void run(cuda_context& ctx, const problem_type& p, const args_type& a,
//                   void* workspace, size_t workspace_size);  // enqueue on ctx.stream()
// `run` is called only after `support` returned empty for the same problem, with the context's
// device current. It throws status_error for bad arguments (null pointers, a workspace smaller
// than `workspace` said) and must neither synchronize nor allocate, so that calls can be captured
// into a CUDA graph.
#pragma once

#include "cuda_context.hpp"
#include "cuda_device.hpp"
#include "cuda_errors.hpp"
#include "current_device_guard.hpp"

#include <tessera/plugin_abi.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace tessera::cuda {

using kernel_list = std::vector<tsrpKernel>;

namespace glue_detail {

template <typename T, typename = void>
struct has_workspace : std::false_type {};
template <typename T>
struct has_workspace<T, std::void_t<decltype(T::workspace(std::declval<const typename T::problem_type&>()))>>
    : std::true_type {};

template <typename T, typename = void>
struct has_estimate : std::false_type {};
template <typename T>
struct has_estimate<T, std::void_t<decltype(T::estimate_us(std::declval<const typename T::problem_type&>()))>>
    : std::true_type {};

// The struct behind `pointer`, after the checks every ABI struct needs; throws BAD_PARAM.
template <typename Struct>
const Struct& checked_struct(const void* pointer, const char* what) {
  if (pointer == nullptr) throw status_error(TSRP_STATUS_BAD_PARAM, std::string(what) + " is null");
  const auto& s = *static_cast<const Struct*>(pointer);
  if (s.struct_size < sizeof(Struct)) {
    throw status_error(TSRP_STATUS_BAD_PARAM, std::string(what) + " struct_size " + std::to_string(s.struct_size) +
                                                  " is smaller than " + std::to_string(sizeof(Struct)));
  }
  return s;
}

// NOT_SUPPORTED with the traits' reason, so a problem the kernel cannot run is declined rather
// than run wrongly even when the host skipped can_implement.
template <typename Traits>
const typename Traits::problem_type& supported_problem(const void* problem) {
  const auto& p = checked_struct<typename Traits::problem_type>(problem, "problem");
  const std::string why = Traits::support(p);
  if (!why.empty()) throw status_error(TSRP_STATUS_NOT_SUPPORTED, why);
  return p;
}

template <typename Traits>
int can_implement(void*, const void* problem, char* reason, size_t reason_size) noexcept {
  try {
    std::string why;
    if (problem == nullptr) {
      why = "problem is null";
    } else if (static_cast<const typename Traits::problem_type*>(problem)->struct_size <
               sizeof(typename Traits::problem_type)) {
      why = "problem struct_size is smaller than this kernel's (" +
            std::to_string(sizeof(typename Traits::problem_type)) + ")";
    } else {
      why = Traits::support(*static_cast<const typename Traits::problem_type*>(problem));
    }
    if (why.empty() && visible_device_count() == 0) why = "no CUDA device present";
    if (why.empty()) return 1;
    write_text(reason, reason_size, std::string(Traits::name) + ": " + why);
    return 0;
  } catch (...) {
    write_text(reason, reason_size, std::string(Traits::name) + ": internal error while checking the problem");
    return 0;
  }
}

template <typename Traits>
tsrpStatus_t workspace_size(void*, const void* problem, size_t* bytes) noexcept {
  if (bytes == nullptr) return TSRP_STATUS_BAD_PARAM;
  try {
    *bytes = Traits::workspace(supported_problem<Traits>(problem));
    return TSRP_STATUS_SUCCESS;
  } catch (const status_error& e) {
    return e.status();
  } catch (...) {
    return TSRP_STATUS_INTERNAL_ERROR;
  }
}

// Asked only after can_implement said yes; a failure is "no estimate".
template <typename Traits>
double estimate_us(void*, const void* problem) noexcept {
  try {
    return Traits::estimate_us(supported_problem<Traits>(problem));
  } catch (...) {
    return -1.0;
  }
}

template <typename Traits>
tsrpStatus_t run(void*, void* context, const void* problem, const void* args, void* workspace,
                 size_t workspace_bytes, char* message, size_t message_size) noexcept {
  return call_with_message(message, message_size, [&] {
    try {
      cuda_context& ctx = context_from_handle(context);
      const auto& p = supported_problem<Traits>(problem);
      const auto& a = checked_struct<typename Traits::args_type>(args, "arguments");
      if (!ctx.can_run_plugin_code()) {
        throw status_error(TSRP_STATUS_NOT_SUPPORTED,
                           "needs compute capability 9.0 or newer; CUDA device " +
                               std::to_string(ctx.device_ordinal()) + " is sm_" +
                               std::to_string(ctx.compute_capability_major()) +
                               std::to_string(ctx.compute_capability_minor()));
      }
      if constexpr (has_workspace<Traits>::value) {
        const size_t needed = Traits::workspace(p);
        if (needed > 0 && (workspace == nullptr || workspace_bytes < needed)) {
          throw status_error(TSRP_STATUS_BAD_PARAM, "workspace of " + std::to_string(workspace_bytes) +
                                                        " bytes is smaller than the " + std::to_string(needed) +
                                                        " it needs");
        }
      }
      current_device_guard on_device(ctx.device_ordinal());
      Traits::run(ctx, p, a, workspace, workspace_bytes);
      check_cuda(cudaGetLastError(), "launching");
    } catch (const status_error& e) {
      throw status_error(e.status(), std::string(Traits::name) + ": " + e.what());
    }
  });
}

}  // namespace glue_detail

template <typename Traits>
tsrpKernel make_kernel() noexcept {
  tsrpKernel k{};
  k.struct_size = sizeof(tsrpKernel);
  k.name = Traits::name;
  k.operation = Traits::operation;
  k.flags = Traits::flags;
  k.notes = Traits::notes;
  k.user_data = nullptr;
  k.can_implement = glue_detail::can_implement<Traits>;
  if constexpr (glue_detail::has_workspace<Traits>::value) k.workspace_size = glue_detail::workspace_size<Traits>;
  k.run = glue_detail::run<Traits>;
  if constexpr (glue_detail::has_estimate<Traits>::value) k.estimate_us = glue_detail::estimate_us<Traits>;
  return k;
}

// A null pointer for a tensor with elements is a bad argument; `name` is the argument's name.
inline void require_pointer(const void* pointer, int64_t elements, const char* name) {
  if (pointer == nullptr && elements > 0) {
    throw status_error(TSRP_STATUS_BAD_PARAM, std::string(name) + " is null");
  }
}

}  // namespace tessera::cuda
