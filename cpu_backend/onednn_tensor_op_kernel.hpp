// The lifecycle every tensor-operation kernel (add/op/scale/set/transform/reduce tensor) shares,
// written once: can_implement and workspace_size answer from a process-wide cache of queries,
// run builds (or finds) a plan in the context's primitive cache and executes it. A kernel file
// supplies a Traits class:
//
//   struct traits {
//     using problem = tsrp...Problem;  using args = tsrp...Args;  using plan = ...;  // plan
//                                                    // derives from tensor_op_plan
//     static constexpr const char* name = "...";
//     static std::string check(const problem&);      // empty: implementable, else why not
//     static bool empty(const problem&);             // nothing to do (a zero-sized output)
//     static cache_key key(const problem&);
//     static void add_args(cache_key&, const args&); // the scalars a plan is built for
//     static std::vector<args> shapes();             // scalar shapes whose plans differ
//     static std::string check_args(const problem&, const args&);  // null pointers, sizes
//     static std::shared_ptr<plan> build(const dnnl::engine&, const problem&, const args&);
//                                                    // throws plugin_error(NOT_SUPPORTED)
//     // (optional, for kernels that choose between plans) build, choosing only among the plans
//     // that need at most `limit` workspace bytes; run() uses it, see run_workspace_limit.
//     static std::shared_ptr<plan> build_within(const dnnl::engine&, const problem&, const args&,
//                                               size_t limit);
//     static void instantiate(plan&);
//     static void execute(const plan&, context&, const problem&, const args&, void* workspace);
//   };
//
// The texts of its messages come from a Labels class (tensor_op_labels by default); the
// forward/backward primitive kernels (LRN, pooling, softmax, eltwise) run the same lifecycle with
// their own texts, through onednn_staged_kernel.hpp.
#pragma once

#include "onednn_abi_struct.hpp"
#include "onednn_context.hpp"
#include "onednn_errors.hpp"
#include "onednn_log.hpp"
#include "onednn_primitive_cache.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

namespace tessera::onednn {

// Values of a scale (alpha) and of an accumulation factor (beta) that lead oneDNN to different
// implementations, hence different workspaces: no scale / a scale, and no sum / a sum of scale 1
// / a sum of any other scale (some jit reorders and binaries take a sum post-op only with scale
// 1, so beta = 2 may fall to a reference implementation that needs a staging buffer while beta = 1
// does not). Which classes differ depends on the CPU's ISA, so the workspace query takes the
// largest plan over all of them rather than guessing.
//
// The classes are what the workspace query can know; the run builds its plan for the call's own
// scalars, and oneDNN may judge a scalar by more than its class. A NaN beta is one: the jit
// binary takes sum post-ops only when their scales compare equal (sum_requires_same_params), NaN
// != NaN, so op_tensor's direct plan falls to the reference binary and the staged plan (dense f32
// buffers, e.g. 191 bytes for a 4x4 f16/bf16 c) would be chosen although workspace_size, from the
// classes, said 0. More classes would not close that gap and would make every call reserve the
// staging buffers; so the run chooses only among plans that fit what workspace_size reported for
// the problem (build_within with run_workspace_limit), which the class's own plan always does.
inline constexpr float k_scale_classes[] = {1.0f, 2.0f};
inline constexpr float k_sum_classes[] = {0.0f, 1.0f, 0.5f};

// No limit: the workspace query's own plans.
inline constexpr size_t k_no_workspace_limit = std::numeric_limits<size_t>::max();

// Whether Traits has build_within (see the list above).
template <class Traits, class = void>
struct has_build_within : std::false_type {};
template <class Traits>
struct has_build_within<Traits, std::void_t<decltype(&Traits::build_within)>> : std::true_type {};

struct tensor_op_plan : cached_entry {
  size_t workspace_bytes = 0;
  std::string description;  // implementations chosen (impl_info_str), logged at debug level
};

// Where the lifecycle's messages and guard/annotate labels come from; each returns the text.
// These are the tensor ops' texts, named after the kernel.
template <class Traits>
struct tensor_op_labels {
  static std::string null_problem() { return std::string(Traits::name) + ": null or truncated problem"; }
  static std::string query() { return Traits::name; }            // can_implement's guard
  static std::string workspace_query() { return Traits::name; }  // workspace_size's guard
  static std::string workspace_null() {
    return std::string(Traits::name) + " workspace_size: null argument";
  }
  static std::string run() { return Traits::name; }  // run's guard
  static std::string creation() { return "oneDNN primitive creation"; }
  static std::string execution() { return "oneDNN execution"; }
};

template <class Traits, class Labels = tensor_op_labels<Traits>>
class tensor_op_kernel {
 public:
  using problem_t = typename Traits::problem;
  using args_t = typename Traits::args;
  using plan_t = typename Traits::plan;

  static constexpr tsrpKernel make(int32_t operation, uint32_t flags, const char* notes) {
    return tsrpKernel{sizeof(tsrpKernel), Traits::name, operation, flags, notes, nullptr,
                      can_implement, workspace_size, run, nullptr /* estimate_us */};
  }

 private:
  struct answer final : cached_entry {
    std::string reason;  // empty: implementable
    size_t workspace_bytes = 0;
  };

  // Independent of the scalars: the workspace is the largest over the scalar shapes.
  static std::shared_ptr<const answer> query(const problem_t& p) {
    static shared_cache answers;
    return answers.get_or_create<answer>(Traits::key(p).str(), [&] {
      auto q = std::make_shared<answer>();
      q->reason = Traits::check(p);
      if (!q->reason.empty() || Traits::empty(p)) return q;
      for (const args_t& shape : Traits::shapes()) {
        try {
          q->workspace_bytes =
              std::max(q->workspace_bytes, Traits::build(query_engine(), p, shape)->workspace_bytes);
        } catch (const plugin_error& e) {
          if (e.status() != TSRP_STATUS_NOT_SUPPORTED) throw;
          q->reason = e.what();
          return q;
        }
      }
      return q;
    });
  }

  // The most workspace a run's plan may take: what workspace_size reports for the problem (the
  // largest plan over the scalar classes), so that a call whose scalars oneDNN judges differently
  // from their class (k_scale_classes) still runs in the workspace the host sized from
  // workspace_size. The query's answer is cached, and the plan it bounds is built once per
  // (problem, scalars), so this costs nothing on the warm path. A problem the query declined
  // made no promise: no limit.
  static size_t run_workspace_limit(const problem_t& p) {
    auto q = query(p);
    return q->reason.empty() ? q->workspace_bytes : k_no_workspace_limit;
  }

  static int can_implement(void*, const void* problem, char* reason, size_t reason_size) {
    try {
      problem_t p;
      if (!read_struct(problem, p)) {
        write_message(reason, reason_size, Labels::null_problem());
        return 0;
      }
      auto q = query(p);
      if (!q->reason.empty()) {
        write_message(reason, reason_size, q->reason);
        return 0;
      }
      return 1;
    } catch (...) {
      status_from_current_exception(Labels::query().c_str(), reason, reason_size);
      return 0;
    }
  }

  static tsrpStatus_t workspace_size(void*, const void* problem, size_t* bytes) {
    char message[512];
    const tsrpStatus_t status = guard(Labels::workspace_query().c_str(), message, sizeof message, [&] {
      problem_t p;
      if (bytes == nullptr || !read_struct(problem, p)) throw_bad_param(Labels::workspace_null());
      auto q = query(p);
      if (!q->reason.empty()) throw_not_supported(q->reason);
      *bytes = q->workspace_bytes;
      return TSRP_STATUS_SUCCESS;
    });
    if (status != TSRP_STATUS_SUCCESS) log_message(TSRP_LOG_WARN, message);
    return status;
  }

  static tsrpStatus_t run(void*, void* handle, const void* problem, const void* args,
                          void* workspace, size_t workspace_bytes, char* message,
                          size_t message_size) {
    return guard(Labels::run().c_str(), message, message_size, [&] {
      problem_t p;
      args_t a;
      const std::string name = Traits::name;
      if (handle == nullptr) throw_bad_param(name + ": null context");
      if (!read_struct(problem, p) || !read_struct(args, a))
        throw_bad_param(name + ": null or truncated problem or arguments");
      std::string reason = Traits::check(p);
      if (!reason.empty()) throw_not_supported(name + " cannot run this problem: " + reason);
      if (Traits::empty(p)) return TSRP_STATUS_SUCCESS;
      reason = Traits::check_args(p, a);
      if (!reason.empty()) throw_bad_param(name + ": " + reason);

      context& ctx = as_context(handle);
      cache_key key = Traits::key(p);
      Traits::add_args(key, a);
      auto plan = ctx.cache().get_or_create<plan_t>(key.str(), [&] {
        std::shared_ptr<plan_t> made;
        if constexpr (has_build_within<Traits>::value)
          made = Traits::build_within(ctx.engine(), p, a, run_workspace_limit(p));
        else
          made = Traits::build(ctx.engine(), p, a);
        annotate(Labels::creation().c_str(), [&] { Traits::instantiate(*made); });
        log_message(TSRP_LOG_DEBUG, name + " plan: " + made->description);
        return made;
      });
      if (plan->workspace_bytes > 0 &&
          (workspace == nullptr || workspace_bytes < plan->workspace_bytes))
        throw_bad_param(name + " needs a workspace of " + std::to_string(plan->workspace_bytes) +
                        " bytes (see workspace_size), got " + std::to_string(workspace_bytes));
      annotate(Labels::execution().c_str(), [&] { Traits::execute(*plan, ctx, p, a, workspace); });
      return TSRP_STATUS_SUCCESS;
    });
  }
};

// Common checks of the tensor-op kernels.
// Empty, or why the tensor cannot be an output: strides that make two logical elements share
// memory (a zero stride on a dim > 1, or dims interleaved over each other), which would make
// in-place updates (y = alpha * y, sums with beta) apply twice.
std::string check_output_does_not_overlap(const tsrpTensor& t, const char* name);

// A view of `small` (each dim 1 or big's) with big's dims: stride 0 along the broadcast dims.
// oneDNN primitives read such a view as the broadcast tensor.
tsrpTensor broadcast_view(const tsrpTensor& small, const tsrpTensor& big);

}  // namespace tessera::onednn
